// GenerateWorkload: arrivals, tenants, GPUs and run times drawn from the
// calibration tables, one JSONL line per job.
#include "sim/workload/generator.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "sim/workload/random.h"

namespace meridian::sim {

namespace {

#include "sim/workload/calibration.inc"

// Days each summarised trace spans (the traces' READMEs): Philly
// 2017-08-07..2017-12-22, Helios Apr-Sep 2020, Acme Seren Mar-Aug 2023.
constexpr double kPhillyDays = 137;
constexpr double kHeliosDays = 183;
constexpr double kSerenDays = 184;

const ClusterSummary& Summary(WorkloadLike like) {
  const char* id = like == WorkloadLike::kAcmeSeren ? "Seren"
                   : like == WorkloadLike::kPhilly  ? "Philly"
                   : like == WorkloadLike::kHelios  ? "Helios"
                                                    : "PAI";
  for (const ClusterSummary& s : kAcmeSummaries) {
    if (std::string_view(s.id) == id) return s;
  }
  return kAcmeSummaries[0];
}

// P(2^k) proportional to q^k for 2^k <= max_gpus, with q chosen so the mean
// is `mean` (bisection; the mean grows with q).
std::vector<double> PowerOfTwoWeights(double mean, int max_gpus) {
  int levels = 0;
  while ((2 << levels) <= max_gpus) ++levels;
  auto weights = [&](double q) {
    std::vector<double> w(levels + 1);
    double x = 1;
    for (double& v : w) {
      v = x;
      x *= q;
    }
    return w;
  };
  auto mean_of = [&](double q) {
    std::vector<double> w = weights(q);
    double total = 0, sum = 0, gpus = 1;
    for (double v : w) {
      total += v;
      sum += v * gpus;
      gpus *= 2;
    }
    return sum / total;
  };
  double lo = 0, hi = 1;
  for (int i = 0; i < 100; ++i) {
    const double mid = (lo + hi) / 2;
    (mean_of(mid) < mean ? lo : hi) = mid;
  }
  std::vector<double> w = weights(lo);
  double total = 0;
  for (double v : w) total += v;
  for (double& v : w) v /= total;
  return w;
}

struct LogNormal {
  double mu = 0, sigma = 0, max = 0;
  // Through a median and a mean: mu = ln(median), sigma^2 = 2 ln(mean/median).
  static LogNormal Of(double median, double mean, double max) {
    return {std::log(median), std::sqrt(2 * std::log(mean / median)), max};
  }
  double Draw(Xoshiro256& rng) const {
    return std::min(max, std::exp(mu + sigma * rng.Normal()));
  }
};

// Everything one profile draws from.
struct Profile {
  WorkloadCalibration cal;
  std::vector<std::pair<std::string, double>> tenants;  // name, cumulative weight
  std::vector<double> gpu_cdf;                          // pai: over kOpenbShapes; else powers of 2
  LogNormal gpu_run, cpu_run;
  bool empirical_run = false;                           // Philly percentiles
  const char* recorded_on = "";  // the catalog model the source's run times were measured on
};

// The catalog model standing for each source cluster's GPUs, which its run
// times were measured on: Philly's 2017 Pascal GPUs (Jeon et al., ATC'19:
// 12 GB and 24 GB cards) -> V100-16GB, the nearest model the catalog has (as
// the openb reader maps P100); Helios's Volta V100s (Hu et al., SC'21) ->
// V100-32GB; PAI, drawn over openb's pod shapes -> A100-40GB, the openb node
// list's dominant model (G2); Acme Seren's A100-SXM 80GB (Hu et al., NSDI'24).
const char* RecordedModelOf(WorkloadLike like) {
  switch (like) {
    case WorkloadLike::kPhilly: return "V100-16GB";
    case WorkloadLike::kHelios: return "V100-32GB";
    case WorkloadLike::kPai: return "A100-40GB";
    case WorkloadLike::kAcmeSeren: return "A100-80GB";
  }
  return "";
}

std::vector<double> Cumulative(std::vector<double> w) {
  double total = 0;
  for (double v : w) total += v;
  double acc = 0;
  for (double& v : w) v = (acc += v) / total;
  return w;
}

size_t Pick(const std::vector<double>& cdf, double u) {
  return std::min<size_t>(cdf.size() - 1,
                          static_cast<size_t>(std::upper_bound(cdf.begin(), cdf.end(), u) -
                                              cdf.begin()));
}

Profile MakeProfile(const WorkloadOptions& o) {
  Profile p;
  p.cal = CalibrationOf(o.like);
  p.recorded_on = RecordedModelOf(o.like);
  if (o.tenants > 0) {
    for (int i = 0; i < o.tenants; ++i) p.tenants.emplace_back("t" + std::to_string(i), 1.0);
  } else if (o.like == WorkloadLike::kPhilly) {
    for (const TenantWeight& t : kPhillyTenants) p.tenants.emplace_back(t.name, t.weight);
  } else if (o.like == WorkloadLike::kHelios) {
    for (const TenantWeight& t : kHeliosTenants) p.tenants.emplace_back(t.name, t.weight);
  } else {
    p.tenants.emplace_back("default", 1.0);
  }
  std::vector<double> w;
  for (const auto& t : p.tenants) w.push_back(t.second);
  w = Cumulative(w);
  for (size_t i = 0; i < w.size(); ++i) p.tenants[i].second = w[i];
  const ClusterSummary& s = Summary(o.like);
  if (o.like == WorkloadLike::kPai) {
    std::vector<double> pods;
    for (const OpenbShape& shape : kOpenbShapes) pods.push_back(shape.pods);
    p.gpu_cdf = Cumulative(pods);
  } else {
    p.gpu_cdf = Cumulative(PowerOfTwoWeights(s.avg_gpus, static_cast<int>(s.max_gpus)));
  }
  p.empirical_run = o.like == WorkloadLike::kPhilly;
  p.gpu_run = LogNormal::Of(s.med_run_gpu, s.avg_run_gpu, s.max_run_gpu);
  p.cpu_run = s.med_run_cpu > 0 ? LogNormal::Of(s.med_run_cpu, s.avg_run_cpu, s.max_run_gpu)
                                : p.gpu_run;
  return p;
}

double PhillyRuntime(double u) {
  constexpr size_t n = std::size(kPhillyRuntimePercentiles) - 1;
  const double x = u * static_cast<double>(n);
  const size_t i = std::min(n - 1, static_cast<size_t>(x));
  const double f = x - static_cast<double>(i);
  return kPhillyRuntimePercentiles[i] * (1 - f) + kPhillyRuntimePercentiles[i + 1] * f;
}

// Arrivals by time rescaling: an Exp(1) draw of cumulative intensity spent
// over hour-long bins of rate base x hourly[h] x daily[d] / norm.
class Arrivals {
 public:
  Arrivals(const WorkloadCalibration& cal, double scale) : cal_(cal) {
    double norm = 0;
    for (double d : cal.daily) {
      for (double h : cal.hourly) norm += d * h;
    }
    norm /= 168;
    per_second_ = cal.jobs_per_day * scale / 86400 / norm;
  }
  double Next(Xoshiro256& rng) {
    double need = rng.Exponential();
    for (;;) {
      const int64_t hour = static_cast<int64_t>(std::floor(t_ / 3600));
      const double rate = per_second_ * cal_.hourly[hour % 24] * cal_.daily[(hour / 24) % 7];
      const double left = static_cast<double>(hour + 1) * 3600 - t_;
      if (rate * left >= need) {
        t_ += need / rate;
        return t_;
      }
      need -= rate * left;
      t_ = static_cast<double>(hour + 1) * 3600;
    }
  }

