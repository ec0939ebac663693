// Rng: the scheduler's injected source of randomness, a SplitMix64 stream.
// Its output is defined by the algorithm alone (no std:: distributions), so a
// seed gives the same decisions on every platform and standard library.
#pragma once

#include <cstdint>

namespace meridian::sched {

class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  uint64_t Next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  // Uniform in [0, n) (n > 0), by rejection so it has no modulo bias.
  uint64_t Below(uint64_t n) {
    uint64_t limit = ~0ull - (~0ull % n);
    uint64_t x;
    do x = Next(); while (x >= limit);
    return x % n;
  }
  // Uniform in [0, 1).
  double Unit() { return static_cast<double>(Next() >> 11) * 0x1.0p-53; }

  // A seed for one decision: the same (seed, job, time) gives the same stream.
  static uint64_t Mix(uint64_t seed, uint64_t a, uint64_t b) {
    Rng r(seed ^ (a * 0x9e3779b97f4a7c15ull) ^ (b + 0x632be59bd9b4e019ull));
    return r.Next();
  }

 private:
  uint64_t state_;
};

}  // namespace meridian::sched
