// KeptWaits against std::unordered_map: the same random inserts, updates and
// erases (ids drawn from a small range, so runs collide and wrap around the
// table's end) leave the same entries in both.
#include "sched/kept_waits.h"

#include <random>
#include <unordered_map>

#include <gtest/gtest.h>

namespace meridian::sched {
namespace {

void ExpectSame(KeptWaits& t, const std::unordered_map<uint32_t, int64_t>& ref, uint32_t ids) {
  ASSERT_EQ(t.size(), ref.size());
  for (uint32_t id = 0; id < ids; ++id) {
    KeptWait* k = t.Find(JobId(id));
    auto it = ref.find(id);
    ASSERT_EQ(k != nullptr, it != ref.end()) << "job " << id;
    if (k) {
      EXPECT_EQ(k->victims_placed, it->second) << "job " << id;
    }
  }
}

TEST(KeptWaits, RandomInsertsAndErasesMatchAHashMap) {
  for (uint32_t ids : {7u, 100u, 5000u}) {
    std::mt19937 rng(ids);
    KeptWaits t;
    std::unordered_map<uint32_t, int64_t> ref;
    for (int step = 0; step < 50000; ++step) {
      const uint32_t id = static_cast<uint32_t>(rng() % ids);
      switch (rng() % 3) {
        case 0:
        case 1: {
          const int64_t v = static_cast<int64_t>(rng() % 1000);
          t.Put(JobId(id)).victims_placed = v;
          ref[id] = v;
          break;
        }
        case 2:
          t.Erase(JobId(id));
          ref.erase(id);
          break;
      }
      if (step % 4999 == 0) ExpectSame(t, ref, ids);
    }
    ExpectSame(t, ref, ids);
    // EraseIf drops exactly the entries it is told to.
    t.EraseIf([](const KeptWait& k) { return k.victims_placed % 2 == 0; });
    std::erase_if(ref, [](const auto& e) { return e.second % 2 == 0; });
    ExpectSame(t, ref, ids);
  }
}

TEST(KeptWaits, PutOverwritesWithAnEmptyEntry) {
  KeptWaits t;
  t.Put(JobId(3)).victims_placed = 9;
  EXPECT_EQ(t.Put(JobId(3)).victims_placed, 0);
  EXPECT_EQ(t.size(), 1u);
  EXPECT_EQ(t.Find(JobId(4)), nullptr);
}

}  // namespace
}  // namespace meridian::sched
