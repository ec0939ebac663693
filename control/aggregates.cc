#include "control/aggregates.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "control/attempt_rate.h"
#include "core/time.h"
#include "sched/plugins/follow_the_sun.h"

namespace meridian::control {

namespace {

using nlohmann::json;

constexpr const char* kTiers[] = {"critical", "high", "normal", "low"};
// Every pricing model a placement can have; the daemon's own nodes are "owned".
constexpr const char* kPricing[] = {"spot", "flex-start", "on-demand", "reserved", "owned"};

bool HoldsCapacity(JobState state) {
  switch (state) {
    case JobState::kScheduled:
    case JobState::kStarting:
    case JobState::kRunning:
    case JobState::kCheckpointing: return true;
    case JobState::kQueued:
    case JobState::kSucceeded:
    case JobState::kFailed:
    case JobState::kCancelled:
    case JobState::kPreempted: return false;
  }
  return false;
}

// `v` to `digits` decimals, divided back (not multiplied by 1e-digits) so the
// JSON shows 0.0003 rather than 0.00030000000000000003.
double Round(double v, int digits) {
  const double scale = std::pow(10.0, digits);
  return std::round(v * scale) / scale;
}

json OptTime(std::optional<UnixSeconds> t) { return t ? json(FormatRfc3339(*t)) : json(nullptr); }

const NodeRow* FindNode(const AggregateInput& in, const std::string& name) {
  for (const NodeRow& n : in.nodes) {
    if (n.name == name) return &n;
  }
  return nullptr;
}

// Watts per GPU of a node (0 for CPU nodes and unknown models).
double PowerW(const AggregateInput& in, const std::string& node) {
  const NodeRow* n = FindNode(in, node);
  if (!n || n->gpu_model.empty()) return 0;
  const catalog::GpuModel* g = in.catalog->FindGpu(n->gpu_model);
  return g ? g->power_w : 0;
}

// The kilowatts an attempt's GPUs draw over every node it holds (a MIG
// slice: span / 8 of its GPU), as the reconciler charges its CO2.
double AttemptKw(const AggregateInput& in, const std::vector<HeldShare>& held) {
  double kw = 0;
  for (const HeldShare& h : held) kw += PowerW(in, h.node) * static_cast<double>(h.gpu_milli) / 1e6;
  return kw;
}

double CarbonG(const AggregateInput& in, const std::string& region, UnixSeconds t) {
  auto r = in.catalog->CarbonAt(region, t);
  return r.ok() ? r->gco2_per_kwh : 0;
}

// What the current attempt has run up since it started (billed at its end).
double AccruedHours(const AggregateInput& in, const JobRow& j) {
  if (!HoldsCapacity(j.state) || !j.started_at) return 0;
  return static_cast<double>(std::max<int64_t>(0, in.now - *j.started_at)) / 3600.0;
}

}  // namespace

std::vector<TenantHome> TenantHomes(const sched::Profile& profile) {
  std::vector<TenantHome> out;
  for (const sched::PluginConfig& p : profile.plugins) {
    if (p.name != sched::FollowTheSun::kName) continue;
    sched::PluginArgs args = p.args;  // reads mark keys; keep the profile's copy untouched
    if (!args.Has("tenants")) continue;
    sched::PluginArgs tenants = args.Map("tenants");
    for (const std::string& name : tenants.Keys()) {
      sched::PluginArgs t = tenants.Map(name);
      if (!t.Has("zone")) continue;
      TenantHome h;
      h.tenant = name;
      h.zone = t.String("zone", "");
      h.hours = t.Has("hours") ? t.String("hours", "09:00-18:00") : "09:00-18:00";
      h.weekends = t.Bool("weekends", false);
      out.push_back(h);
    }
  }
  return out;
}

json OverviewJson(const AggregateInput& in) {
  json by_state = json::object();
  for (JobState s : kJobStates) by_state[std::string(JobStateName(s))] = 0;
  json by_tier = json::object();
  for (const char* t : kTiers) by_tier[t] = {{"total", 0}, {"queued", 0}, {"active", 0}, {"done", 0}};
  struct Spend {
    double so_far = 0, per_hour = 0;
    int running = 0;
  };
  std::map<std::string, Spend> spend;
  for (const char* p : kPricing) spend[p] = {};
  double co2_g = 0, co2_g_per_hour = 0;
  int running_gpus = 0;
  int64_t total_jobs = 0;
  for (const Store::JobTotal& t : in.totals) {
    const std::string state(JobStateName(t.state));
    by_state[state] = by_state.value(state, int64_t{0}) + t.jobs;
    total_jobs += t.jobs;
    if (by_tier.contains(t.priority)) {
      json& tier = by_tier[t.priority];
      tier["total"] = tier["total"].get<int64_t>() + t.jobs;
      const char* bucket = t.state == JobState::kQueued ? "queued"
                           : IsTerminal(t.state)        ? "done"
                                                        : "active";
      tier[bucket] = tier[bucket].get<int64_t>() + t.jobs;
    }
    spend[t.pricing.empty() ? "owned" : t.pricing].so_far +=
        static_cast<double>(t.cost_micro_usd) / 1e6;
    co2_g += static_cast<double>(t.co2_mg) / 1e3;
  }
  // What running attempts have run up since they started (billed at their end).
  for (const JobRow& j : in.jobs) {
    if (!HoldsCapacity(j.state) || j.placement.node.empty()) continue;
    Spend& s = spend[j.placement.pricing.empty() ? "owned" : j.placement.pricing];
    // As the reconciler bills the attempt when it ends (control/attempt_rate.h).
    const std::vector<HeldShare> held = HeldShares(j, nullptr);
    const double rate = AttemptHourRate(held, DaemonRates(*in.options)).dollars();
    const double hours = AccruedHours(in, j);
    const double kw = AttemptKw(in, held);
    s.so_far += rate * hours;
    s.per_hour += rate;
    s.running++;
    co2_g += kw * hours * CarbonG(in, j.placement.region, j.started_at.value_or(in.now));
    co2_g_per_hour += kw * CarbonG(in, j.placement.region, in.now);
    running_gpus += static_cast<int>(j.placement.gpus.size());
  }
  json pricing = json::array();
  double total = 0, per_hour = 0;
  for (const char* p : kPricing) {
    const Spend& s = spend[p];
    total += s.so_far;
    per_hour += s.per_hour;
    pricing.push_back({{"pricing", p},
                       {"so_far_usd", Round(s.so_far, 6)},
                       {"per_hour_usd", Round(s.per_hour, 6)},
                       {"running_jobs", s.running}});
  }
  // Utilization of the capacity meridian pays for whether used or not: the
  // daemon's nodes are owned; reserved capacity would be counted the same way.
  int owned_gpus = 0, busy_gpus = 0;
  for (const NodeRow& n : in.nodes) {
    if (n.state == NodeState::kReady) owned_gpus += n.gpus;
  }
  for (const JobRow& j : in.all_active) {
    if (HoldsCapacity(j.state)) busy_gpus += static_cast<int>(j.placement.gpus.size());
  }
  busy_gpus = std::min(busy_gpus, owned_gpus);
  auto util = [](int gpus, int busy, int mine) {
    return json{{"gpus", gpus}, {"busy_gpus", busy}, {"your_gpus", mine},
                {"fraction", gpus > 0 ? Round(static_cast<double>(busy) / gpus, 4) : 0.0}};
  };
  return {{"at", FormatRfc3339(in.now)},
          {"tenant", in.admin ? json(nullptr) : json(in.tenant)},
          {"jobs", {{"total", total_jobs}, {"by_state", by_state}, {"by_tier", by_tier}}},
          {"spend", {{"so_far_usd", Round(total, 6)},
                     {"per_hour_usd", Round(per_hour, 6)},
                     {"by_pricing", pricing}}},
          {"co2", {{"so_far_kg", Round(co2_g / 1000.0, 6)},
                   {"per_hour_kg", Round(co2_g_per_hour / 1000.0, 6)}}},
          {"utilization", {{"owned", util(owned_gpus, busy_gpus, std::min(running_gpus, busy_gpus))},
                           {"reserved", util(0, 0, 0)}}},
          {"preemptions", in.preemptions}};
}

json WaitingJson(const AggregateInput& in) {
  json arr = json::array();
  for (const JobRow& j : in.jobs) {
    if (j.state != JobState::kQueued) continue;
    json o = {{"id", j.id}, {"name", j.name}, {"tenant", j.tenant}, {"tier", j.priority},
              {"kind", j.kind}, {"submitted_at", FormatRfc3339(j.submitted_at)},
              {"waited_s", std::max<int64_t>(0, in.now - j.submitted_at)}};
    auto it = in.waiting.find(j.id);
    if (it == in.waiting.end()) {
      // Submitted after the last cycle: nothing decided yet.
      o.update({{"decision", "pending"}, {"message", j.reason}, {"filters", json::array()},
                {"earliest_start", nullptr}, {"start_reason", ""}, {"pricing", nullptr},
                {"pricing_reason", ""}, {"candidates", 0}, {"feasible", 0}});
    } else {
      const WaitExplanation& e = it->second;
      json filters = json::array();
      for (const auto& f : e.filters) {
        filters.push_back({{"plugin", f.plugin}, {"rejected", f.rejected}, {"examples", f.examples}});
      }
      o.update({{"decision", e.decision}, {"message", e.message}, {"filters", filters},
                {"earliest_start", OptTime(e.earliest_start)}, {"start_reason", e.start_reason},
                {"pricing", e.pricing.empty() ? json(nullptr) : json(e.pricing)},
                {"pricing_reason", e.pricing_reason}, {"candidates", e.candidates},
                {"feasible", e.feasible}});
    }
    arr.push_back(o);
  }
  // The order the page reads them in: most urgent tier first, then oldest.
  auto rank = [](const std::string& t) {
    for (int i = 0; i < 4; ++i) {
      if (t == kTiers[i]) return i;
    }
    return 4;
  };
  std::stable_sort(arr.begin(), arr.end(), [&](const json& a, const json& b) {
    return rank(a["tier"]) < rank(b["tier"]);
  });
  return {{"at", FormatRfc3339(in.now)}, {"jobs", arr}};
}

json FleetJson(const AggregateInput& in) {
  std::set<std::string> mine;
  for (const JobRow& j : in.jobs) mine.insert(j.id);
  json nodes = json::array();
  int gpus = 0, busy = 0, drained = 0, down = 0;
  for (const NodeRow& n : in.nodes) {
    std::vector<json> slots(static_cast<size_t>(std::max(0, n.gpus)), json(nullptr));
    json jobs = json::array();
    int others = 0, cpu_jobs = 0;
    for (const JobRow& j : in.all_active) {
      if (j.placement.node != n.name || !HoldsCapacity(j.state)) continue;
      const bool visible = mine.count(j.id) > 0;
      if (visible) {
        jobs.push_back({{"id", j.id}, {"name", j.name}, {"tenant", j.tenant},
                        {"state", JobStateName(j.state)}, {"gpus", j.placement.gpus},
                        {"mig", j.placement.mig.empty() ? json(nullptr) : json(j.placement.mig)}});
      } else {
        others++;
      }
      if (j.placement.gpus.empty()) cpu_jobs++;
      for (int g : j.placement.gpus) {
        if (g < 0 || g >= n.gpus) continue;
        slots[static_cast<size_t>(g)] = visible ? json(j.id) : json("another tenant");
      }
    }
    json gpu_arr = json::array();
    int node_busy = 0;
    for (size_t g = 0; g < slots.size(); ++g) {
      if (!slots[g].is_null()) node_busy++;
      gpu_arr.push_back({{"index", g}, {"busy", !slots[g].is_null()}, {"job", slots[g]}});
    }
    json slices = json::array();
    int mig_gpus = 0;
    if (auto it = in.layouts.find(n.name); it != in.layouts.end()) {
      mig_gpus = it->second.mig_gpus;
      for (const MigSlice& s : it->second.slices) {
        slices.push_back({{"profile", s.profile}, {"start", s.start}, {"span", s.span}});
      }
    }
    switch (n.state) {
      case NodeState::kReady:
        gpus += n.gpus;
        busy += node_busy;
        break;
      case NodeState::kDrained: drained++; break;
      case NodeState::kDown: down++; break;
    }
    nodes.push_back({{"name", n.name},
                     {"gpu_model", n.gpu_model.empty() ? json(nullptr) : json(n.gpu_model)},
                     {"gpus", n.gpus}, {"vcpus", n.vcpus}, {"ram_gib", n.ram_gib},
                     {"state", NodeStateName(n.state)},
                     {"drained", n.state == NodeState::kDrained},
                     {"registered", n.registered},
                     {"last_heartbeat", FormatRfc3339(n.last_heartbeat)},
                     {"busy_gpus", node_busy}, {"gpu_slots", gpu_arr},
                     {"mig_gpus", mig_gpus}, {"mig_slices", slices},
                     {"jobs", jobs}, {"other_tenants_jobs", others}, {"cpu_jobs", cpu_jobs}});
  }
  // The daemon's nodes form one owned cluster in its configured region.
  json cluster = {{"name", in.options->region + " (owned)"},
                  {"region", in.options->region},
                  {"pricing", "owned"},
                  {"gpu_hour_usd", in.options->gpu_hour_usd},
                  {"nodes", nodes}};
  return {{"at", FormatRfc3339(in.now)},
          {"clusters", json::array({cluster})},
          {"totals", {{"nodes", in.nodes.size()}, {"gpus", gpus}, {"busy_gpus", busy},
                      {"drained_nodes", drained}, {"down_nodes", down}}}};
}

json RegionsJson(const AggregateInput& in) {
  const UnixSeconds hour0 = StripStart(in.now);  // the strip's 24 hour buckets
  std::map<std::string, int> running_jobs, running_gpus;
  std::map<std::string, std::vector<double>> gpu_hours;  // region -> per bucket
  std::map<std::string, std::vector<double>> tenant_hours;
  for (const JobRow& j : in.jobs) {
    if (j.placement.region.empty() || !j.started_at) continue;
    const std::string& r = j.placement.region;
    if (HoldsCapacity(j.state)) {
      running_jobs[r]++;
      running_gpus[r] += static_cast<int>(j.placement.gpus.size());
    }
    const UnixSeconds end = j.ended_at.value_or(in.now);
    const double g = static_cast<double>(std::max<size_t>(1, j.placement.gpus.size()));
    auto& row = gpu_hours[r];
    auto& trow = tenant_hours[j.tenant];
    row.resize(24, 0);
    trow.resize(24, 0);
    for (int b = 0; b < 24; ++b) {
      const UnixSeconds lo = std::max(*j.started_at, hour0 + b * 3600);
      const UnixSeconds hi = std::min(end, hour0 + (b + 1) * 3600);
      if (hi <= lo) continue;
      row[b] += g * static_cast<double>(hi - lo) / 3600.0;
      trow[b] += g * static_cast<double>(hi - lo) / 3600.0;
    }
  }
  json regions = json::array();
  for (const catalog::Region& r : in.catalog->regions()) {
    struct Best {
      double on_demand = 0, spot = 0;
      bool has_spot = false;
    };
    std::map<std::string, Best> best;  // GPU model -> cheapest $/GPU-hour
    for (const catalog::Offering& o : in.catalog->offerings()) {
      if (o.region != r.id || o.gpu_count <= 0) continue;
      Best& b = best[o.gpu_model];
      const double od = o.on_demand_per_hour.dollars() / o.gpu_count;
      if (b.on_demand == 0 || od < b.on_demand) b.on_demand = od;
      if (o.spot_per_hour) {
        const double sp = o.spot_per_hour->dollars() / o.gpu_count;
        if (!b.has_spot || sp < b.spot) b.spot = sp;
        b.has_spot = true;
      }
    }
    json prices = json::array();
    for (const auto& [model, b] : best) {
      prices.push_back({{"gpu_model", model},
                        {"on_demand_usd_per_gpu_hour", Round(b.on_demand, 4)},
                        {"spot_usd_per_gpu_hour", b.has_spot ? json(Round(b.spot, 4)) : json(nullptr)}});
    }
    json hourly = json::array();
    std::string source = "yearly";
    for (int b = 0; b < 24; ++b) {
      auto c = in.catalog->CarbonAt(r.id, hour0 + b * 3600);
      if (!c.ok()) break;
      if (c->source == catalog::CarbonSourceKind::kHourly) source = "hourly";
      hourly.push_back(Round(c->gco2_per_kwh, 1));
    }
    json load = json::array();
    if (auto it = gpu_hours.find(r.id); it != gpu_hours.end()) {
      for (double v : it->second) load.push_back(Round(v, 4));
    }
    const bool home = r.id == in.options->region;
    regions.push_back({{"id", r.id}, {"provider", r.provider}, {"location", r.location},
                       {"lat", r.lat}, {"lon", r.lon}, {"time_zone", r.time_zone},
                       {"geography", r.geography}, {"home", home},
                       {"owned_gpu_hour_usd", home ? json(in.options->gpu_hour_usd) : json(nullptr)},
                       {"carbon_source", source},
                       {"carbon_g_per_kwh_now", Round(CarbonG(in, r.id, in.now), 1)},
                       {"carbon_g_per_kwh_hourly", hourly},
                       {"prices", prices},
                       {"running_jobs", running_jobs[r.id]},
                       {"running_gpus", running_gpus[r.id]},
                       {"gpu_hours_24h", load}});
  }
  json tenants = json::array();
  for (const TenantHome& h : *in.homes) {
    if (!in.admin && h.tenant != in.tenant) continue;
    auto zone = sched::FindTimeZone(h.zone);
    auto wh = sched::ParseWorkingHours(h.hours);
    if (!zone || !wh) continue;
    wh->weekends = h.weekends;
    json working = json::array();
    for (int b = 0; b < 24; ++b) {
      working.push_back(sched::InWorkingHours(*zone, *wh, hour0 + b * 3600 + 1800));
    }
    json load = json::array();
    if (auto it = tenant_hours.find(h.tenant); it != tenant_hours.end()) {
      for (double v : it->second) load.push_back(Round(v, 4));
    }
    tenants.push_back({{"tenant", h.tenant}, {"zone", h.zone}, {"hours", h.hours},
                       {"working_now", sched::InWorkingHours(*zone, *wh, in.now)},
                       {"working", working}, {"gpu_hours_24h", load}});
  }
  json hours = json::array();
  for (int b = 0; b < 24; ++b) hours.push_back(FormatRfc3339(hour0 + b * 3600));
  return {{"at", FormatRfc3339(in.now)},
          {"home_region", in.options->region},
          {"profile", in.options->profile.name},
          {"hours", hours},
          {"regions", regions},
          {"tenants", tenants}};
}

}  // namespace meridian::control
