// ValidateAgainstCatalog: the checks on a parsed JobSpec that need the
// catalog or the submission time.
#include <algorithm>
#include <set>

#include "core/enums.h"
#include "core/time.h"
#include "spec/reader.h"
#include "spec/spec.h"
#include "spec/suggest.h"

namespace meridian::spec {

namespace {

std::vector<std::string> Geographies(const catalog::Catalog& c) {
  std::set<std::string> geos;
  for (const catalog::Region& r : c.regions()) geos.insert(r.geography);
  return {geos.begin(), geos.end()};
}

void CheckGpu(Findings& f, const catalog::Catalog& c, const std::string& field,
              const std::string& name) {
  if (std::optional<std::string> why = UnknownGpuModel(c, name)) f.Add(field, *why);
}

void CheckRegion(Findings& f, const catalog::Catalog& c, const std::string& field,
                 const std::string& id) {
  if (std::optional<std::string> why = UnknownRegion(c, id)) f.Add(field, *why);
}

void CheckResidency(Findings& f, const catalog::Catalog& c, const JobSpec& job) {
  for (size_t i = 0; i < job.residency.size(); ++i) {
    const std::string& entry = job.residency[i];
    if (c.IsGeography(entry) || c.FindRegion(entry) != nullptr) continue;
    std::vector<std::string> names = Geographies(c);
    std::vector<std::string> regions = RegionIds(c);
    names.insert(names.end(), regions.begin(), regions.end());
    std::vector<std::string> near = CloseMatches(entry, names);
    std::string hint = near.empty()
                           ? "; geographies: " + JoinAlternatives(Geographies(c))
                           : "; did you mean " + JoinAlternatives(near) + "?";
    f.Add("residency[" + std::to_string(i) + "]",
          "\"" + entry + "\" is neither a geography nor a region id in the catalog" + hint);
  }
}

void CheckMig(Findings& f, const catalog::Catalog& c, const JobSpec& job) {
  if (!job.resources.mig || job.resources.gpu_models.empty()) return;
  for (const std::string& name : job.resources.gpu_models) {
    const catalog::GpuModel* g = c.FindGpu(name);
    if (g == nullptr || !g->mig_profiles.empty()) return;  // unknown names reported already
  }
  f.Add("resources.mig",
        "\"true\" but none of resources.gpu_models (" +
            JoinAlternatives(job.resources.gpu_models) + ") can be split into MIG slices");
}

void CheckDeadline(Findings& f, const JobSpec& job, UnixSeconds submitted_at) {
  const Deadline& d = job.deadline;
  if (!d.set()) return;
  int64_t room = d.at ? *d.at - submitted_at : *d.after_submit_s;
  std::string shown = d.at ? FormatRfc3339(*d.at) : FormatDuration(*d.after_submit_s);
  if (d.at && room <= 0) {
    f.Add("deadline", "\"" + shown + "\" is at or before submission (" +
                          FormatRfc3339(submitted_at) + "); give a later time or a duration");
    return;
  }
  if (job.work.duration_s && room < *job.work.duration_s) {
    f.Add("deadline", "\"" + shown + "\" leaves " + FormatDuration(room) +
                          ", less than work.duration (" + FormatDuration(*job.work.duration_s) +
                          ")");
  }
  if (job.checkpoint.restart_overhead_s && room <= *job.checkpoint.restart_overhead_s) {
    f.Add("deadline", "\"" + shown + "\" leaves " + FormatDuration(room) +
                          ", no more than checkpoint.restart_overhead (" +
                          FormatDuration(*job.checkpoint.restart_overhead_s) + ")");
  }
}

}  // namespace

Status ValidateAgainstCatalog(const JobSpec& job, const catalog::Catalog& catalog,
                              UnixSeconds submitted_at) {
  Findings f(job.origin);
  for (size_t i = 0; i < job.resources.gpu_models.size(); ++i) {
    CheckGpu(f, catalog, "resources.gpu_models[" + std::to_string(i) + "]",
             job.resources.gpu_models[i]);
  }
  if (job.work.form == Work::Form::kGpuHours) CheckGpu(f, catalog, "work.on", job.work.on_gpu);
  if (!job.data.region.empty()) CheckRegion(f, catalog, "data.region", job.data.region);
  for (size_t i = 0; i < job.latency.users.size(); ++i) {
    CheckRegion(f, catalog, "latency.users[" + std::to_string(i) + "]", job.latency.users[i]);
  }
  CheckResidency(f, catalog, job);
  CheckMig(f, catalog, job);
  CheckDeadline(f, job, submitted_at);
  return f.ToStatus();
}

}  // namespace meridian::spec