 private:
  const WorkloadCalibration& cal_;
  double per_second_ = 0;
  double t_ = 0;
};

struct DrawnJob {
  int64_t submit_s = 0, duration_s = 0;
  int gpus = 0;
  int milli = 1000;
  size_t tenant = 0;
  bool preemptible = false;
};

DrawnJob Draw(const Profile& p, const WorkloadOptions& o, Arrivals& arrivals, Xoshiro256& rng) {
  DrawnJob j;
  j.submit_s = static_cast<int64_t>(std::floor(arrivals.Next(rng)));
  double u = rng.Uniform();
  j.tenant = static_cast<size_t>(std::find_if(p.tenants.begin(), p.tenants.end(),
                                              [&](const auto& t) { return u < t.second; }) -
                                 p.tenants.begin());
  j.tenant = std::min(j.tenant, p.tenants.size() - 1);
  const bool cpu = o.like != WorkloadLike::kPai && rng.Uniform() < p.cal.cpu_share;
  if (o.like == WorkloadLike::kPai) {
    const OpenbShape& s = kOpenbShapes[Pick(p.gpu_cdf, rng.Uniform())];
    j.gpus = s.gpus;
    j.milli = s.gpus == 1 ? s.milli : 1000;
  } else if (!cpu) {
    j.gpus = 1 << Pick(p.gpu_cdf, rng.Uniform());
  }
  double run = 0;
  if (p.empirical_run) {
    run = PhillyRuntime(rng.Uniform());
  } else {
    run = (j.gpus == 0 ? p.cpu_run : p.gpu_run).Draw(rng);
  }
  j.duration_s = std::max<int64_t>(1, std::llround(run));
  j.preemptible = o.preemptible_frac > 0 && rng.Uniform() < o.preemptible_frac;
  return j;
}

void WriteLine(const DrawnJob& j, int64_t index, const Profile& p, const WorkloadOptions& o,
               std::string& line) {
  char buf[160];
  std::snprintf(buf, sizeof buf, "{\"name\":\"j%07lld\",\"submit_s\":%lld,\"duration_s\":%lld,\"gpus\":%d",
                static_cast<long long>(index), static_cast<long long>(j.submit_s),
                static_cast<long long>(j.duration_s), j.gpus);
  line = buf;
  if (j.gpus == 1 && j.milli < 1000) {
    std::snprintf(buf, sizeof buf, ",\"gpu_fraction\":0.%03d", j.milli);
    line += buf;
  }
  if (j.gpus > 0 && !o.gpu_model.empty()) line += ",\"gpu_model\":\"" + o.gpu_model + "\"";
  if (j.gpus > 0 && o.gpu_model.empty() && *p.recorded_on) {
    line += ",\"recorded_on\":\"" + std::string(p.recorded_on) + "\"";
  }
  line += ",\"tenant\":\"" + p.tenants[j.tenant].first + "\",\"kind\":\"";
  line += j.gpus == 0 ? "data-science\"" : "training\"";
  if (o.deadline_slack > 0) {
    const double hours = std::ceil(static_cast<double>(j.duration_s) * o.deadline_slack / 3600);
    std::snprintf(buf, sizeof buf, ",\"deadline_s\":%lld",
                  static_cast<long long>(std::max(1.0, hours)) * 3600);
    line += buf;
  }
  if (j.preemptible) line += ",\"preemptible\":true";
  line += "}\n";
}

}  // namespace

Result<WorkloadLike> ParseWorkloadLike(std::string_view name) {
  for (WorkloadLike l : {WorkloadLike::kPhilly, WorkloadLike::kHelios, WorkloadLike::kPai,
                         WorkloadLike::kAcmeSeren}) {
    if (ToString(l) == name) return l;
  }
  return Status::Invalid("--like: \"" + std::string(name) +
                         "\" is not a workload profile; use philly, helios, pai or acme-seren");
}

std::string_view ToString(WorkloadLike like) {
  switch (like) {
    case WorkloadLike::kPhilly: return "philly";
    case WorkloadLike::kHelios: return "helios";
    case WorkloadLike::kPai: return "pai";
    case WorkloadLike::kAcmeSeren: return "acme-seren";
  }
  return "philly";
}

WorkloadCalibration CalibrationOf(WorkloadLike like) {
  WorkloadCalibration c;
  const ClusterSummary& s = Summary(like);
  const bool philly = like == WorkloadLike::kPhilly;
  c.hourly.assign(philly ? std::begin(kPhillyHourly) : std::begin(kOpenbHourly),
                  philly ? std::end(kPhillyHourly) : std::end(kOpenbHourly));
  c.daily.assign(philly ? std::begin(kPhillyDaily) : std::begin(kOpenbDaily),
                 philly ? std::end(kPhillyDaily) : std::end(kOpenbDaily));
  c.mean_gpus = s.avg_gpus;
  c.median_gpus = s.med_gpus;
  c.max_gpus = static_cast<int>(s.max_gpus);
  c.median_run_s = s.med_run_gpu;
  c.mean_run_s = s.avg_run_gpu;
  c.max_run_s = s.max_run_gpu;
  c.cpu_share = s.cpu_jobs / s.jobs;
  switch (like) {
    case WorkloadLike::kPhilly:
      c.jobs_per_day = s.jobs / kPhillyDays;
      c.median_run_s = kPhillyRuntimePercentiles[50];
      c.max_run_s = kPhillyRuntimePercentiles[100];
      c.source = "acme-trace-summary/cluster_summary.csv (Philly), "
                 "philly-derived/philly_runtime_from_alibaba_v2020_analysis.csv, "
                 "philly-derived/philly_node_sequence.csv, philly-derived/philly_vc.csv";
      break;
    case WorkloadLike::kHelios:
      c.jobs_per_day = s.jobs / kHeliosDays;
      c.source = "acme-trace-summary/cluster_summary.csv (Helios), "
                 "helios-derived/Earth_cluster_gpu_number.csv, "
                 "alibaba-gpu-v2023/csv/openb_pod_list_default.csv (cycles)";
      break;
    case WorkloadLike::kAcmeSeren:
      c.jobs_per_day = s.jobs / kSerenDays;
      c.source = "acme-trace-summary/cluster_summary.csv (Seren), "
                 "alibaba-gpu-v2023/csv/openb_pod_list_default.csv (cycles)";
      break;
    case WorkloadLike::kPai: {
      c.jobs_per_day = kOpenbPodsPerDay;
      double pods = 0, cpu = 0, gpu = 0, gpus = 0, fractional = 0;
      for (const OpenbShape& shape : kOpenbShapes) {
        pods += shape.pods;
        if (shape.gpus == 0) cpu += shape.pods;
        if (shape.gpus > 0) gpu += shape.pods;
        gpus += shape.pods * (shape.gpus == 1 ? shape.milli / 1000.0 : shape.gpus);
        if (shape.gpus == 1 && shape.milli < 1000) fractional += shape.pods;
      }
      c.cpu_share = cpu / pods;
      c.mean_gpus = gpus / gpu;
      c.median_gpus = 1;
      c.max_gpus = 8;
      c.fractional_share = fractional / gpu;
      c.source = "alibaba-gpu-v2023/csv/openb_pod_list_default.csv (GPUs, fractions, rate, "
                 "cycles), acme-trace-summary/cluster_summary.csv (PAI run times)";
      break;
    }
  }
  return c;
}

Status CheckWorkloadOptions(const WorkloadOptions& o) {
  if (o.jobs < 1) return Status::Invalid("--jobs: " + std::to_string(o.jobs) + " must be >= 1");
  if (o.tenants < 0 || o.tenants > 10000) {
    return Status::Invalid("--tenants: " + std::to_string(o.tenants) + " must be 0-10000");
  }
  if (!(o.deadline_slack >= 0) || (o.deadline_slack > 0 && o.deadline_slack < 1)) {
    return Status::Invalid("--deadline-slack: " + std::to_string(o.deadline_slack) +
                           " must be >= 1 (deadline = duration x slack), or 0 for none");
  }
  if (!(o.preemptible_frac >= 0 && o.preemptible_frac <= 1)) {
    return Status::Invalid("--preemptible-frac: " + std::to_string(o.preemptible_frac) +
                           " must be between 0 and 1");
  }
  if (!(o.rate_scale > 0) || !std::isfinite(o.rate_scale)) {
    return Status::Invalid("--rate-scale: " + std::to_string(o.rate_scale) + " must be > 0");
  }
  return Status::Ok();
}

Status GenerateWorkload(const WorkloadOptions& o, std::ostream& out) {
  if (Status s = CheckWorkloadOptions(o); !s.ok()) return s;
  const Profile p = MakeProfile(o);
  Xoshiro256 rng(o.seed);
  Arrivals arrivals(p.cal, o.rate_scale);
  std::string line;
  for (int64_t i = 0; i < o.jobs; ++i) {
    WriteLine(Draw(p, o, arrivals, rng), i, p, o, line);
    out.write(line.data(), static_cast<std::streamsize>(line.size()));
  }
  if (!out) return Status::Internal("cannot write the workload");
  return Status::Ok();
}

}  // namespace meridian::sim
