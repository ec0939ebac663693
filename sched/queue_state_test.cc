// GrantSums against a second method: after random arrivals (mostly in grant
// order, some out of it, as jobs queued again are) and departures, what the
// members before each one ask for equals the sum over the members a sort by
// grant order puts before it, and the total the sum over all.
#include "sched/queue_state.h"

#include <algorithm>
#include <list>
#include <random>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>

namespace meridian::sched {
namespace {

ResourceAmounts Amounts(int64_t gpus, int64_t vcpus, int64_t ram, int64_t cost) {
  ResourceAmounts r;
  r.v[ResourceAmounts::kGpus] = gpus;
  r.v[ResourceAmounts::kVcpus] = vcpus;
  r.v[ResourceAmounts::kRam] = ram;
  r.v[ResourceAmounts::kCost] = cost;
  return r;
}

void ExpectEqual(const ResourceAmounts& a, const ResourceAmounts& b, const char* what, JobId id) {
  for (int r = 0; r < ResourceAmounts::kCount; ++r) {
    ASSERT_EQ(a.v[r], b.v[r]) << what << " of job " << id.value() << ", resource " << r;
  }
}

// The second method: what a sort by grant order puts before each member,
// summed, and the sum of all.
void ExpectSumsOfASort(const GrantSums& sums, const std::vector<QueueMember*>& live) {
  std::vector<QueueMember*> sorted = live;
  std::sort(sorted.begin(), sorted.end(), GrantOrder{});
  ResourceAmounts running;
  for (QueueMember* m : sorted) {
    ExpectEqual(sums.Before(*m), running, "before", m->job->id);
    running += m->demand;
  }
  ExpectEqual(sums.total(), running, "total", JobId(0));
}

TEST(GrantSums, BeforeEachMemberIsTheSumOfThoseAheadInGrantOrder) {
  std::mt19937 rng(11);
  std::list<QueuedJob> jobs;  // stable addresses
  std::list<QueueMember> members;
  std::vector<QueueMember*> live;
  GrantSums sums;
  UnixSeconds clock = 1000;
  uint32_t next_id = 0;
  auto check = [&] { ExpectSumsOfASort(sums, live); };
  for (int step = 0; step < 6000; ++step) {
    const uint32_t op = rng() % 10;
    if (op < 6 || live.empty()) {
      QueuedJob& j = jobs.emplace_back();
      j.id = JobId(next_id++);
      // Mostly later submissions; one in five from the past (queued again).
      clock += static_cast<UnixSeconds>(rng() % 5);
      j.submitted = rng() % 5 == 0 ? clock - static_cast<UnixSeconds>(rng() % 500) : clock;
      j.sequence = rng() % 3;
      QueueMember& m = members.emplace_back();
      m.job = &j;
      m.demand = Amounts(rng() % 65, rng() % 129, rng() % 100000, rng() % 5000000);
      sums.Add(&m);
      live.push_back(&m);
    } else {
      const size_t k = rng() % live.size();
      sums.Remove(live[k]);
      live.erase(live.begin() + static_cast<std::ptrdiff_t>(k));
    }
    if (step % 97 == 0) check();
  }
  check();
  // Emptied and filled again.
  for (QueueMember* m : live) sums.Remove(m);
  live.clear();
  check();
}

// Arrivals a few places out of grant order, as through replicas that take
// the time in the same second: each is put among the last members (the tail
// after it taken off and appended again), with holes among them.
TEST(GrantSums, ArrivalsAFewPlacesOutOfOrderSumAsASortPutsThem) {
  std::mt19937 rng(29);
  std::list<QueuedJob> jobs;
  std::list<QueueMember> members;
  std::vector<QueueMember*> live;
  GrantSums sums;
  UnixSeconds clock = 5000;
  uint32_t next_id = 0;
  int out_of_order = 0;
  auto check = [&] { ExpectSumsOfASort(sums, live); };
  const QueuedJob* newest = nullptr;
  for (int step = 0; step < 4000; ++step) {
    if (rng() % 4 != 0 || live.empty()) {
      QueuedJob& j = jobs.emplace_back();
      j.id = JobId(next_id++);
      clock += static_cast<UnixSeconds>(rng() % 8 == 0);
      j.submitted = clock - static_cast<UnixSeconds>(rng() % 2);  // this second or the last
      j.sequence = next_id;
      if (newest && std::tie(j.submitted, j.sequence) < std::tie(newest->submitted, newest->sequence)) {
        ++out_of_order;
      } else {
        newest = &j;
      }
      QueueMember& m = members.emplace_back();
      m.job = &j;
      m.demand = Amounts(rng() % 9, rng() % 33, rng() % 5000, rng() % 90000);
      sums.Add(&m);
      live.push_back(&m);
    } else {
      // Mostly the newest leave (holes at the end), sometimes any.
      const size_t k = rng() % 2 == 0 ? live.size() - 1 - rng() % std::min<size_t>(live.size(), 4)
                                      : rng() % live.size();
      sums.Remove(live[k]);
      live.erase(live.begin() + static_cast<std::ptrdiff_t>(k));
    }
    if (step % 13 == 0) check();
  }
  check();
  EXPECT_GT(out_of_order, 500);  // the case under test came often
}

}  // namespace
}  // namespace meridian::sched
