#include "core/ledger.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <span>
#include <tuple>
#include <vector>

namespace meridian {
namespace {

// Two nodes in pool 0: node 0 has 8 whole GPUs, 64 vCPUs, 512 GiB; node 1 has
// 8 GPUs of which 6 and 7 are MIG-partitioned as 3g(0..3) + 2g(4..5) + 2g(...).
Ledger TwoNodes() {
  NodeCapacity a{8, 0, {}, 64, 512 * 1024, {PoolId(0)}};
  NodeCapacity b{8, 0b11000000, {{0, 4}, {4, 2}, {6, 2}}, 96, 1024 * 1024, {PoolId(0)}};
  auto l = Ledger::Create({a, b}, 1);
  EXPECT_TRUE(l.ok()) << l.status().ToString();
  return std::move(l).value();
}

Allocation Whole(uint32_t job, uint32_t node, uint64_t gpus, int vcpus = 8, int64_t ram = 1024) {
  Allocation a;
  a.job = JobId(job);
  a.nodes.push_back({NodeId(node), gpus, std::nullopt, vcpus, ram});
  a.start = 0;
  a.end = 3600;
  return a;
}

Allocation Mig(uint32_t job, uint8_t gpu, MigShape shape) {
  Allocation a;
  a.job = JobId(job);
  a.nodes.push_back({NodeId(1), 0, MigShare{gpu, shape}, 4, 1024});
  a.end = 100;
  return a;
}

TEST(LedgerTest, ReserveTakesAndUnreserveReturnsCapacity) {
  Ledger l = TwoNodes();
  EXPECT_EQ(l.free_gpu_count(NodeId(1)), 6);  // 8 - 2 MIG-mode GPUs
  ASSERT_TRUE(l.Reserve(Whole(1, 0, 0b1111, 16, 2048)).ok());
  EXPECT_EQ(l.free_gpu_count(NodeId(0)), 4);
  EXPECT_EQ(l.free_vcpus(NodeId(0)), 64 - 16);
  EXPECT_EQ(l.free_ram_mib(NodeId(0)), 512 * 1024 - 2048);
  l.Unreserve(JobId(1));
  EXPECT_EQ(l.free_gpu_count(NodeId(0)), 8);
  EXPECT_EQ(l.free_vcpus(NodeId(0)), 64);
  EXPECT_EQ(l.allocation_count(), 0u);
}

TEST(LedgerTest, ReserveIsIdempotentAndConflictsAreErrors) {
  Ledger l = TwoNodes();
  ASSERT_TRUE(l.Reserve(Whole(1, 0, 0b1)).ok());
  EXPECT_TRUE(l.Reserve(Whole(1, 0, 0b1)).ok());  // same allocation again: no-op
  EXPECT_EQ(l.free_gpu_count(NodeId(0)), 7);
  Status st = l.Reserve(Whole(1, 0, 0b10));         // same job, different GPUs
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(l.free_gpu_count(NodeId(0)), 7);
  l.Unreserve(JobId(1));
  l.Unreserve(JobId(1));   // twice: no-op
  l.Unreserve(JobId(42));  // unknown: no-op
  EXPECT_EQ(l.free_gpu_count(NodeId(0)), 8);
}

struct OverCase {
  const char* name;
  Allocation second;
  StatusCode code;
};

TEST(LedgerTest, NeverOverAllocates) {
  // Job 1 holds GPU 0, 60 of 64 vCPUs and 500 GiB of node 0, and the 3g
  // instance (slices 0..3) of MIG GPU 6 on node 1.
  const OverCase cases[] = {
      {"same GPU", Whole(2, 0, 0b1, 1, 1), StatusCode::kUnschedulable},
      {"vCPUs: 60 + 8 > 64", Whole(2, 0, 0b10, 8, 1), StatusCode::kUnschedulable},
      {"RAM: 500 + 13 GiB > 512", Whole(2, 0, 0b10, 1, 13 * 1024), StatusCode::kUnschedulable},
      {"GPU beyond 8", Whole(2, 0, 1ull << 8, 1, 1), StatusCode::kInvalidArgument},
      {"MIG GPU whole", Whole(2, 1, 1ull << 6, 1, 1), StatusCode::kInvalidArgument},
      {"MIG slice twice", Mig(2, 6, {0, 4}), StatusCode::kUnschedulable},
      {"MIG shape not in layout", Mig(2, 6, {4, 4}), StatusCode::kInvalidArgument},
      {"MIG on a whole GPU", Mig(2, 0, {0, 4}), StatusCode::kInvalidArgument},
  };
  for (const OverCase& c : cases) {
    Ledger l = TwoNodes();
    ASSERT_TRUE(l.Reserve(Whole(1, 0, 0b1, 60, 500 * 1024)).ok());
    ASSERT_TRUE(l.Reserve(Mig(3, 6, {0, 4})).ok());
    Status st = l.Reserve(c.second);
    EXPECT_EQ(st.code(), c.code) << c.name << ": " << st.ToString();
    EXPECT_EQ(l.allocation_count(), 2u) << c.name;
    EXPECT_EQ(l.free_gpu_count(NodeId(0)), 7) << c.name;
    EXPECT_EQ(l.free_vcpus(NodeId(0)), 4) << c.name;
  }
}

TEST(LedgerTest, MigInstancesAreTrackedPerSlice) {
  Ledger l = TwoNodes();
  EXPECT_EQ(l.largest_free_mig_span(NodeId(1)), 4);
  ASSERT_TRUE(l.Reserve(Mig(1, 6, {0, 4})).ok());
  EXPECT_EQ(l.largest_free_mig_span(NodeId(1)), 4);  // GPU 7's 3g is still free
  ASSERT_TRUE(l.Reserve(Mig(2, 7, {0, 4})).ok());
  EXPECT_EQ(l.largest_free_mig_span(NodeId(1)), 2);
  EXPECT_FALSE(l.MigFree(NodeId(1), 6, {0, 4}));
  EXPECT_TRUE(l.MigFree(NodeId(1), 6, {4, 2}));
  EXPECT_EQ(l.mig_used(NodeId(1), 6), 0b00001111);
  l.Unreserve(JobId(1));
  EXPECT_TRUE(l.MigFree(NodeId(1), 6, {0, 4}));
}

TEST(LedgerTest, GangIsReservedWholeOrNotAtAll) {
  Ledger l = TwoNodes();
  ASSERT_TRUE(l.Reserve(Whole(1, 1, 0b1)).ok());
  Allocation gang = Whole(2, 0, 0xff);
  gang.nodes.push_back({NodeId(1), 0b11, std::nullopt, 8, 1024});  // GPU 0 of node 1 is taken
  EXPECT_FALSE(l.Reserve(gang).ok());
  EXPECT_EQ(l.free_gpu_count(NodeId(0)), 8);  // node 0 untouched
  gang.nodes[1].gpus = 0b110;
  ASSERT_TRUE(l.Reserve(gang).ok());
  EXPECT_EQ(l.free_gpu_count(NodeId(0)), 0);
  EXPECT_EQ(l.free_gpu_count(NodeId(1)), 3);  // 6 whole - 1 - 2
}

TEST(LedgerTest, ElasticLeasesAreRecorded) {
  Ledger l = TwoNodes();
  Allocation a;
  a.job = JobId(9);
  a.elastic = ElasticLease{OfferingId(17), 2, PricingModel::kSpot, Money::FromDollars(7.5)};
  a.start = 100;
  a.end = 7300;
  ASSERT_TRUE(l.Reserve(a).ok());
  ASSERT_NE(l.Find(JobId(9)), nullptr);
  EXPECT_EQ(l.Find(JobId(9))->elastic->pricing, PricingModel::kSpot);
  EXPECT_EQ(l.EarliestEnds(1).at(0).first, 7300);
  a.elastic->instances = 0;
  a.job = JobId(10);
  EXPECT_EQ(l.Reserve(a).code(), StatusCode::kInvalidArgument);
}

TEST(LedgerTest, IndexFindsNodesWithRoomInOrder) {
  Ledger l = TwoNodes();
  EXPECT_EQ(l.NextWithFreeGpus(PoolId(0), 0, 7), 0);   // node 1 has only 6 whole GPUs
  EXPECT_EQ(l.NextWithFreeGpus(PoolId(0), 1, 7), -1);
  ASSERT_TRUE(l.Reserve(Whole(1, 0, 0b111)).ok());     // node 0 down to 5
  EXPECT_EQ(l.NextWithFreeGpus(PoolId(0), 0, 6), 1);
  EXPECT_EQ(l.NextWithFreeMig(PoolId(0), 0, 4), 1);
  EXPECT_EQ(l.NextWithFreeVcpus(PoolId(0), 0, 90), 1);
}

// Elastic leases of jobs 1..n with random ends (ties included), reserved and
// released in random order: EarliestEnds always lists the live ones by (end,
// job), as a sorted copy does, also on a copy of the ledger and after a move.
TEST(LedgerTest, EarliestEndsFollowReservesAndReleases) {
  Ledger l = TwoNodes();
  std::vector<std::pair<UnixSeconds, JobId>> live;  // the reference, kept sorted
  uint64_t x = 88172645463325252ull;                // xorshift64: a fixed sequence
  auto next = [&] {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return x;
  };
  auto lease = [](uint32_t job, UnixSeconds end) {
    Allocation a;
    a.job = JobId(job);
    a.elastic = ElasticLease{OfferingId(0), 1, PricingModel::kOnDemand, Money::FromMicros(1)};
    a.end = end;
    return a;
  };
  auto check = [&](const Ledger& ledger, const char* when) {
    std::vector<std::pair<UnixSeconds, JobId>> sorted = live;
    std::sort(sorted.begin(), sorted.end());
    ASSERT_EQ(ledger.EarliestEnds(sorted.size() + 5), sorted) << when;
    if (sorted.size() > 3) {
      sorted.resize(3);
      ASSERT_EQ(ledger.EarliestEnds(3), sorted) << when;
    }
    ASSERT_EQ(ledger.allocation_count(), live.size()) << when;
  };
  for (int step = 0; step < 4000; ++step) {
    if (live.empty() || next() % 3 != 0) {
      const uint32_t job = static_cast<uint32_t>(step + 1);
      const UnixSeconds end = static_cast<UnixSeconds>(next() % 50);  // many ties
      ASSERT_TRUE(l.Reserve(lease(job, end)).ok());
      live.emplace_back(end, JobId(job));
    } else {
      const size_t k = next() % live.size();
      std::optional<Allocation> taken = l.Take(live[k].second);
      ASSERT_TRUE(taken.has_value());
      EXPECT_EQ(taken->end, live[k].first);
      live.erase(live.begin() + static_cast<ptrdiff_t>(k));
    }
    if (step % 97 == 0) check(l, "live");
  }
  check(l, "after the run");
  Ledger copy = l;  // a copy's heap points at its own allocations
  l = TwoNodes();
  check(copy, "copy");
  ASSERT_FALSE(live.empty());
  copy.Unreserve(live.front().second);
  live.erase(live.begin());
  check(copy, "copy after a release");
  Ledger moved = std::move(copy);
  check(moved, "moved");
  EXPECT_TRUE(l.EarliestEnds(10).empty());
  EXPECT_FALSE(l.Take(JobId(1)).has_value());
}

// Everything a reader of the ledger can see, for comparing two states.
struct Seen {
  std::vector<uint64_t> free_gpus;
  std::vector<int> free_vcpus;
  std::vector<int64_t> free_ram;
  std::vector<int> largest_mig;
  std::vector<std::vector<uint8_t>> mig_used;  // per node, per GPU
  std::vector<std::vector<std::tuple<uint32_t, UnixSeconds, int, int, int, int64_t>>> holders;
  std::vector<uint32_t> jobs;  // allocations() in its order
  std::vector<std::pair<UnixSeconds, JobId>> ends;
  std::vector<uint32_t> freed;
  uint64_t stamp = 0;
  std::array<int, 4> held{};
  std::array<int64_t, 4> placed{};
  std::vector<int64_t> next_with_gpus;  // NextWithFreeGpus(pool 0, from 0, k), k = 1..8
  bool operator==(const Seen&) const = default;
};

Seen SeenOf(const Ledger& l) {
  Seen s;
  for (uint32_t n = 0; n < l.node_count(); ++n) {
    const NodeId id(n);
    s.free_gpus.push_back(l.free_gpus(id));
    s.free_vcpus.push_back(l.free_vcpus(id));
    s.free_ram.push_back(l.free_ram_mib(id));
    s.largest_mig.push_back(l.largest_free_mig_span(id));
    s.mig_used.emplace_back();
    for (int g = 0; g < l.capacity(id).gpus; ++g) s.mig_used.back().push_back(l.mig_used(id, g));
    s.holders.emplace_back();
    for (const Ledger::Holder& h : l.holders(id)) {
      s.holders.back().emplace_back(h.job.value(), h.end, h.gpus, h.mig_span, h.vcpus, h.ram_mib);
    }
  }
  for (const auto& [job, a] : l.allocations()) s.jobs.push_back(job.value());
  s.ends = l.EarliestEnds(100);
  s.freed.assign(l.FreedSince(0)->begin(), l.FreedSince(0)->end());
  s.stamp = l.stamp();
  for (int p = 0; p < 4; ++p) {
    s.held[p] = l.preemptible_held(static_cast<Priority>(p));
    s.placed[p] = l.preemptible_placed(static_cast<Priority>(p));
  }
  for (int k = 1; k <= 8; ++k) s.next_with_gpus.push_back(l.NextWithFreeGpus(PoolId(0), 0, k));
  return s;
}

std::vector<uint32_t> HolderJobs(const Ledger& l, uint32_t node) {
  std::vector<uint32_t> out;
  for (const Ledger::Holder& h : l.holders(NodeId(node))) out.push_back(h.job.value());
  return out;
}

// A job set aside reads as taken, and the ledger is exactly as before once
// the guard ends; Take then Reserve would not give that back.
TEST(LedgerTest, SetAsideFreesTheJobAndRestoresTheLedgerExactly) {
  Ledger l = TwoNodes();
  // Node 0: job 1 GPUs 0-1, job 2 GPUs 2-3, job 3 GPU 4 (reserved in that
  // order). Job 2 is a low-priority preemptible gang that also holds GPU 0 of
  // node 1; job 4 the 3g instance (slices 0..3) of MIG GPU 6 on node 1.
  ASSERT_TRUE(l.Reserve(Whole(1, 0, 0b11)).ok());  // 8 vCPUs, 1024 MiB, ends 3600
  Allocation gang = Whole(2, 0, 0b1100, 16, 4096);
  gang.nodes.push_back({NodeId(1), 0b1, std::nullopt, 4, 2048});
  gang.end = 7200;
  gang.priority = Priority::kLow;
  gang.preemptible = true;
  ASSERT_TRUE(l.Reserve(gang).ok());
  Allocation third = Whole(3, 0, 0b10000);
  third.end = 1800;
  ASSERT_TRUE(l.Reserve(third).ok());
  ASSERT_TRUE(l.Reserve(Mig(4, 6, {0, 4})).ok());  // ends 100
  ASSERT_TRUE(l.Take(JobId(3)).has_value());       // a free already logged: node 0
  ASSERT_TRUE(l.Reserve(third).ok());              // holders of node 0: 1, 2, 3
  ASSERT_EQ(HolderJobs(l, 0), (std::vector<uint32_t>{1, 2, 3}));
  const Seen before = SeenOf(l);
  ASSERT_EQ(before.freed, (std::vector<uint32_t>{0}));
  ASSERT_EQ(before.held[static_cast<size_t>(Priority::kLow)], 1);
  ASSERT_EQ(before.placed[static_cast<size_t>(Priority::kLow)], 1);
  {
    Ledger::SetAside aside(l, JobId(2));
    // Node 0: 8 GPUs - 2 (job 1) - 1 (job 3) = 5 free: GPUs 2, 3, 5, 6, 7;
    // vCPUs 64 - 8 - 8 = 48; RAM 524,288 - 1,024 - 1,024 = 522,240 MiB.
    EXPECT_EQ(l.free_gpus(NodeId(0)), 0b11101100u);
    EXPECT_EQ(l.free_gpu_count(NodeId(0)), 5);
    EXPECT_EQ(l.free_vcpus(NodeId(0)), 48);
    EXPECT_EQ(l.free_ram_mib(NodeId(0)), 522240);
    // Node 1: its 6 whole GPUs free again; vCPUs 96 - 4 (job 4) = 92.
    EXPECT_EQ(l.free_gpu_count(NodeId(1)), 6);
    EXPECT_EQ(l.free_vcpus(NodeId(1)), 92);
    EXPECT_EQ(HolderJobs(l, 0), (std::vector<uint32_t>{1, 3}));
    EXPECT_EQ(HolderJobs(l, 1), (std::vector<uint32_t>{4}));
    EXPECT_EQ(l.Find(JobId(2)), nullptr);
    EXPECT_NE(l.Find(JobId(1)), nullptr);
    EXPECT_EQ(l.allocation_count(), 3u);
    std::vector<uint32_t> jobs;
    for (const auto& [job, a] : l.allocations()) jobs.push_back(job.value());
    std::sort(jobs.begin(), jobs.end());
    EXPECT_EQ(jobs, (std::vector<uint32_t>{1, 3, 4}));
    EXPECT_EQ(l.allocations().size(), 3u);
    // Ends by (end, job): 100 (job 4), 1800 (job 3), 3600 (job 1).
    EXPECT_EQ(l.EarliestEnds(10), (std::vector<std::pair<UnixSeconds, JobId>>{
                                      {100, JobId(4)}, {1800, JobId(3)}, {3600, JobId(1)}}));
    // The gang's two nodes appended to the freed log, a new stamp.
    EXPECT_EQ(l.freed_count(), 3u);
    const std::span<const uint32_t> since = *l.FreedSince(1);
    EXPECT_EQ(std::vector<uint32_t>(since.begin(), since.end()), (std::vector<uint32_t>{0, 1}));
    EXPECT_NE(l.stamp(), before.stamp);
    EXPECT_EQ(l.preemptible_held(Priority::kLow), 0);
    EXPECT_EQ(l.preemptible_placed(Priority::kLow), 1);  // placed since made: unchanged
    // 5 free GPUs on node 0 (position 0) now, 3 before; node 1 has 6.
    EXPECT_EQ(l.NextWithFreeGpus(PoolId(0), 0, 5), 0);
    EXPECT_EQ(l.NextWithFreeGpus(PoolId(0), 0, 6), 1);
    // A decision made now may check the gang's shares again: they are free.
    EXPECT_TRUE(l.CanReserve(gang).ok());
  }
  EXPECT_TRUE(SeenOf(l) == before);
  EXPECT_EQ(HolderJobs(l, 0), (std::vector<uint32_t>{1, 2, 3}));
  EXPECT_EQ(l.Reserve(Whole(5, 0, 0b100)).code(), StatusCode::kUnschedulable);  // GPU 2 is job 2's again

  // Take then Reserve frees and holds the same capacity but is not the same
  // ledger: job 2's holder goes behind job 3's, and it counts as placed twice.
  Ledger again = l;
  ASSERT_TRUE(again.Take(JobId(2)).has_value());
  ASSERT_TRUE(again.Reserve(gang).ok());
  EXPECT_EQ(HolderJobs(again, 0), (std::vector<uint32_t>{1, 3, 2}));
  EXPECT_EQ(again.preemptible_placed(Priority::kLow), 2);

  // A job that holds nothing: the guard changes nothing.
  { Ledger::SetAside none(l, JobId(99)); }
  EXPECT_TRUE(SeenOf(l) == before);
}

TEST(LedgerTest, AlignedMigStartsFollowNvidiaRule) {
  EXPECT_EQ(AlignedMigStarts(1, 7), (std::vector<uint8_t>{0, 1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(AlignedMigStarts(2, 4), (std::vector<uint8_t>{0, 2, 4, 6}));
  EXPECT_EQ(AlignedMigStarts(2, 3), (std::vector<uint8_t>{0, 2, 4}));
  EXPECT_EQ(AlignedMigStarts(4, 2), (std::vector<uint8_t>{0, 4}));
  EXPECT_EQ(AlignedMigStarts(8, 1), (std::vector<uint8_t>{0}));
}

TEST(MaxTreeTest, FirstAtLeast) {
  MaxTree t(5);
  for (int i = 0; i < 5; ++i) t.Set(i, i % 3);  // 0 1 2 0 1
  EXPECT_EQ(t.FirstAtLeast(0, 2), 2);
  EXPECT_EQ(t.FirstAtLeast(3, 1), 4);
  EXPECT_EQ(t.FirstAtLeast(3, 2), -1);
  t.Set(2, 0);
  EXPECT_EQ(t.FirstAtLeast(0, 2), -1);
  EXPECT_EQ(t.Max(), 1);
}

}  // namespace
}  // namespace meridian
