// The Alibaba openb reader (cluster-trace-gpu-v2023): the pod CSV becomes
// jobs, the node list beside it the trace's fleet. docs/trace-format.md says
// how each column maps.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>

#include "catalog/csv.h"
#include "sim/readers/readers.h"
#include "spec/spec.h"

namespace meridian::sim {

namespace {

// The region the openb cluster is placed in: the trace does not say; Hong
// Kong is the catalog region nearest Alibaba's mainland data centres.
constexpr const char* kOpenbRegion = "aws:ap-east-1";

struct NodeShape {
  std::string alibaba;  // GPU type as the node list names it ("G2"); "" for CPU nodes
  std::string gpu;      // catalog model
  int gpus = 0;
  int vcpus = 0;
  double ram_gib = 0;
  int count = 0;
};

std::string FindNodeList(const std::string& pods_path) {
  const std::filesystem::path dir = std::filesystem::path(pods_path).parent_path();
  for (const char* name : {"openb_node_list_all_node.csv", "openb_node_list_gpu_node.csv"}) {
    std::error_code ec;
    const std::filesystem::path p = dir / name;
    if (std::filesystem::is_regular_file(p, ec)) return p.string();
  }
  return "";
}

Result<catalog::CsvTable> LoadCsv(const std::string& path,
                                  const std::vector<std::string_view>& columns) {
  Result<std::string> text = ReadWholeFile(path);
  if (!text.ok()) return text.status();
  Result<catalog::CsvTable> table = catalog::CsvTable::Parse(path, *text);
  if (!table.ok()) return Status::Invalid(table.status().message());
  if (Status s = table->RequireColumns(columns); !s.ok()) return Status::Invalid(s.message());
  return table;
}

// The largest count a column may hold: 10^15 (seconds: 31 million years;
// exact as a double, so the conversion to int64_t below is defined).
constexpr double kMaxCount = 1e15;

// `text` as a whole number from 0 to kMaxCount, or nullopt.
std::optional<int64_t> WholeCount(const std::string& text) {
  std::optional<double> v = catalog::ParseDouble(text);
  if (!v || !(*v >= 0 && *v <= kMaxCount) || *v != std::floor(*v)) return std::nullopt;
  return static_cast<int64_t>(*v);
}

// Whole number from 0 to kMaxCount in `column`, or an error naming the line
// and column.
std::optional<int64_t> Count(const catalog::CsvRecord& rec, std::string_view column,
                             ErrorList& errors) {
  const std::string& text = rec.Text(column);
  std::optional<int64_t> v = WholeCount(text);
  if (!v) {
    errors.Add(rec.line(), column, "\"" + text + "\"", "must be a whole number >= 0 and <= 10^15");
    return std::nullopt;
  }
  return v;
}

Status ReadNodes(const std::string& path, std::vector<NodeShape>& shapes) {
  Result<catalog::CsvTable> table = LoadCsv(path, {"sn", "cpu_milli", "memory_mib", "gpu", "model"});
  if (!table.ok()) return table.status();
  ErrorList errors(path);
  std::map<std::tuple<std::string, int, int, int64_t>, size_t> index;
  for (const catalog::CsvRow& row : table->rows()) {
    catalog::CsvRecord rec(*table, row);
    std::optional<int64_t> cpu = Count(rec, "cpu_milli", errors);
    std::optional<int64_t> mem = Count(rec, "memory_mib", errors);
    std::optional<int64_t> gpus = Count(rec, "gpu", errors);
    if (!cpu || !mem || !gpus) continue;
    const std::string& model = rec.Text("model");
    std::string gpu;
    if (*gpus > 0) {
      gpu = std::string(CatalogModelForAlibabaGpu(model));
      if (gpu.empty()) {
        errors.Add(rec.line(), "model", "\"" + model + "\"",
                   "is not an Alibaba GPU type meridian maps (V100M16, V100M32, T4, A10, P100, "
                   "G2, G3)");
        continue;
      }
      if (*gpus > 16) {
        errors.Add(rec.line(), "gpu", "\"" + rec.Text("gpu") + "\"", "GPUs per node must be <= 16");
        continue;
      }
    }
    const auto key = std::make_tuple(*gpus > 0 ? model : "", static_cast<int>(*gpus),
                                     static_cast<int>(*cpu), *mem);
    auto [it, inserted] = index.emplace(key, shapes.size());
    if (inserted) {
      shapes.push_back({*gpus > 0 ? model : "", gpu, static_cast<int>(*gpus),
                        static_cast<int>(*cpu / 1000), static_cast<double>(*mem) / 1024.0, 0});
    }
    ++shapes[it->second].count;
  }
  if (shapes.empty() && errors.ok()) errors.Add(0, "", "", "the node list has no nodes");
  return errors.ToStatus();
}

FleetSpec FleetOf(const std::vector<NodeShape>& shapes, const std::string& source) {
  ClusterSpec cluster;
  cluster.name = "openb";
  cluster.region = kOpenbRegion;
  cluster.pricing = CapacityPricing::kOwned;
  // The trace prices nothing: its GPUs (gpu_hour unset) and its CPUs are free.
  cluster.vcpu_hour = Money();
  cluster.ram_gib_hour = Money();
  for (size_t i = 0; i < shapes.size(); ++i) {
    const NodeShape& s = shapes[i];
    NodeGroup g;
    g.count = s.count;
    g.gpu = s.gpu;
    g.gpus = s.gpus;
    g.vcpus = s.vcpus;
    g.ram_gib = s.ram_gib;
    g.name_prefix = Lowercase(s.gpu.empty() ? "cpu" : s.alibaba) + "-g" + std::to_string(i) + "-";
    cluster.nodes.push_back(std::move(g));
  }
  FleetSpec fleet;
  fleet.clusters.push_back(std::move(cluster));
  fleet.elastic = false;
  fleet.origin.source = source;
  return fleet;
}

// One pod's needs, as read from its row.
struct PodShape {
  int gpus = 0;
  int gpu_milli = 1000;
  std::vector<std::string> models;  // catalog models allowed by gpu_spec; empty = any
  int64_t cpu_milli = 0;
  int64_t memory_mib = 0;
  std::string qos;
};

bool Fits(const PodShape& pod, const NodeShape& node) {
  if (pod.gpus > node.gpus) return false;
  if (pod.gpus > 0 && !pod.models.empty() &&
      std::find(pod.models.begin(), pod.models.end(), node.gpu) == pod.models.end()) {
    return false;
  }
  return pod.cpu_milli <= int64_t{node.vcpus} * 1000 &&
         static_cast<double>(pod.memory_mib) <= node.ram_gib * 1024.0;
}

bool MigCapable(const catalog::Catalog& catalog, const std::vector<std::string>& models) {
  for (const catalog::GpuModel& g : catalog.gpus()) {
    if (g.mig_profiles.empty()) continue;
    if (models.empty() || std::find(models.begin(), models.end(), g.name) != models.end()) {
      return true;
    }
  }
  return false;
}

// The GPU model of the node list holding the most GPUs: where a pod that
// names no gpu_spec most likely ran (openb: G2, mapped to A100-40GB, 71% of
// the GPUs).
std::string DominantModel(const std::vector<NodeShape>& shapes) {
  std::map<std::string, int64_t> gpus;
  for (const NodeShape& s : shapes) {
    if (!s.gpu.empty()) gpus[s.gpu] += static_cast<int64_t>(s.gpus) * s.count;
  }
  std::string best;
  int64_t most = 0;
  for (const auto& [model, n] : gpus) {
    if (n > most) best = model, most = n;
  }
  return best;
}

// The model a GPU pod's recorded run time belongs to: the first of its
// gpu_spec types (types listed together in the trace are of one generation,
// as V100M16|V100M32), else the node list's dominant model.
std::string RecordedModel(const PodShape& pod, const std::string& dominant) {
  if (pod.gpus == 0) return "";
  return pod.models.empty() ? dominant : pod.models.front();
}

JobSpec SpecOf(const PodShape& pod, bool mig, const std::string& name, const std::string& source,
               int line, const std::string& dominant) {
  JobSpec spec;
  spec.name = name;
  spec.tenant = "openb";
  spec.kind = WorkloadKind::kTraining;
  spec.resources.gpus = pod.gpus;
  spec.resources.gpu_models = pod.models;
  spec.resources.mig = mig;
  spec.work.recorded_on = RecordedModel(pod, dominant);
  if (pod.cpu_milli > 0) spec.resources.vcpus = static_cast<int>((pod.cpu_milli + 999) / 1000);
  if (pod.memory_mib > 0) spec.resources.ram_gib = static_cast<double>(pod.memory_mib) / 1024.0;
  // QoS classes: latency-sensitive and guaranteed pods go first; best-effort
  // pods may be preempted.
  if (pod.qos == "LS" || pod.qos == "Guaranteed") spec.priority = Priority::kHigh;
  if (pod.qos == "BE") {
    spec.priority = Priority::kLow;
    spec.preemptible = true;
  }
  if (!pod.qos.empty()) spec.labels["qos"] = pod.qos;
  spec.origin.source = source;
  spec.origin.path = "line " + std::to_string(line);
  return spec;
}

std::string ShapeKey(const PodShape& pod, bool mig) {
  std::string key = std::to_string(pod.gpus) + "|" + std::to_string(pod.cpu_milli) + "|" +
                    std::to_string(pod.memory_mib) + "|" + pod.qos + "|" + (mig ? "m" : "-");
  for (const std::string& m : pod.models) key += "|" + m;
  return key;
}

// Counts of rows left out, and why, for the notes.
struct OpenbCounts {
  std::map<std::string, int64_t> unscheduled;  // by pod_phase
  int64_t no_deletion = 0;
  int64_t negative = 0;
  int64_t unplaceable = 0;
  std::string unplaceable_first;
  int64_t fractional = 0;
  int64_t shared_not_mig = 0;
  int64_t cpu_only = 0;
  int64_t censored = 0;
};

std::optional<PodShape> ReadPodShape(const catalog::CsvRecord& rec, bool has_spec,
                                     ErrorList& errors) {
  PodShape pod;
  std::optional<int64_t> gpus = Count(rec, "num_gpu", errors);
  std::optional<int64_t> milli = Count(rec, "gpu_milli", errors);
  std::optional<int64_t> cpu = Count(rec, "cpu_milli", errors);
  std::optional<int64_t> mem = Count(rec, "memory_mib", errors);
  if (!gpus || !milli || !cpu || !mem) return std::nullopt;
  if (*gpus > 16) {
    errors.Add(rec.line(), "num_gpu", "\"" + rec.Text("num_gpu") + "\"", "must be <= 16");
    return std::nullopt;
  }
  if (*gpus == 1 && (*milli == 0 || *milli > 1000)) {
    errors.Add(rec.line(), "gpu_milli", "\"" + rec.Text("gpu_milli") + "\"",
               "must be 1-1000 (thousandths of one GPU) for a one-GPU pod");
    return std::nullopt;
  }
  pod.gpus = static_cast<int>(*gpus);
  pod.gpu_milli = *gpus == 1 ? static_cast<int>(*milli) : 1000;
  pod.cpu_milli = *cpu;
  pod.memory_mib = *mem;
  pod.qos = rec.Text("qos");
  if (has_spec && !rec.Text("gpu_spec").empty()) {
    const std::string& text = rec.Text("gpu_spec");
    size_t start = 0;
    while (start <= text.size()) {
      size_t bar = text.find('|', start);
      if (bar == std::string::npos) bar = text.size();
      const std::string part = text.substr(start, bar - start);
      const std::string model(CatalogModelForAlibabaGpu(part));
      if (model.empty()) {
        errors.Add(rec.line(), "gpu_spec", "\"" + text + "\"",
                   "names \"" + part + "\", not an Alibaba GPU type meridian maps");
        return std::nullopt;
      }
      if (std::find(pod.models.begin(), pod.models.end(), model) == pod.models.end()) {
        pod.models.push_back(model);
      }
      start = bar + 1;
    }
  }
  return pod;
}

void AddNotes(const OpenbCounts& c, const std::vector<NodeShape>& shapes,
              const std::string& nodes_path, Trace& trace) {
  auto& n = trace.notes;
  std::map<std::string, int> nodes_of;
  int cpu_nodes = 0;
  for (const NodeShape& s : shapes) {
    if (s.gpu.empty()) {
      cpu_nodes += s.count;
    } else {
      nodes_of[s.alibaba] += s.count;
    }
  }
  n.push_back("fleet: node list " + nodes_path + " as one owned cluster \"openb\" in " +
              kOpenbRegion + " (region assumed; the trace does not say)");
  for (const auto& [alibaba, count] : nodes_of) {
    n.push_back("GPU type " + alibaba + " -> " + std::string(CatalogModelForAlibabaGpu(alibaba)) +
                " (" + WithThousands(count) + " nodes)");
  }
  n.push_back(WithThousands(cpu_nodes) + " CPU-only nodes");
  if (std::string d = DominantModel(shapes); !d.empty()) {
    n.push_back("recorded run times: a pod's first gpu_spec type, else " + d +
                " (the model with the most GPUs) is taken as the model its duration was "
                "measured on; elsewhere it runs scaled by the models' speed ratio");
  }
  for (const auto& [phase, count] : c.unscheduled) {
    n.push_back("skipped " + WithThousands(count) + " pods never scheduled (pod_phase " + phase +
                ", no scheduled_time)");
  }
  if (c.no_deletion > 0) {
    n.push_back("skipped " + WithThousands(c.no_deletion) + " pods without deletion_time");
  }
  if (c.negative > 0) {
    n.push_back("skipped " + WithThousands(c.negative) +
                " pods whose deletion_time is before scheduled_time");
  }
  if (c.unplaceable > 0) {
    n.push_back("skipped " + WithThousands(c.unplaceable) +
                " pods no node of the node list can hold (first: " + c.unplaceable_first + ")");
  }
  n.push_back(WithThousands(c.fractional) + " pods with a fraction of one GPU (gpu_milli < 1000)" +
              (c.shared_not_mig > 0 ? ", of which " + WithThousands(c.shared_not_mig) +
                                          " allow no MIG-capable model (shared slice, mig false)"
                                    : ""));
  n.push_back(WithThousands(c.cpu_only) + " CPU-only pods (gpus 0)");
  n.push_back(WithThousands(c.censored) +
              " pods still running at the trace end (deletion_time = the last one): their "
              "duration stops there");
}

}  // namespace

Status ReadOpenb(const std::string& path, const std::string& nodes_path,
                 const catalog::Catalog& catalog, Trace& trace) {
  const std::string nodes = nodes_path.empty() ? FindNodeList(path) : nodes_path;
  if (nodes.empty()) {
    return Status::NotFound(path +
                            ": no openb_node_list_all_node.csv (or _gpu_node.csv) beside it; "
                            "name the node list");
  }
  std::vector<NodeShape> shapes;
  if (Status s = ReadNodes(nodes, shapes); !s.ok()) return s;
  Result<catalog::CsvTable> table =
      LoadCsv(path, {"name", "cpu_milli", "memory_mib", "num_gpu", "gpu_milli", "qos", "pod_phase",
                     "creation_time", "deletion_time", "scheduled_time"});
  if (!table.ok()) return table.status();
  const bool has_spec = table->ColumnIndex("gpu_spec") >= 0;
  const std::string dominant = DominantModel(shapes);
  ErrorList errors(path);
  SpecTable specs(&trace.specs);
  OpenbCounts counts;
  int64_t last_deletion = 0;
  for (const catalog::CsvRow& row : table->rows()) {
    catalog::CsvRecord rec(*table, row);
    // A deletion_time that is not a count is reported by the loop below.
    if (std::optional<int64_t> d = WholeCount(rec.Text("deletion_time"))) {
      last_deletion = std::max(last_deletion, *d);
    }
  }
  for (const catalog::CsvRow& row : table->rows()) {
    catalog::CsvRecord rec(*table, row);
    std::optional<PodShape> pod = ReadPodShape(rec, has_spec, errors);
    if (!pod) continue;
    std::optional<int64_t> created = Count(rec, "creation_time", errors);
    if (!created) continue;
    if (rec.Text("scheduled_time").empty()) {
      ++counts.unscheduled[rec.Text("pod_phase")];
      continue;
    }
    if (rec.Text("deletion_time").empty()) {
      ++counts.no_deletion;
      continue;
    }
    std::optional<int64_t> scheduled = Count(rec, "scheduled_time", errors);
    std::optional<int64_t> deleted = Count(rec, "deletion_time", errors);
    if (!scheduled || !deleted) continue;
    if (*deleted < *scheduled) {
      ++counts.negative;
      continue;
    }
    const std::string& name = rec.Text("name");
    if (std::none_of(shapes.begin(), shapes.end(),
                     [&](const NodeShape& n) { return Fits(*pod, n); })) {
      if (counts.unplaceable++ == 0) counts.unplaceable_first = name;
      continue;
    }
    const bool fractional = pod->gpus == 1 && pod->gpu_milli < 1000;
    const bool mig = fractional && MigCapable(catalog, pod->models);
    counts.fractional += fractional ? 1 : 0;
    counts.shared_not_mig += fractional && !mig ? 1 : 0;
    counts.cpu_only += pod->gpus == 0 ? 1 : 0;
    counts.censored += *deleted == last_deletion ? 1 : 0;
    const std::string key = ShapeKey(*pod, mig);
    int64_t index = specs.Find(key);
    if (index < 0) {
      JobSpec spec = SpecOf(*pod, mig, name, path, rec.line(), dominant);
      if (Status s = spec::ValidateAgainstCatalog(spec, catalog, 0); !s.ok()) {
        errors.Add(rec.line(), "", "", s.message());
        continue;
      }
      index = specs.Add(key, std::move(spec));
    }
    TraceJob job;
    job.name = name;
    job.spec = static_cast<uint32_t>(index);
    job.submit_s = *created;
    job.duration_s = *deleted - *scheduled;
    job.gpu_fraction = fractional ? static_cast<float>(pod->gpu_milli) / 1000.0f : 0.0f;
    trace.jobs.push_back(std::move(job));
  }
  if (!errors.ok()) return errors.ToStatus();
  trace.fleet = FleetOf(shapes, nodes);
  AddNotes(counts, shapes, nodes, trace);
  return Status::Ok();
}

}  // namespace meridian::sim
