#include "estimate/serving.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace meridian::estimate {

namespace {

// `job` doing `requests` requests of `shape` at once, as inference work the
// throughput model counts: tokens generated over a context of in + out.
ResolvedJob AsRequests(const ResolvedJob& job, RequestShape shape, int requests) {
  ResolvedJob r = job;
  r.spec.work = Work{};
  r.spec.work.form = Work::Form::kTokens;
  r.spec.work.tokens = static_cast<double>(requests) * shape.tokens_out;
  r.dims->batch = requests;
  r.dims->seq_len = shape.tokens_in + shape.tokens_out;
  r.dims->output_tokens = shape.tokens_out;
  return r;
}

}  // namespace

RequestShape RequestShapeOf(const ResolvedJob& job) {
  const Latency& l = job.spec.latency;
  RequestShape s;
  const int model_out = job.dims ? job.dims->output_tokens : 0;
  s.tokens_out = l.tokens_out.value_or(std::max(1, model_out));
  const int context = job.dims ? job.dims->seq_len : 0;
  s.tokens_in = l.tokens_in.value_or(std::max(1, context - s.tokens_out));
  return s;
}

Result<ReplicaServing> EstimateReplicaServing(const ResolvedJob& job, const catalog::GpuModel& gpu,
                                              const catalog::Catalog& catalog,
                                              const ThroughputQuery& q) {
  if (!job.dims) {
    return Status::Invalid("latency: one replica's capacity needs model.params_b");
  }
  const RequestShape shape = RequestShapeOf(job);
  const int batch = std::max(1, job.dims->batch);
  Result<ThroughputEstimate> full = EstimateThroughput(AsRequests(job, shape, batch), gpu, catalog, q);
  if (!full.ok()) return full.status();
  RequestShape first = shape;
  first.tokens_out = 1;
  Result<ThroughputEstimate> one = EstimateThroughput(AsRequests(job, first, 1), gpu, catalog, q);
  if (!one.ok()) return one.status();
  ReplicaServing s;
  const double batch_s = full->run_hours * 3600;
  s.requests_per_s = batch_s > 0 ? batch / batch_s : 0;
  s.request_s = one->run_hours * 3600;
  s.arithmetic = "batch " + std::to_string(batch) + " x (" + std::to_string(shape.tokens_in) +
                 " in, " + std::to_string(shape.tokens_out) + " out) in " + Fixed(batch_s, 3) +
                 " s = " + Fixed(s.requests_per_s, 2) + " req/s; first token " +
                 Fixed(s.request_s * 1000, 1) + " ms";
  return s;
}

double AtLeastUp(int k, int n, double up) { return AtLeastUp(k, n, up, {}); }

int ReplicasForTarget(double target, double zone, int load, int max) {
  const int k = std::max(1, load);
  for (int n = k; n < max; ++n) {
    if (AtLeastUp(k, n, zone) >= target - 1e-12) return n;
  }
  return std::max(k, max);
}

int ReplicaSetSize(const AvailabilityTerms& t, int load) {
  if (load <= 1) return ReplicasForTarget(t.target, t.zone, 1, t.max_replicas);
  const int cap = std::min(kMaxServiceReplicas, load + t.max_replicas - 1);
  return std::min(cap, ReplicasForTarget(t.target, t.zone, load, cap));
}

double SpotReplicaUp(double zone, double reclaims_per_hour, int64_t replace_s) {
  return std::max(0.0, zone * (1.0 - reclaims_per_hour * static_cast<double>(replace_s) / 3600.0));
}

double AtLeastUp(int k, int on_demand, double od_up, const std::vector<double>& spot_up) {
  std::vector<double> count{1.0};  // P(c up) over the replicas taken so far
  auto take = [&](double p) {
    count.push_back(0.0);
    for (size_t c = count.size() - 1; c > 0; --c) count[c] = count[c] * (1.0 - p) + count[c - 1] * p;
    count[0] *= 1.0 - p;
  };
  for (int i = 0; i < on_demand; ++i) take(od_up);
  for (double p : spot_up) take(p);
  double at_least = 0;
  for (size_t c = static_cast<size_t>(std::max(0, k)); c < count.size(); ++c) at_least += count[c];
  return at_least;
}

ReplicaMix CheapestMix(int k, double target, double od_up, int64_t od_price,
                       const std::vector<SpotCandidate>& spot, int max_on_demand) {
  ReplicaMix best{max_on_demand, 0};
  int64_t best_price = od_price * max_on_demand;
  std::vector<int64_t> spot_cost(spot.size() + 1, 0);  // of the first s
  for (size_t s = 0; s < spot.size(); ++s) spot_cost[s + 1] = spot_cost[s] + spot[s].price;
  const int max_spot = static_cast<int>(spot.size());
  for (int d = 0; d <= max_on_demand; ++d) {
    for (int s = std::max(0, k - d); s <= max_spot; ++s) {
      const int64_t price = od_price * d + spot_cost[static_cast<size_t>(s)];
      if (price > best_price || (price == best_price && d + s >= best.on_demand + best.spot)) continue;
      std::vector<double> ups;
      for (int i = 0; i < s; ++i) ups.push_back(spot[static_cast<size_t>(i)].up);
      if (AtLeastUp(k, d, od_up, ups) < target - 1e-12) continue;
      best = {d, s};
      best_price = price;
    }
  }
  return best;
}

int ReplicasForLoad(double rps, double replica_rps) {
  if (rps <= 0 || replica_rps <= 0) return 0;
  // A spec's rps has no upper bound: a count past int's range is int's
  // largest (the scheduler caps replicas far below it), never an overflow.
  const double n = std::ceil(rps / replica_rps - 1e-9);
  if (!(n < static_cast<double>(std::numeric_limits<int>::max()))) {
    return std::numeric_limits<int>::max();
  }
  return static_cast<int>(n);
}

}  // namespace meridian::estimate
