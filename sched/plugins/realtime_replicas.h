// realtime_replicas (AddCandidates + Filter): batch vs real-time. A real-time
// service (kind realtime-inference) is placed at once, never deferred, as
// enough replicas in distinct zones of one region to meet an availability
// target; batch work is left alone (it accumulates and is packed by the
// bin-packing score).
//
// Replicas: the fewest n with 1 - (1 - zone_availability)^n >= target (zone
// failures taken as independent), at most max_replicas. With the defaults,
// 0.995 per zone (the AWS EC2 instance-level SLA, 99.5%; GCP's Compute Engine
// SLA gives a single instance 99.9% and instances in several zones 99.99%)
// and a 0.999 target: 1 replica gives 0.995, 2 give 0.999975: n = 2.
//
// With a load (latency.rps or rps_by_hour) on a GPU model whose replica
// capacity is known (ModelDemand::replica_rps, estimate/serving.h), the peak
// hour needs k = ceil(peak rps / replica_rps) replicas up
// (estimate::ReplicasForLoad), and n is the fewest with
//   P(at least k of n up) = sum_{i=k..n} C(n, i) a^i (1 - a)^(n - i) >= target
// (a = zone_availability; k = 1 is the formula above), at most
// k + max_replicas - 1 and kMaxLoadReplicas. The count is per GPU model: a
// slower GPU needs more replicas for the same load. Replicas are spread over
// at least min(n, the k = 1 count) distinct zones.
//
// A replica set is one candidate:
//   fleet    a gang of n members in n distinct clusters of one region, each
//            holding the whole demand (a fleet file has no zones: a cluster is
//            one failure domain). gpu_fit accepts such a gang across clusters
//            for real-time services only.
//   elastic  one offering with n x the instances of one replica; its region
//            must sell the instance type in at least n zones (counted from the
//            catalog in Prepare; an offering priced per region, zone "", is
//            taken as sold in `zones_per_region` zones, AWS's minimum of 3
//            Availability Zones per region). The backend spreads the
//            replicas over those zones.
// AddCandidates makes them from the indexes (cluster pools with room,
// ElasticIndex choices), in regions the job's residency allows and, for a
// service with users, within its latency SLO (the worst round trip,
// estimate::EstimateRttMs, plus one request's time on the GPU model,
// ModelDemand::request_ms), up to max_sets sets. Filter, for real-time
// services: rejects a later start, and, when n > 1, any candidate with fewer
// than n replicas or fewer distinct zones than the spread above.
// PreFilter, for real-time services with n > 1 or a load: no built-in fleet candidates
// in the now pass (each is one node, one cluster's gang or one MIG slice: one
// zone, which Filter would reject) and no built-in elastic ones (one
// replica's instances), so the generator does not walk whole pools and
// offering lists for them; the replica sets come from AddCandidates.
//
// Arguments:
//   availability_target: 0.999   0.5..0.999999
//   zone_availability: 0.995     one zone (one instance), 0.5..0.99999
//   max_replicas: 3              1..8; with a load k: spares beyond k, at most max_replicas - 1
//   zones_per_region: 3          zones assumed where the catalog prices per region, 1..6
//   max_sets: 8                  replica sets added per decision, 1..64
#pragma once

#include <vector>

#include "sched/plugin.h"
#include "sched/plugin_args.h"

namespace meridian::sched {

class RealtimeReplicas final : public Plugin,
                               public PreFilterPlugin,
                               public AddCandidatesPlugin,
                               public FilterPlugin {
 public:
  struct Options {
    double availability_target = 0.999;
    double zone_availability = 0.995;
    int max_replicas = 3;
    int zones_per_region = 3;
    int max_sets = 8;
  };
  struct Spread {
    int replicas = 1;
    int zones = 1;
  };
  static constexpr std::string_view kName = "realtime_replicas";
  static Result<std::unique_ptr<Plugin>> Create(PluginArgs& args);
  // The options `args` give (their defaults where unstated; FinishPlugin
  // reports what is out of range or unknown).
  static Options OptionsOf(PluginArgs& args);
  explicit RealtimeReplicas(Options o);

  std::string_view name() const override { return kName; }
  // Batch work is left alone; services are asked every time.
  uint32_t WaitInputs(const QueuedJob& job) const override {
    return job.kind == WorkloadKind::kRealtimeInference ? kWaitAnything : kWaitStatic;
  }
  Status Prepare(const PrepareContext& p) override;
  PreFilterResult PreFilter(const CycleContext& ctx, CycleState& state) const override;
  void AddCandidates(const CycleContext& ctx, std::span<const Candidate> generated,
                     CandidateSink& sink) const override;
  size_t Filter(const CycleContext& ctx, std::span<Candidate> cands,
                Rejections& rejected) const override;

  // The fewest replicas n (1..max) with 1 - (1 - zone)^n >= target; max when none.
  static int ReplicasFor(double target, double zone, int max);
  // The fewest replicas n (load..max) with P(at least `load` of n up) >=
  // target; max(load, max) when none.
  static int ReplicasFor(double target, double zone, int load, int max);
  // Replicas without a load (the availability count).
  int replicas() const { return replicas_; }
  // Replicas of `job` on the model of `d`: its peak load and the target.
  int ReplicasOf(const QueuedJob& job, const ModelDemand& d) const;
  // The replicas a set needs under `o` for `load` replicas up
  // (estimate::ReplicaSetSize with o's terms). ReplicasOf is this for the
  // peak hour; `simulate` and `plan` size a replica set with it hour by hour.
  static int SetSize(const Options& o, int load);
  // Distinct zones a set of `replicas` must span.
  int ZonesOf(int replicas) const;
  static constexpr int kMaxLoadReplicas = 32;  // estimate::kMaxServiceReplicas
  // Replicas of the job a candidate carries and the distinct zones they are in.
  Spread SpreadOf(const CycleContext& ctx, const Candidate& c) const;

 private:
  bool RegionAllowed(const CycleContext& ctx, RegionId r, double request_ms) const;
  void AddFleetSets(const CycleContext& ctx, uint8_t demand, CandidateSink& sink, int* sets) const;
  void AddElasticSets(const CycleContext& ctx, uint8_t demand, CandidateSink& sink,
                      int* sets) const;
  Options options_;
  int replicas_ = 1;
  std::vector<uint8_t> zones_;  // by offering: zones of its region selling its type
  std::vector<double> rtt_ms_;  // estimate::EstimateRttMs by [user region x region], from Prepare
  size_t region_count_ = 0;
};

}  // namespace meridian::sched
