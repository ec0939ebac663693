#include "cli/mig_cmd.h"

#include <nlohmann/json.hpp>

#include "catalog/catalog.h"
#include "catalog/csv.h"
#include "cli/commands.h"
#include "cli/mig_openb.h"
#include "cli/table.h"
#include "mig/geometry.h"
#include "mig/pack.h"
#include "mig/repartition.h"

namespace meridian::cli {

namespace {

Result<std::shared_ptr<const catalog::Catalog>> Open(const std::string& dir) {
  return dir.empty() ? catalog::Catalog::LoadEmbedded() : catalog::Catalog::LoadFromDirectory(dir);
}

Result<const catalog::GpuModel*> MigGpu(const catalog::Catalog& cat, const std::string& name) {
  const catalog::GpuModel* gpu = cat.FindGpu(name);
  std::string known;
  for (const auto& g : cat.gpus()) {
    if (!g.mig_profiles.empty()) known += (known.empty() ? "" : ", ") + g.name;
  }
  if (gpu == nullptr) {
    return Status::Invalid("--gpu: \"" + name + "\" is not a catalog GPU model (MIG models: " + known + ")");
  }
  if (gpu->mig_profiles.empty()) {
    return Status::Invalid("--gpu: \"" + name + "\" has no MIG profiles (MIG models: " + known + ")");
  }
  return gpu;
}

// "3g.40gb@4" -> {"3g.40gb", 4}.
Result<catalog::MigInstance> ParseInstance(const std::string& s, size_t i) {
  size_t at = s.find('@');
  std::optional<int> start = at == std::string::npos ? std::nullopt
                                                     : catalog::ParseInt(s.substr(at + 1));
  if (!start) {
    return Status::Invalid("instance " + std::to_string(i + 1) + ": \"" + s +
                           "\" must be PROFILE@START (e.g. 3g.40gb@4)");
  }
  return catalog::MigInstance{s.substr(0, at), *start};
}

// "3g.40gb", "3g.40gbx2", "milli:460", "milli:460x3" -> needs.
Status ParseRequest(const catalog::GpuModel& gpu, const std::string& s, size_t i,
                    std::vector<mig::SliceRequest>& out) {
  std::string what = s;
  int count = 1;
  size_t x = s.rfind('x');
  if (x != std::string::npos && x + 1 < s.size()) {
    if (std::optional<int> n = catalog::ParseInt(s.substr(x + 1)); n && *n >= 1) {
      count = *n;
      what = s.substr(0, x);
    }
  }
  mig::SliceNeed need;
  if (what.rfind("milli:", 0) == 0) {
    std::optional<int> m = catalog::ParseInt(what.substr(6));
    if (!m || *m < 1 || *m > 1000) {
      return Status::Invalid("request " + std::to_string(i + 1) + ": \"" + s +
                             "\": milli must be a whole number 1..1000 (thousandths of one GPU)");
    }
    need = mig::NeedForShare(*m);
  } else {
    const catalog::MigProfile* p = catalog::FindMigProfile(gpu, what);
    if (p == nullptr) {
      std::string known;
      for (const auto& q : gpu.mig_profiles) known += (known.empty() ? "" : ", ") + q.name;
      return Status::Invalid("request " + std::to_string(i + 1) + ": \"" + what +
                             "\" is not a MIG profile of " + gpu.name + " (" + known +
                             "), nor milli:M");
    }
    need = mig::NeedOf(*p);
  }
  for (int k = 0; k < count; ++k) out.push_back({s, need});
  return Status::Ok();
}

int Layouts(const MigCommands& c, const catalog::GpuModel& gpu, std::ostream& out) {
  mig::EnumerateOptions o{.maximal_only = c.maximal, .media_profiles = !c.no_media};
  std::vector<mig::Layout> all = mig::EnumerateLayouts(gpu, o);
  if (c.output == "json") {
    nlohmann::json j = {{"gpu", gpu.name}, {"count", all.size()}, {"layouts", nlohmann::json::array()}};
    for (const mig::Layout& l : all) {
      nlohmann::json inst = nlohmann::json::array();
      for (const auto& in : mig::Named(gpu, l)) inst.push_back({{"profile", in.profile}, {"start", in.start}});
      j["layouts"].push_back(inst);
    }
    out << j.dump(2) << "\n";
    return kExitOk;
  }
  Table t({{"#", Table::Align::kRight}, {"instances (profile@start)"}, {"compute", Table::Align::kRight},
           {"memory", Table::Align::kRight}});
  for (size_t i = 0; i < all.size(); ++i) {
    t.AddRow({std::to_string(i + 1), mig::Describe(gpu, all[i]),
              std::to_string(mig::ComputeSlices(gpu, all[i])) + "/7",
              std::to_string(mig::UsedSlices(gpu, all[i]).size()) + "/8"});
  }
  t.Print(out);
  out << all.size() << (c.maximal ? " maximal" : "") << " layouts of " << gpu.name
      << (c.no_media ? " without +me profiles" : "") << " (docs/mig.md)\n";
  return kExitOk;
}

int Check(const MigCommands& c, const catalog::GpuModel& gpu, std::ostream& out, std::ostream& err) {
  std::vector<catalog::MigInstance> named;
  for (size_t i = 0; i < c.items.size(); ++i) {
    Result<catalog::MigInstance> in = ParseInstance(c.items[i], i);
    if (!in.ok()) {
      err << "meridian mig check: " << in.status().message() << "\n";
      return kExitBadInput;
    }
    named.push_back(*in);
  }
  Result<mig::Layout> l = mig::CheckLayout(gpu, named);
  if (!l.ok()) {
    err << "meridian mig check: " << l.status().message() << "\n";
    return kExitBadInput;
  }
  out << gpu.name << ": valid: " << mig::Describe(gpu, *l) << " (" << mig::ComputeSlices(gpu, *l)
      << "/7 compute, " << mig::UsedSlices(gpu, *l).size() << "/8 memory slices)\n";
  return kExitOk;
}

int PackCmd(const MigCommands& c, const catalog::GpuModel& gpu, std::ostream& out, std::ostream& err) {
  if (c.gpus < 1 || c.gpus > 100000) {
    err << "meridian mig pack: --gpus: \"" << c.gpus << "\" must be 1..100000\n";
    return kExitBadInput;
  }
  std::vector<mig::SliceRequest> reqs;
  for (size_t i = 0; i < c.items.size(); ++i) {
    if (Status s = ParseRequest(gpu, c.items[i], i, reqs); !s.ok()) {
      err << "meridian mig pack: " << s.message() << "\n";
      return kExitBadInput;
    }
  }
  std::vector<mig::GpuState> gpus(c.gpus, mig::GpuState{&gpu, {}, false});
  mig::PackResult r = mig::Pack(gpus, reqs);
  if (c.output == "json") {
    nlohmann::json j = {{"gpu", gpu.name},           {"requests", reqs.size()},
                        {"placed", r.placed.size()}, {"gpus_used", r.gpus_used},
                        {"gpus", nlohmann::json::array()}, {"unplaced", nlohmann::json::array()}};
    for (size_t g = 0; g < r.layouts.size(); ++g) {
      if (r.layouts[g].empty()) continue;
      nlohmann::json inst = nlohmann::json::array();
      for (const auto& in : mig::Named(gpu, r.layouts[g])) inst.push_back({{"profile", in.profile}, {"start", in.start}});
      j["gpus"].push_back({{"gpu", g}, {"instances", inst}});
    }
    for (size_t q : r.unplaced) j["unplaced"].push_back(reqs[q].id);
    out << j.dump(2) << "\n";
    return kExitOk;
  }
  Table t({{"GPU", Table::Align::kRight}, {"instances (profile@start)"}, {"memory", Table::Align::kRight}});
  for (size_t g = 0; g < r.layouts.size(); ++g) {
    if (r.layouts[g].empty()) continue;
    t.AddRow({std::to_string(g), mig::Describe(gpu, r.layouts[g]),
              std::to_string(mig::UsedSlices(gpu, r.layouts[g]).size()) + "/8"});
  }
  t.Print(out);
  out << r.placed.size() << " of " << reqs.size() << " requests placed on " << r.gpus_used << " of "
      << c.gpus << " " << gpu.name << " GPUs";
  if (!r.unplaced.empty()) {
    out << "; not placed:";
    for (size_t q : r.unplaced) out << " " << reqs[q].id;
  }
  out << "\n";
  return kExitOk;
}

// "1:1g.10gb@4:600" -> GPU 1, 1g.10gb at 4, drain cost 600.
Status ParseRunning(const catalog::GpuModel& gpu, const std::string& s, size_t i, int gpus,
                    std::vector<mig::GpuNow>& out) {
  const std::string where = "instance " + std::to_string(i + 1) + ": \"" + s + "\"";
  size_t colon = s.find(':');
  std::optional<int> g = colon == std::string::npos ? std::nullopt : catalog::ParseInt(s.substr(0, colon));
  if (!g) return Status::Invalid(where + " must be GPU:PROFILE@START[:COST] (e.g. 0:1g.10gb@4:600)");
  if (*g < 0 || *g >= gpus) {
    return Status::Invalid(where + ": GPU " + std::to_string(*g) + " is not one of 0.." +
                           std::to_string(gpus - 1) + " (--gpus)");
  }
  std::string rest = s.substr(colon + 1);
  int64_t cost = 0;
  if (size_t c = rest.find(':'); c != std::string::npos) {
    std::optional<int> v = catalog::ParseInt(rest.substr(c + 1));
    if (!v || *v < 0) return Status::Invalid(where + ": COST must be a whole number >= 0");
    cost = *v;
    rest = rest.substr(0, c);
  }
  Result<catalog::MigInstance> in = ParseInstance(rest, i);
  if (!in.ok()) return in.status();
  const catalog::MigProfile* p = catalog::FindMigProfile(gpu, in->profile);
  if (p == nullptr) return Status::Invalid(where + ": \"" + in->profile + "\" is not a MIG profile of " + gpu.name);
  out[*g].running.push_back({{static_cast<int>(p - gpu.mig_profiles.data()), in->start},
                             static_cast<int64_t>(i), cost});
  return Status::Ok();
}

int Repartition(const MigCommands& c, const catalog::GpuModel& gpu, std::ostream& out, std::ostream& err) {
  if (c.gpus < 1 || c.gpus > 100000) {
    err << "meridian mig repartition: --gpus: \"" << c.gpus << "\" must be 1..100000\n";
    return kExitBadInput;
  }
  std::vector<mig::GpuNow> gpus(c.gpus, mig::GpuNow{&gpu, {}});
  for (size_t i = 0; i < c.items.size(); ++i) {
    if (Status s = ParseRunning(gpu, c.items[i], i, c.gpus, gpus); !s.ok()) {
      err << "meridian mig repartition: " << s.message() << "\n";
      return kExitBadInput;
    }
  }
  for (size_t g = 0; g < gpus.size(); ++g) {
    mig::Layout l;
    for (const auto& r : gpus[g].running) l.push_back(r.instance);
    if (Result<mig::Layout> ok = mig::CheckLayout(gpu, mig::Named(gpu, l)); !ok.ok()) {
      err << "meridian mig repartition: GPU " << g << ": " << ok.status().message() << "\n";
      return kExitBadInput;
    }
  }
  std::vector<mig::SliceRequest> reqs;
  for (size_t i = 0; i < c.wait.size(); ++i) {
    if (Status s = ParseRequest(gpu, c.wait[i], i, reqs); !s.ok()) {
      err << "meridian mig repartition: --wait " << s.message() << "\n";
      return kExitBadInput;
    }
  }
  std::vector<mig::WaitingRequest> waiting;
  for (size_t i = 0; i < reqs.size(); ++i) waiting.push_back({static_cast<int64_t>(i), reqs[i].need});
  std::vector<mig::Proposal> ps = mig::ProposeRepartition(gpus, waiting);
  if (c.output == "json") {
    nlohmann::json j = nlohmann::json::array();
    for (const mig::Proposal& p : ps) {
      nlohmann::json drains = nlohmann::json::array();
      for (size_t d = 0; d < p.drained.size(); ++d) {
        drains.push_back({{"instance", c.items[p.drained[d].holder]},
                          {"cost", p.drained[d].cost},
                          {"to_gpu", p.moved_to[d]},
                          {"to_start", p.moved[d].start}});
      }
      nlohmann::json served = nlohmann::json::array();
      for (const auto& [id, at] : p.served) served.push_back(reqs[id].id);
      j.push_back({{"gpu", p.gpu}, {"before", mig::Describe(gpu, p.before)},
                   {"after", mig::Describe(gpu, p.after)}, {"drains", drains},
                   {"serves", served}, {"gained", p.gained}, {"cost", p.cost}});
    }
    out << j.dump(2) << "\n";
    return kExitOk;
  }
  if (ps.empty()) {
    out << "no change serves more waiting requests (docs/mig.md, \"Repartitioning\")\n";
    return kExitOk;
  }
  for (const mig::Proposal& p : ps) {
    out << "GPU " << p.gpu << ": " << mig::Describe(gpu, p.before) << " -> " << mig::Describe(gpu, p.after)
        << "; serves " << p.gained << " more; drain";
    for (size_t d = 0; d < p.drained.size(); ++d) {
      out << " " << c.items[p.drained[d].holder] << " (to GPU " << p.moved_to[d] << " at "
          << p.moved[d].start << ")";
    }
    out << ", cost " << p.cost << "\n";
  }
  return kExitOk;
}

}  // namespace

std::unique_ptr<MigCommands> AddMigCommands(CLI::App& app) {
  auto c = std::make_unique<MigCommands>();
  c->mig = app.add_subcommand("mig", "MIG geometry: layouts, checks, packing (docs/mig.md)");
  c->mig->require_subcommand(1);
  auto common = [&](CLI::App* s) {
    s->add_option("--gpu", c->gpu, "MIG GPU model (A100-40GB, A100-80GB, H100-80GB, H200-141GB, B200)")
        ->capture_default_str();
    s->add_option("-o,--output", c->output, "output format")
        ->check(CLI::IsMember({"table", "json"}))
        ->capture_default_str();
  };
  c->layouts = c->mig->add_subcommand("layouts", "every valid MIG layout of one GPU");
  common(c->layouts);
  c->layouts->add_flag("--maximal", c->maximal, "only layouts to which no instance can be added");
  c->layouts->add_flag("--no-media", c->no_media, "leave out the +me profiles");
  c->check = c->mig->add_subcommand("check", "check one MIG layout: PROFILE@START ...");
  common(c->check);
  c->check->add_option("INSTANCE", c->items, "instances, e.g. 3g.40gb@4 2g.20gb@0 2g.20gb@2")->required();
  c->pack = c->mig->add_subcommand(
      "pack", "pack slice requests onto GPUs: PROFILE, PROFILExN, milli:M (a share of one GPU)");
  common(c->pack);
  c->pack->add_option("--gpus", c->gpus, "GPUs of --gpu to pack onto")->capture_default_str();
  c->pack->add_option("REQUEST", c->items, "requests, e.g. 3g.40gb 2g.20gbx2 milli:460")->required();
  c->repartition = c->mig->add_subcommand(
      "repartition", "which running instances to drain so more waiting requests fit (docs/mig.md)");
  common(c->repartition);
  c->repartition->add_option("--gpus", c->gpus, "GPUs of --gpu")->capture_default_str();
  c->repartition->add_option("--wait", c->wait, "a waiting request (repeat the flag): PROFILE, PROFILExN, milli:M")
      ->required()
      ->allow_extra_args(false);
  c->repartition->add_option("INSTANCE", c->items,
                             "running instances GPU:PROFILE@START[:COST], e.g. 0:1g.10gb@4:600");
  c->openb = c->mig->add_subcommand(
      "openb", "the openb trace's pods on its own nodes: whole GPUs vs its sharing vs MIG slices");
  c->openb->add_option("--trace", c->trace, "openb pod list (csv/openb_pod_list_default.csv)")->required();
  c->openb->add_option("--mig-gpu", c->mig_gpu,
                       "also count every GPU of the trace as this MIG model (e.g. A100-80GB)");
  c->openb->add_option("-o,--output", c->output, "output format")
      ->check(CLI::IsMember({"table", "json"}))
      ->capture_default_str();
  return c;
}

std::optional<int> RunMigCommand(const MigCommands& c, const std::string& catalog_dir,
                                 std::ostream& out, std::ostream& err) {
  if (!c.mig->parsed()) return std::nullopt;
  auto cat = Open(catalog_dir);
  if (!cat.ok()) {
    err << "meridian mig: " << cat.status().message() << "\n";
    return catalog_dir.empty() ? kExitInternal : kExitBadInput;
  }
  if (c.openb->parsed()) return RunMigOpenb(**cat, c.trace, c.mig_gpu, c.output == "json", out, err);
  Result<const catalog::GpuModel*> gpu = MigGpu(**cat, c.gpu);
  if (!gpu.ok()) {
    err << "meridian mig: " << gpu.status().message() << "\n";
    return kExitBadInput;
  }
  if (c.layouts->parsed()) return Layouts(c, **gpu, out);
  if (c.check->parsed()) return Check(c, **gpu, out, err);
  if (c.pack->parsed()) return PackCmd(c, **gpu, out, err);
  if (c.repartition->parsed()) return Repartition(c, **gpu, out, err);
  return kExitBadInput;
}

}  // namespace meridian::cli
