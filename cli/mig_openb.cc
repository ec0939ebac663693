#include "cli/mig_openb.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "catalog/csv.h"
#include "cli/commands.h"
#include "cli/table.h"
#include "mig/fractional.h"

namespace meridian::cli {

namespace {

Result<catalog::CsvTable> Load(const std::string& path, const std::vector<std::string_view>& cols) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::Invalid("--trace: cannot read \"" + path + "\"");
  std::stringstream ss;
  ss << in.rdbuf();
  Result<catalog::CsvTable> t = catalog::CsvTable::Parse(path, ss.str());
  if (!t.ok()) return t.status();
  if (Status s = t->RequireColumns(cols); !s.ok()) return s;
  return t;
}

// The trace's GPU types with a MIG model (docs/trace-format.md, "GPU types").
const catalog::GpuModel* MigModelOf(const catalog::Catalog& cat, const std::string& type) {
  if (type == "G2") return cat.FindGpu("A100-40GB");
  if (type == "G3") return cat.FindGpu("A100-80GB");
  return nullptr;
}

Result<std::vector<mig::TraceNode>> Nodes(const catalog::Catalog& cat, const std::string& pods_path) {
  std::filesystem::path dir = std::filesystem::path(pods_path).parent_path();
  std::filesystem::path path = dir / "openb_node_list_all_node.csv";
  if (!std::filesystem::exists(path)) path = dir / "openb_node_list_gpu_node.csv";
  Result<catalog::CsvTable> t = Load(path.string(), {"sn", "cpu_milli", "memory_mib", "gpu", "model"});
  if (!t.ok()) return t.status();
  std::vector<mig::TraceNode> out;
  for (const auto& row : t->rows()) {
    catalog::CsvRecord r(*t, row);
    Result<int> gpus = r.Integer("gpu"), cpu = r.Integer("cpu_milli"), mem = r.Integer("memory_mib");
    if (!gpus.ok()) return gpus.status();
    if (!cpu.ok()) return cpu.status();
    if (!mem.ok()) return mem.status();
    if (*gpus <= 0) continue;  // CPU-only nodes take no GPU pod
    out.push_back({r.Text("model"), *gpus, *cpu, *mem, MigModelOf(cat, r.Text("model"))});
  }
  return out;
}

Result<std::vector<mig::TracePod>> Pods(const std::string& path) {
  Result<catalog::CsvTable> t =
      Load(path, {"name", "cpu_milli", "memory_mib", "num_gpu", "gpu_milli", "creation_time"});
  if (!t.ok()) return t.status();
  std::vector<std::pair<int64_t, mig::TracePod>> pods;
  for (const auto& row : t->rows()) {
    catalog::CsvRecord r(*t, row);
    Result<int> gpus = r.Integer("num_gpu"), milli = r.Integer("gpu_milli"),
                cpu = r.Integer("cpu_milli"), mem = r.Integer("memory_mib"),
                at = r.Integer("creation_time");
    for (const Result<int>* x : {&gpus, &milli, &cpu, &mem, &at}) {
      if (!x->ok()) return x->status();
    }
    if (*gpus <= 0) continue;
    if (*gpus == 1 && (*milli < 1 || *milli > 1000)) {
      return r.Error("gpu_milli", "\"" + r.Text("gpu_milli") + "\" must be 1..1000 for a one-GPU pod");
    }
    pods.push_back({*at, {*gpus, *gpus == 1 ? *milli : 1000, *cpu, *mem}});
  }
  std::stable_sort(pods.begin(), pods.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<mig::TracePod> out;
  for (auto& p : pods) out.push_back(p.second);
  return out;
}

std::string Gpus(int64_t milli) { return Fixed(static_cast<double>(milli) / 1000.0, 1); }

}  // namespace

int RunMigOpenb(const catalog::Catalog& cat, const std::string& trace, const std::string& mig_gpu,
                bool json, std::ostream& out, std::ostream& err) {
  Result<std::vector<mig::TracePod>> pods = Pods(trace);
  if (!pods.ok()) {
    err << "meridian mig openb: " << pods.status().message() << "\n";
    return kExitBadInput;
  }
  Result<std::vector<mig::TraceNode>> nodes = Nodes(cat, trace);
  if (!nodes.ok()) {
    err << "meridian mig openb: " << nodes.status().message() << "\n";
    return kExitBadInput;
  }
  struct Row {
    std::string name;
    mig::FillResult r;
  };
  std::vector<Row> rows = {
      {"whole GPUs", mig::Fill(*nodes, *pods, mig::Sharing::kWhole)},
      {"trace sharing (gpu_milli, best fit)", mig::Fill(*nodes, *pods, mig::Sharing::kShared)},
      {"MIG on G2/G3 (A100), whole elsewhere", mig::Fill(*nodes, *pods, mig::Sharing::kMig)},
  };
  if (!mig_gpu.empty()) {
    const catalog::GpuModel* m = cat.FindGpu(mig_gpu);
    if (m == nullptr || m->mig_profiles.empty()) {
      err << "meridian mig openb: --mig-gpu: \"" << mig_gpu << "\" is not a MIG GPU model of the catalog\n";
      return kExitBadInput;
    }
    std::vector<mig::TraceNode> all = *nodes;
    for (auto& n : all) n.mig = m;
    rows.push_back({"MIG on every GPU as " + mig_gpu, mig::Fill(all, *pods, mig::Sharing::kMig)});
  }
  if (json) {
    nlohmann::json j = nlohmann::json::array();
    for (const Row& row : rows) {
      const mig::FillResult& r = row.r;
      j.push_back({{"mode", row.name}, {"pods", r.pods}, {"placed", r.placed},
                   {"fractional_pods", r.fractional_pods}, {"fractional_placed", r.fractional_placed},
                   {"gpus", r.gpus}, {"requested_milli", r.requested_milli}, {"held_milli", r.held_milli},
                   {"unallocated_gpus", r.unallocated_gpus()}, {"idle_gpus", r.idle_gpus},
                   {"mig_gpus", r.mig_gpus}, {"profiles", r.profiles}});
    }
    out << j.dump(2) << "\n";
    return kExitOk;
  }
  const mig::FillResult& base = rows[0].r;
  out << trace << ": " << base.pods << " GPU pods (" << base.fractional_pods
      << " fractional) in creation order onto " << nodes->size() << " GPU nodes, " << base.gpus
      << " GPUs; none leaves\n";
  Table t({{"placement"}, {"pods placed", Table::Align::kRight}, {"fractional placed", Table::Align::kRight},
           {"GPU demand placed", Table::Align::kRight}, {"GPUs held", Table::Align::kRight},
           {"unallocated GPUs", Table::Align::kRight}, {"idle GPUs", Table::Align::kRight}});
  for (const Row& row : rows) {
    const mig::FillResult& r = row.r;
    t.AddRow({row.name, std::to_string(r.placed), std::to_string(r.fractional_placed),
              Gpus(r.requested_milli), Gpus(r.held_milli), Fixed(r.unallocated_gpus(), 1),
              std::to_string(r.idle_gpus)});
  }
  t.Print(out);
  for (const Row& row : rows) {
    if (row.r.profiles.empty()) continue;
    out << row.name << ": " << row.r.mig_gpus << " GPUs in MIG mode; instances:";
    for (const auto& [name, n] : row.r.profiles) out << " " << name << " x" << n;
    out << "\n";
  }
  out << "GPU demand placed: whole GPUs x 1 and gpu_milli / 1000 of the placed pods. GPUs held: "
         "whole GPUs, the shares, MIG instances as compute slices / 7. Published for this trace "
         "(FGD, Weng et al., USENIX ATC'23): FGD leaves up to 49% fewer GPUs unallocated than "
         "packing baselines (290 more GPUs used) on the 6,200-GPU cluster; that compares sharing "
         "schedulers at a given arrived load, this compares placement granularities in one fill "
         "(docs/mig.md).\n";
  return kExitOk;
}

}  // namespace meridian::cli
