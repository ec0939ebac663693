// Internal to sched/: the scheduler's plugin lists, its reusable scratch
// space, and the steps of one decision (generation, earliest start,
// explanation), shared by scheduler.cc, generate.cc, earliest_start.cc and
// explain.cc.
#pragma once

#include <array>
#include <memory>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "sched/elastic.h"
#include "sched/kept_waits.h"
#include "sched/move.h"
#include "sched/plugin.h"
#include "sched/profile.h"
#include "sched/queue_state.h"
#include "sched/scheduler.h"
#include "sched/tenant_usage.h"

namespace meridian::sched {

// One plugin of the profile and the extension points it implements.
struct PluginSlot {
  std::unique_ptr<Plugin> plugin;
  int64_t weight = 1;
  uint16_t index = 0;  // position in the profile
  const QueueSortPlugin* sort = nullptr;
  const PreFilterPlugin* pre_filter = nullptr;
  const AddCandidatesPlugin* add = nullptr;
  const FilterPlugin* filter = nullptr;
  const PostFilterPlugin* post_filter = nullptr;
  const ScorePlugin* score = nullptr;
  const PermitPlugin* permit = nullptr;
  ReservePlugin* reserve = nullptr;
  BindPlugin* bind = nullptr;
  CyclePlugin* cycle = nullptr;
  const MovePlugin* move = nullptr;
};

// Scratch reused by every decision, so the hot path does not allocate once
// warm: vectors are cleared, never shrunk.
struct Workspace {
  std::vector<Candidate> batch;      // generated, being filtered
  std::vector<Candidate> feasible;   // passed every filter
  std::vector<NodeId> members;       // gang members of every candidate
  std::vector<PoolId> pools;         // pools of the current demand
  struct Head {
    double cost;
    uint8_t demand;
    uint32_t pos;
  };
  std::vector<Head> heads;           // elastic generation's merge of the demands
  std::vector<std::span<const ElasticChoice>> lists;  // its offering lists, by demand
  std::vector<std::vector<ElasticChoice>> live_lists;  // by demand, in the market's order
  std::vector<int64_t> raw;          // [score plugin x feasible]
  std::vector<int64_t> norm;
  std::vector<int64_t> total;
  std::vector<Rejections> rejections;  // per filter plugin, then the ledger check
  // A whole-GPU candidate's class: nodes of one group with the same free
  // capacity score alike (ScorePlugin::DistinguishesEquivalentNodes), and so
  // do gangs of as many such nodes.
  struct NodeClass {
    uint32_t cluster;
    uint32_t group;
    uint32_t shape;  // demand, gang size, GPUs per node
    int32_t free_gpus;
    int64_t free_vcpus;
    int64_t free_ram_mib;
    bool operator==(const NodeClass&) const = default;
  };
  std::vector<NodeClass> classes;    // of the whole-GPU candidates in `feasible`
  // Open addressing over `classes`: 1 + index, 0 empty; twice the classes a
  // decision may keep (beyond that, candidates are kept without merging).
  static constexpr size_t kClassSlots = 512;
  std::array<uint16_t, kClassSlots> class_slots{};
  std::vector<uint16_t> used_slots;
  CycleState state;
};

// FindEarliestStart's answers for one ledger state (Ledger::stamp) at one
// time, by node group and per-node need: jobs of one shape that wait between
// two commits ask it the same question, and a waiting queue asks it once
// per such job per cycle.
struct EarliestCache {
  struct Need {
    int gpus = 0;
    int vcpus = 0;
    int64_t ram_mib = 0;
    int mig_span = 0;  // > 0: a MIG instance of at least this span instead of GPUs
    bool operator==(const Need&) const = default;
  };
  struct RoomTime {
    UnixSeconds at;
    NodeId node;
    JobId after;  // the release that makes room; invalid: room now
  };
  struct Answer {
    uint32_t group_first;
    Need need;
    int nodes_needed;
    std::vector<RoomTime> times;  // the first nodes_needed nodes to have room, by (time, node)
  };
  const Ledger* ledger = nullptr;
  uint64_t stamp = 0;
  UnixSeconds now = 0;
  std::vector<Answer> answers;
};

// What narrows generation for one decision.
struct GenerationScope {
  RegionSet regions;
  GpuModelSet models;
  bool ever = false;  // the "can it ever run" pass: group representatives, empty ledger
  bool fleet = true;  // false: the now pass generates no fleet candidates (a PreFilter said so)
  bool elastic = true;  // false: no built-in elastic candidates in either pass (likewise)
};

struct Scheduler::Impl {
  Profile profile;
  std::shared_ptr<const Fleet> fleet;
  SchedulerOptions options;
  ExplainLevel explain = ExplainLevel::kFull;
  std::vector<PluginSlot> slots;
  std::vector<PluginSlot*> sorts, pre_filters, adds, filters, post_filters, scores, permits,
      reserves, binds, cycles;
  Ledger empty;  // the fleet with nothing allocated: the "ever" pass's capacity
  // Keep one whole-GPU candidate per NodeClass: ties go to the first
  // candidate and no score plugin tells such nodes apart.
  bool merge_equivalent = false;
  // The node walk lists a run of equivalent nodes once (Candidate::repeats):
  // they are merged anyway, no filter tells them apart, and rejections keep
  // no examples (a full explanation names the rejected nodes themselves).
  bool run_length = false;
  Workspace ws;
  EarliestCache earliest;
  // DecideInCycle's kept verdicts: jobs that waited with no feasible
  // candidate, and what would change that (Plugin::WaitInputs).
  KeptWaits kept;
  // What a kept wait's freed capacity is checked against (MayFitOn): its
  // demands. Waiting jobs of one shape share the check of the same frees on
  // the same free capacity (a queue of 1-GPU jobs walks a release once).
  struct WaitShape {
    std::vector<uint32_t> key;  // cpu_only, then (model, GPUs, MIG profile) per demand
    uint64_t from = ~uint64_t{0};  // the frees [from, to) checked ...
    uint64_t to = 0;
    uint64_t stamp = 0;            // ... on this free capacity (Ledger::stamp)
    bool may_fit = false;          // and whether one of them may give it a candidate
    // Frees below this were found not to fit the shape on the free capacity
    // that followed them (RunQueue's check of a whole shape): a kept wait of
    // the shape needs checking only from here.
    uint64_t validated = 0;
  };
  std::vector<WaitShape> shapes;
  std::unordered_map<std::string, uint32_t> shape_index;  // key bytes -> shapes
  // Releases by tenant (TenantId index) through Release: kWaitTenantFreed.
  std::vector<uint64_t> tenant_released;
  uint64_t TenantReleased(TenantId t) const {
    return t.valid() && t.index() < tenant_released.size() ? tenant_released[t.index()] : 0;
  }
  uint64_t released = 0;  // the sum of tenant_released
  uint32_t kept_gen = 0;  // KeptWait::gen of the last verdict kept
  // The queue a caller keeps here (Enqueue, Dequeue, RunQueue).
  QueueState queue;
  uint64_t cycle = 0;    // BeginCycle's count
  size_t touched = 0;    // verdicts kept or stored since BeginCycle
  int64_t kept_verdicts = 0, full_decisions = 0;
  // SortQueue's scratch, reused from sort to sort.
  TenantUsage usage;
  std::vector<double> sort_keys;
  std::vector<uint32_t> sort_order;
};

// Kept verdicts (sched/scheduler.cc), for RunQueue (sched/run_queue.cc).
// The index of job's wait shape.
uint32_t WaitShapeOf(Scheduler::Impl& s, const QueuedJob& job);
// Whether a kept wait still holds at snap (and, when it does, notes the
// frees it has looked at).
bool StillWaits(Scheduler::Impl& s, KeptWait& k, const QueuedJob& job, const Snapshot& snap);
// Whether a free since `from` on `l` may give a job of wait shape `shape`
// (`job` is one) a candidate, on l's free capacity now; true when the frees
// are no longer known.
bool ShapeMayFit(Scheduler::Impl& s, uint32_t shape, const QueuedJob& job, const Ledger& l,
                 uint64_t from);
// Commits d when it carries an allocation (a kPreempt only when
// `commit_preemptions`); a failed commit turns it into a kError carrying why
// (RunCycle and RunQueue).
void CommitOrFail(Scheduler& scheduler, Decision& d, const Snapshot& snap, Ledger* ledger,
                  bool commit_preemptions = true);
// Preemptible fleet allocations of a priority below `tier` placed so far.
int64_t PlacedBelow(const Ledger& l, Priority tier);

// Generates the built-in candidates of the decision in `ctx` into ws.batch in
// batches, filters each batch, and keeps up to the profile's limits feasible
// in ws.feasible. Returns the number of candidates examined.
uint32_t GenerateAndFilter(Scheduler::Impl& s, const CycleContext& ctx,
                           const GenerationScope& scope);

// Runs the filter plugins over ws.batch[from..], compacting survivors; returns
// how many survive (at the front of that range).
size_t RunFilters(Scheduler::Impl& s, const CycleContext& ctx, size_t from);

// The earliest time some feasible fleet candidate of the ever pass (in
// ws.feasible) has room, from the live ledger's allocations and their ends;
// nullopt when none frees up. `why` explains it when explained in full.
struct EarliestStart {
  UnixSeconds at = 0;
  std::string why;
  std::vector<NodeId> nodes;  // the node, or a gang's nodes, that have room at `at`
};
std::optional<EarliestStart> FindEarliestStart(Scheduler::Impl& s, const CycleContext& ctx,
                                               const Ledger& live);

// The allocation a candidate stands for, against `ledger`'s free capacity
// plus whatever the jobs in `released` hold (preemption victims).
Allocation AllocationFor(const CycleContext& ctx, const Candidate& c, const Ledger& ledger,
                         std::span<const JobId> released = {});

// "onprem-a-a100-80gb-0 GPUs 0-3", "gcp:us-central1 a3-highgpu-8g x2 spot".
std::string DescribeCandidate(const CycleContext& ctx, const Candidate& c);

// Fills d.pricing/pricing_reason for the chosen candidate.
void ExplainPricing(const CycleContext& ctx, const Candidate& c, Decision* d);

}  // namespace meridian::sched
