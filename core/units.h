// Quantities with their unit in the type. Money is integer micro-dollars and
// carbon integer grams, so sums in the ledger are exact; rates and estimates
// (TFLOPS, hours, kWh) stay double because they are models, not accounts.
#pragma once

#include <cmath>
#include <compare>
#include <cstdint>
#include <string>

#include "core/round.h"

namespace meridian {

// US dollars as integer micro-dollars (1e-6 USD).
class Money {
 public:
  constexpr Money() = default;
  static constexpr Money FromMicros(int64_t micros) { return Money(micros); }
  // Rounds to the nearest micro-dollar.
  static Money FromDollars(double usd) { return Money(RoundToInt64(usd * 1e6)); }

  constexpr int64_t micros() const { return micros_; }
  double dollars() const { return static_cast<double>(micros_) / 1e6; }

  // Price per hour times a duration in hours, rounded to the micro-dollar
  // (as std::llround, without the library call: core/round.h).
  Money Times(double factor) const {
    return Money(RoundToInt64(static_cast<double>(micros_) * factor));
  }

  constexpr Money operator+(Money o) const { return Money(micros_ + o.micros_); }
  constexpr Money operator-(Money o) const { return Money(micros_ - o.micros_); }
  constexpr Money& operator+=(Money o) {
    micros_ += o.micros_;
    return *this;
  }
  constexpr auto operator<=>(const Money&) const = default;

  // "$1,234.57"-free plain form: "1234.57" with two decimals.
  std::string ToString() const;

 private:
  constexpr explicit Money(int64_t micros) : micros_(micros) {}
  int64_t micros_ = 0;
};

// Carbon dioxide equivalent in integer grams.
class Co2Grams {
 public:
  constexpr Co2Grams() = default;
  static constexpr Co2Grams FromGrams(int64_t g) { return Co2Grams(g); }
  static Co2Grams FromKilograms(double kg) { return Co2Grams(std::llround(kg * 1000.0)); }
  constexpr int64_t grams() const { return grams_; }
  double kilograms() const { return static_cast<double>(grams_) / 1000.0; }
  constexpr Co2Grams operator+(Co2Grams o) const { return Co2Grams(grams_ + o.grams_); }
  constexpr Co2Grams& operator+=(Co2Grams o) {
    grams_ += o.grams_;
    return *this;
  }
  constexpr auto operator<=>(const Co2Grams&) const = default;

 private:
  constexpr explicit Co2Grams(int64_t g) : grams_(g) {}
  int64_t grams_ = 0;
};

inline constexpr double kBytesPerGiB = 1024.0 * 1024.0 * 1024.0;
inline constexpr double kBytesPerGB = 1e9;

}  // namespace meridian
