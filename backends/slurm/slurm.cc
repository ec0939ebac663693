#include "backends/slurm/slurm.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <set>

#include "backends/slurm/parse.h"
#include "backends/slurm/submit.h"

namespace meridian::backends {

namespace {

namespace fs = std::filesystem;
using control::RunObservation;
using control::RunPhase;

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string FirstLine(const std::string& s) {
  std::string t = s.substr(0, s.find_last_not_of(" \n\r\t") + 1);
  if (size_t nl = t.rfind('\n'); nl != std::string::npos) t = t.substr(nl + 1);
  return t.size() > 300 ? t.substr(0, 300) : t;
}

// The job's environment file: mode 0600 (it may hold the tenant's secrets),
// replaced whole on a relaunch, never through a link.
Status WriteEnvironmentFile(const std::string& path, const std::string& text) {
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) return Status::Internal("\"" + path + "\": " + std::strerror(errno));
  const bool ok = fchmod(fd, 0600) == 0 &&
                  write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  close(fd);
  if (!ok) return Status::Internal("\"" + path + "\": cannot write the job's environment");
  return Status::Ok();
}

std::string Join(const std::vector<int>& v) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
  return s;
}

// scancel's answer for a job that has ended (or is ending): nothing to stop.
bool AlreadyEnded(const std::string& err) {
  return err.find("Invalid job id") != std::string::npos ||
         err.find("already completing or completed") != std::string::npos;
}

// One attempt this backend watches.
struct Watched {
  std::string job_id;
  int attempt = 1;
  std::string slurm_id;
  std::string node;
  std::vector<int> gpus;           // as meridian chose them
  RunObservation obs;
  std::optional<RunPhase> reported;
  bool done = false;
  int64_t kill_at_ms = -1;         // Stop: scancel once the grace period ends
};

// What the last sinfo said of a node, for launches.
struct KnownNode {
  control::BackendNode node;
  std::string gres_type;
  std::string partition;  // the first of the options' partitions it is in
};

class SlurmBackend final : public control::Backend {
 public:
  explicit SlurmBackend(SlurmBackendOptions o)
      : options_(std::move(o)), env_(Completed(options_.environment)) {}

  Status Init();
  std::string_view name() const override { return "slurm"; }
  Result<std::string> Launch(const control::LaunchRequest& request) override;
  Status Stop(const std::string& handle, int64_t grace_s) override;
  std::vector<RunObservation> Poll() override;
  Result<RunObservation> Adopt(const std::string& job_id, int attempt,
                               const std::string& handle) override;
  std::vector<control::BackendNode> Nodes() override;
  Result<std::optional<std::string>> FindLaunched(const std::string& job_id, int attempt) override;
  Status Retire(const std::string& job_id, int attempts) override;

 private:
  // The Slurm job id of the job named `name` (a live one first), if any.
  Result<std::optional<std::string>> FindByName(const std::string& name);
  // Watches a submitted job; returns its handle.
  std::string Watch(const control::LaunchRequest& r, const std::string& slurm_id,
                    const std::string& message);
  bool MigNode(const std::string& gres, control::BackendNode* n) const;
  Result<ProcessOutput> Run(const std::string& tool, std::vector<std::string> args,
                            std::vector<std::string> env = {});
  std::vector<std::string> CommandEnv() const;
  std::string Handle(const std::string& slurm_id) const {
    return "slurm:" + options_.cluster + ":" + slurm_id;
  }
  Result<std::string> SlurmId(const std::string& handle) const;
  Watched* Find(const std::string& handle);
  Status RefreshNodes(bool force);
  Result<std::optional<slurm::JobRecord>> ShowJob(const std::string& slurm_id);
  void Apply(Watched& w, const slurm::JobRecord& rec);
  void RefreshJobs();
  void Cancel(Watched& w);

  std::mutex mu_;
  const SlurmBackendOptions options_;
  const BackendEnvironment env_;
  std::map<std::string, std::string> tools_;  // "sbatch" -> its path
  std::string script_path_;
  std::map<std::string, std::string> base_env_;
  std::vector<std::unique_ptr<Watched>> watched_;
  std::map<std::string, KnownNode> nodes_;
  std::vector<std::string> node_order_;
  int64_t nodes_at_ms_ = -1, jobs_at_ms_ = -1;
  std::string nodes_error_;
  // Names of attempts whose sbatch may have submitted them although it did
  // not say so (it timed out or was killed): a retry looks for them first.
  std::set<std::string> uncertain_;
};

Status SlurmBackend::Init() {
  if (options_.partitions.empty()) return Status::Invalid("slurm.partitions: name at least one partition");
  if (options_.cluster.empty() || options_.cluster.find(':') != std::string::npos) {
    return Status::Invalid("cluster: \"" + options_.cluster + "\" is not a cluster name");
  }
  const char* path = std::getenv("PATH");
  const std::string dirs = !options_.bin_dir.empty() ? options_.bin_dir
                           : path != nullptr && *path ? path
                                                      : "/usr/local/bin:/usr/bin:/bin";
  for (const char* tool : {"sbatch", "squeue", "scontrol", "scancel", "sinfo"}) {
    size_t from = 0;
    for (;;) {
      size_t colon = dirs.find(':', from);
      std::string dir = dirs.substr(from, colon == std::string::npos ? colon : colon - from);
      std::string candidate = (dir.empty() ? "." : dir) + "/" + tool;
      if (access(candidate.c_str(), X_OK) == 0) {
        tools_[tool] = candidate;
        break;
      }
      if (colon == std::string::npos) break;
      from = colon + 1;
    }
    if (!tools_.count(tool)) {
      return Status::Invalid(std::string("slurm: ") + tool + " not found in \"" + dirs +
                             "\" (install slurm-client, or set slurm.bin_dir)");
    }
  }
  if (options_.max_log_bytes > 0 && access(options_.log_relay.c_str(), X_OK) != 0) {
    return Status::Invalid("node.max_log_bytes: " + std::to_string(options_.max_log_bytes) +
                           " needs meridian-log-relay to cut the logs on the compute nodes; \"" +
                           options_.log_relay + "\" is not an executable file (install it beside "
                           "meridian, or set node.max_log_bytes: 0)");
  }
  std::error_code ec;
  fs::create_directories(options_.state_dir, ec);
  if (ec) return Status::Internal("state_dir \"" + options_.state_dir + "\": " + ec.message());
  script_path_ = (fs::path(options_.state_dir) / "meridian-batch.sh").string();
  {
    std::ofstream f(script_path_, std::ios::trunc);
    f << slurm::kBatchScript;
    if (!f) return Status::Internal("cannot write the batch script \"" + script_path_ + "\"");
  }
  fs::permissions(script_path_, fs::perms::owner_all | fs::perms::group_read | fs::perms::others_read, ec);
  base_env_["PATH"] = path != nullptr && *path ? path : "/usr/local/bin:/usr/bin:/bin";
  for (const char* n : {"HOME", "USER", "LANG"}) {
    if (const char* v = std::getenv(n)) base_env_[n] = v;
  }
  if (!options_.slurm_conf.empty()) base_env_["SLURM_CONF"] = options_.slurm_conf;
  return Status::Ok();
}

std::vector<std::string> SlurmBackend::CommandEnv() const {
  std::vector<std::string> env = slurm::SbatchEnvironment(base_env_.at("PATH"), options_.slurm_conf);
  env.push_back("SLURM_TIME_FORMAT=%s");  // epoch seconds: no time zone to guess
  return env;
}

Result<ProcessOutput> SlurmBackend::Run(const std::string& tool, std::vector<std::string> args,
                                        std::vector<std::string> env) {
  ProcessCall call;
  call.argv.push_back(tools_.at(tool));
  call.argv.insert(call.argv.end(), args.begin(), args.end());
  call.env = env.empty() ? CommandEnv() : std::move(env);
  call.timeout_ms = options_.command_timeout_ms;
  auto o = env_.run(call);
  if (o.ok() && (o->timed_out || o->output_capped)) {
    return Status::Internal("\"" + call.argv[0] + "\" " +
                            (o->timed_out ? "did not finish within " +
                                                std::to_string(call.timeout_ms) + " ms (killed)"
                                          : std::string("wrote more output than it may (killed)")));
  }
  return o;
}

Result<std::string> SlurmBackend::SlurmId(const std::string& handle) const {
  const std::string prefix = "slurm:" + options_.cluster + ":";
  std::string id = handle.starts_with(prefix) ? handle.substr(prefix.size()) : "";
  if (id.empty() || id.size() > 18 || id.find_first_not_of("0123456789") != std::string::npos) {
    return Status::Invalid("handle \"" + handle + "\": expected " + prefix + "<Slurm job id>");
  }
  return id;
}

Watched* SlurmBackend::Find(const std::string& handle) {
  for (auto& w : watched_) {
    if (w->obs.handle == handle) return w.get();
  }
  return nullptr;
}

// A node whose GPU GRES are typed by MIG profile: with the declared layout,
// its model, GPUs and layout when the counts agree, else not schedulable with
// the reason. False for a node of whole GPUs.
bool SlurmBackend::MigNode(const std::string& gres, control::BackendNode* n) const {
  auto types = slurm::ParseGpuGresTypes(gres);
  if (!types.ok() || types->empty()) return false;
  for (const slurm::GpuGres& t : *types) {
    if (!slurm::IsMigProfileName(t.type)) return false;
  }
  if (!options_.mig) {
    n->schedulable = false;
    n->reason = "GPU GRES \"" + gres + "\" are MIG instances; declare the layout in the fleet's "
                "node group (gpu, gpus, mig)";
    return true;
  }
  const auto& m = *options_.mig;
  std::map<std::string, int> want, have;
  for (const std::string& p : m.layout) want[p] += m.gpus;
  for (const slurm::GpuGres& t : *types) have[t.type] += t.count;
  if (want != have) {
    std::string layout;
    for (const std::string& p : m.layout) layout += (layout.empty() ? "" : ",") + p;
    n->schedulable = false;
    n->reason = "GPU GRES \"" + gres + "\" is not " + std::to_string(m.gpus) + " GPU(s) of " +
                m.model + " each split as " + layout + " (the fleet's node group)";
    return true;
  }
  n->gpu_model = m.model;
  n->gpus = m.gpus;
  n->mig = m.layout;
  return true;
}

Status SlurmBackend::RefreshNodes(bool force) {
  const int64_t now = env_.steady_ms();
  if (!force && nodes_at_ms_ >= 0 && now - nodes_at_ms_ < options_.refresh_ms) return Status::Ok();
  nodes_at_ms_ = now;
  std::string parts;
  for (const std::string& p : options_.partitions) parts += (parts.empty() ? "" : ",") + p;
  auto out = Run("sinfo", {"--noheader", "--Node", "--partition=" + parts,
                           "--format=%N|%T|%G|%c|%m|%R|%E"});
  Status st = out.ok() ? Status::Ok() : out.status();
  if (st.ok() && out->exit_code != 0) {
    st = Status::Internal("sinfo exited with " + std::to_string(out->exit_code) + ": " +
                          FirstLine(out->err));
  }
  if (!st.ok()) {
    // Keep the last view, with every node out of service, until Slurm answers.
    nodes_error_ = st.message();
    return st;
  }
  nodes_error_.clear();
  std::map<std::string, KnownNode> seen;
  std::vector<std::string> order;
  for (const slurm::NodeRow& row : slurm::ParseNodes(out->out)) {
    auto it = seen.find(row.name);
    if (it != seen.end()) {
      // Listed once per partition: keep the first partition in the options' order.
      auto rank = [&](const std::string& p) {
        return std::find(options_.partitions.begin(), options_.partitions.end(), p) -
               options_.partitions.begin();
      };
      if (rank(row.partition) < rank(it->second.partition)) it->second.partition = row.partition;
      continue;
    }
    KnownNode k;
    k.partition = row.partition;
    control::BackendNode& n = k.node;
    n.name = row.name;
    n.vcpus = row.cpus;
    n.ram_gib = static_cast<double>(row.mem_mib) / 1024.0;
    slurm::NodeHealth h = slurm::MapNodeState(row.state, row.reason);
    n.schedulable = h.schedulable;
    n.reason = h.reason;
    if (!MigNode(row.gres, &n)) {
      auto gres = slurm::ParseGpuGres(row.gres);
      if (!gres.ok()) {
        n.schedulable = false;
        n.reason = gres.status().message();
      } else if (gres->count > 0) {
        k.gres_type = gres->type;
        auto model = options_.gpu_models.find(Lower(gres->type));
        if (model == options_.gpu_models.end()) {
          n.schedulable = false;
          n.reason = "GPU GRES type \"" + gres->type +
                     "\" is not a catalog GPU model; map it under the cluster's slurm.gpu_types";
        } else {
          n.gpu_model = model->second;
          n.gpus = gres->count;
        }
      }
    }
    order.push_back(row.name);
    seen.emplace(row.name, std::move(k));
  }
  nodes_ = std::move(seen);
  node_order_ = std::move(order);
  return Status::Ok();
}

std::vector<control::BackendNode> SlurmBackend::Nodes() {
  std::lock_guard<std::mutex> lock(mu_);
  (void)RefreshNodes(false);
  std::vector<control::BackendNode> out;
  for (const std::string& name : node_order_) {
    control::BackendNode n = nodes_.at(name).node;
    if (!nodes_error_.empty()) {
      n.schedulable = false;
      n.reason = "Slurm does not answer: " + nodes_error_;
    }
    out.push_back(std::move(n));
  }
  return out;
}

Result<std::string> SlurmBackend::Launch(const control::LaunchRequest& r) {
  MERIDIAN_RETURN_IF_ERROR(slurm::CheckSubmit(r));
  std::lock_guard<std::mutex> lock(mu_);
  if (!nodes_.count(r.node)) MERIDIAN_RETURN_IF_ERROR(RefreshNodes(true));
  auto known = nodes_.find(r.node);
  if (known == nodes_.end()) {
    return Status::Invalid("node: \"" + r.node + "\" is not a node of Slurm partition(s) of cluster " +
                           options_.cluster);
  }
  if (!r.mig_profile.empty() && known->second.node.mig.empty()) {
    return Status::Invalid("mig: node \"" + r.node + "\" offers whole GPUs, not " + r.mig_profile +
                           " instances");
  }
  const fs::path job_dir = fs::path(options_.state_dir) / "jobs" / r.job_id;
  slurm::SubmitPlan plan;
  plan.partition = known->second.partition;
  plan.gres_type = known->second.gres_type;
  plan.script_path = script_path_;
  plan.working_dir = r.working_dir.empty() ? (job_dir / "work").string() : r.working_dir;
  plan.log_dir = r.log_dir.empty() ? (job_dir / "logs").string() : r.log_dir;
  plan.now = env_.clock();
  plan.max_log_bytes = options_.max_log_bytes;
  plan.log_relay = options_.log_relay;
  const std::string ckpt = r.checkpoint_dir.empty() ? (job_dir / "checkpoint").string() : r.checkpoint_dir;
  // Made here: on the dev cluster and on a shared file system they are the
  // node's too. (Slurm makes neither the working directory nor the logs' one.)
  for (const std::string& d : {plan.log_dir, ckpt, job_dir.string()}) {
    std::error_code ec;
    fs::create_directories(d, ec);
    if (ec) return Status::Internal("\"" + d + "\": " + ec.message());
  }
  if (r.working_dir.empty()) {
    std::error_code ec;
    fs::create_directories(plan.working_dir, ec);
  }
  // The job's environment goes to the job only, through a file its batch
  // script sources (slurm/submit.h); sbatch runs with its own minimal one.
  plan.env_path = (job_dir / ("attempt-" + std::to_string(r.attempt) + ".env")).string();
  MERIDIAN_RETURN_IF_ERROR(WriteEnvironmentFile(
      plan.env_path, slurm::EnvironmentFile(slurm::JobEnvironment(r, base_env_, ckpt))));
  const std::string name = slurm::JobName(r.job_id, r.attempt);
  if (uncertain_.count(name)) {
    auto found = FindByName(name);
    if (!found.ok()) return found.status();
    if (found->has_value()) {
      uncertain_.erase(name);
      return Watch(r, **found, "found Slurm job " + **found + " (" + name +
                                   ") that an earlier sbatch submitted without saying so");
    }
  }
  auto out = Run("sbatch", slurm::SbatchArgs(r, plan),
                 slurm::SbatchEnvironment(base_env_.at("PATH"), options_.slurm_conf));
  if (!out.ok()) {
    // Timed out or killed: the controller may have taken the job all the same.
    if (out.status().code() == StatusCode::kInternal) uncertain_.insert(name);
    return out.status();
  }
  if (out->exit_code != 0) {
    if (out->exit_code < 0) uncertain_.insert(name);
    return slurm::CommandFailure("sbatch", out->exit_code, out->err);
  }
  auto id = slurm::ParseSubmitted(out->out);
  if (!id.ok()) return id.status();
  uncertain_.erase(name);
  return Watch(r, *id, "submitted as Slurm job " + *id + " (partition " + plan.partition + ")");
}

std::string SlurmBackend::Watch(const control::LaunchRequest& r, const std::string& slurm_id,
                                const std::string& message) {
  const std::string* id = &slurm_id;
  auto w = std::make_unique<Watched>();
  w->job_id = r.job_id;
  w->attempt = r.attempt;
  w->slurm_id = *id;
  w->node = r.node;
  w->gpus = r.gpus;
  w->obs.job_id = r.job_id;
  w->obs.attempt = r.attempt;
  w->obs.handle = Handle(*id);
  w->obs.phase = RunPhase::kStarting;
  w->obs.message = message;
  w->reported = RunPhase::kStarting;
  watched_.push_back(std::move(w));
  jobs_at_ms_ = -1;  // look at it on the next Poll
  return Handle(*id);
}

Result<std::optional<slurm::JobRecord>> SlurmBackend::ShowJob(const std::string& slurm_id) {
  auto out = Run("scontrol", {"--oneliner", "--details", "show", "job", slurm_id});
  if (!out.ok()) return out.status();
  if (out->exit_code != 0) {
    if (out->err.find("Invalid job id") != std::string::npos) return std::optional<slurm::JobRecord>();
    return Status::Internal("scontrol show job " + slurm_id + " exited with " +
                            std::to_string(out->exit_code) + ": " + FirstLine(out->err));
  }
  auto rec = slurm::ParseJobRecord(out->out);
  if (!rec.ok()) return rec.status();
  return std::optional<slurm::JobRecord>(std::move(rec).value());
}

void SlurmBackend::Apply(Watched& w, const slurm::JobRecord& rec) {
  slurm::PhaseOfJob p = slurm::MapJobState(rec.job_id, rec.state, rec.exit_code, rec.exit_signal,
                                           rec.nodes);
  RunObservation& o = w.obs;
  if (rec.start) o.started = rec.start;
  if (p.phase == RunPhase::kStarting) {
    o.message = p.message + (rec.reason.empty() || rec.reason == "None" ? "" : " (" + rec.reason + ")");
    return;
  }
  o.phase = p.phase;
  o.exit_code = p.exit_code;
  o.signal = p.signal;
  o.message = p.message;
  if (p.phase == RunPhase::kRunning) {
    o.ended = 0;
    if (!rec.gpu_indexes.empty()) {
      o.message += " GPUs " + Join(rec.gpu_indexes);
      if (rec.gpu_indexes != w.gpus) o.message += " (meridian chose " + Join(w.gpus) + ")";
    }
    return;
  }
  o.ended = rec.end ? rec.end : env_.clock();
  w.done = true;
}

// The end of a grace period: scancel, sent again at the next Poll until
// Slurm takes it.
void SlurmBackend::Cancel(Watched& w) {
  auto out = Run("scancel", {w.slurm_id});
  if (out.ok() && (out->exit_code == 0 || AlreadyEnded(out->err))) w.kill_at_ms = -1;
}

void SlurmBackend::RefreshJobs() {
  std::vector<Watched*> live;
  for (auto& w : watched_) {
    if (!w->done) live.push_back(w.get());
  }
  if (live.empty()) return;
  const int64_t now = env_.steady_ms();
  for (Watched* w : live) {
    if (w->kill_at_ms >= 0 && now >= w->kill_at_ms) Cancel(*w);
  }
  if (jobs_at_ms_ >= 0 && now - jobs_at_ms_ < options_.refresh_ms) return;
  jobs_at_ms_ = now;
  // One squeue for all of them (in chunks), then scontrol only for those
  // whose state moved: squeue shows no exit codes.
  std::map<std::string, slurm::QueueRow> rows;
  bool squeue_ok = true;
  for (size_t i = 0; i < live.size(); i += 500) {
    std::string ids;
    for (size_t j = i; j < std::min(live.size(), i + 500); ++j) {
      ids += (ids.empty() ? "" : ",") + live[j]->slurm_id;
    }
    auto out = Run("squeue", {"--noheader", "--states=all", "--jobs=" + ids, "--format=%i|%T|%N|%r"});
    if (!out.ok() || (out->exit_code != 0 && out->err.find("Invalid job id") == std::string::npos)) {
      squeue_ok = false;
      continue;
    }
    for (slurm::QueueRow& r : slurm::ParseQueue(out->out)) rows[r.job_id] = std::move(r);
  }
  for (Watched* w : live) {
    auto it = rows.find(w->slurm_id);
    const bool listed = it != rows.end();
    if (!listed && !squeue_ok) continue;  // Slurm did not answer; ask again next time
    if (listed) {
      slurm::PhaseOfJob p = slurm::MapJobState(w->slurm_id, it->second.state, std::nullopt,
                                               std::nullopt, it->second.nodes);
      if (p.phase == RunPhase::kStarting) {
        // A job still waiting on a node Slurm took out of service would wait
        // forever: give it back to meridian, which places it again.
        auto n = nodes_.find(w->node);
        if (n != nodes_.end() && !n->second.node.schedulable && w->kill_at_ms < 0) {
          Cancel(*w);
          w->obs.phase = RunPhase::kLost;
          w->obs.ended = env_.clock();
          w->obs.message = "Slurm job " + w->slurm_id + " had not started when node " + w->node +
                           " went out of service (" + n->second.node.reason + "); cancelled";
          w->done = true;
        } else {
          w->obs.message = p.message + " (" + it->second.reason + ")";
        }
        continue;
      }
      if (p.phase == w->obs.phase) continue;  // still running: nothing new to read
    }
    auto rec = ShowJob(w->slurm_id);
    if (!rec.ok()) continue;
    if (!rec->has_value()) {
      w->obs.phase = RunPhase::kLost;
      w->obs.ended = env_.clock();
      w->obs.message = "Slurm no longer knows job " + w->slurm_id +
                       " (it ended longer ago than Slurm's MinJobAge)";
      w->done = true;
      continue;
    }
    Apply(*w, **rec);
  }
}

std::vector<RunObservation> SlurmBackend::Poll() {
  std::lock_guard<std::mutex> lock(mu_);
  (void)RefreshNodes(false);
  RefreshJobs();
  std::vector<RunObservation> changed;
  for (auto& w : watched_) {
    if (w->reported != w->obs.phase) {
      w->reported = w->obs.phase;
      changed.push_back(w->obs);
    }
  }
  std::erase_if(watched_, [](const auto& w) { return w->done && w->reported == w->obs.phase; });
  return changed;
}

Status SlurmBackend::Stop(const std::string& handle, int64_t grace_s) {
  auto id = SlurmId(handle);
  if (!id.ok()) return id.status();
  std::lock_guard<std::mutex> lock(mu_);
  Watched* w = Find(handle);
  if (w == nullptr) {
    return Status::NotFound("handle \"" + handle + "\": not an attempt this backend watches (Adopt it first)");
  }
  if (w->done) return Status::Ok();
  if (grace_s <= 0 || w->obs.phase == RunPhase::kStarting) {
    // Nothing runs yet (or no grace asked): there is nothing to checkpoint.
    auto out = Run("scancel", {*id});
    if (!out.ok()) return out.status();
    if (out->exit_code != 0 && !AlreadyEnded(out->err)) {
      return slurm::CommandFailure("scancel " + *id, out->exit_code, out->err);
    }
    jobs_at_ms_ = -1;
    return Status::Ok();
  }
  // SIGTERM to every process of the job, the batch step included (--full);
  // scancel proper once the grace period is over (Poll does it).
  auto out = Run("scancel", {"--full", "--signal=TERM", *id});
  if (!out.ok()) return out.status();
  if (out->exit_code != 0) {
    if (AlreadyEnded(out->err)) {
      jobs_at_ms_ = -1;  // its end shows up in the next Poll
      return Status::Ok();
    }
    return slurm::CommandFailure("scancel --signal=TERM " + *id, out->exit_code, out->err);
  }
  w->kill_at_ms = env_.steady_ms() + grace_s * 1000;
  jobs_at_ms_ = -1;
  return Status::Ok();
}

Result<RunObservation> SlurmBackend::Adopt(const std::string& job_id, int attempt,
                                           const std::string& handle) {
  auto id = SlurmId(handle);
  if (!id.ok()) return id.status();
  std::lock_guard<std::mutex> lock(mu_);
  if (Watched* known = Find(handle)) return known->obs;
  auto w = std::make_unique<Watched>();
  w->job_id = job_id;
  w->attempt = attempt;
  w->slurm_id = *id;
  w->obs.job_id = job_id;
  w->obs.attempt = attempt;
  w->obs.handle = handle;
  auto rec = ShowJob(*id);
  if (!rec.ok()) return rec.status();
  if (!rec->has_value()) {
    w->obs.phase = RunPhase::kLost;
    w->obs.message = "Slurm no longer knows job " + *id + " (it ended longer ago than Slurm's MinJobAge)";
    return w->obs;
  }
  if ((*rec)->name != slurm::JobName(job_id, attempt)) {
    w->obs.phase = RunPhase::kLost;
    w->obs.message = "Slurm job " + *id + " is \"" + (*rec)->name + "\", not " +
                     slurm::JobName(job_id, attempt);
    return w->obs;
  }
  w->node = (*rec)->nodes;
  w->gpus = (*rec)->gpu_indexes;
  Apply(*w, **rec);
  if (w->obs.phase == RunPhase::kStarting || w->obs.phase == RunPhase::kRunning) {
    w->obs.message = "adopted Slurm job " + *id + " (" + w->obs.message + ")";
  }
  w->reported = w->obs.phase;
  RunObservation obs = w->obs;
  if (!w->done) watched_.push_back(std::move(w));
  return obs;
}

Result<std::optional<std::string>> SlurmBackend::FindByName(const std::string& name) {
  auto out = Run("squeue", {"--noheader", "--states=all", "--name=" + name, "--format=%i|%T|%N|%r"});
  if (!out.ok()) return out.status();
  if (out->exit_code != 0) return slurm::CommandFailure("squeue --name=" + name, out->exit_code, out->err);
  std::optional<std::string> found;
  for (const slurm::QueueRow& row : slurm::ParseQueue(out->out)) {
    if (!slurm::IsTerminalJobState(row.state)) return std::optional<std::string>(row.job_id);
    if (!found) found = row.job_id;
  }
  return found;
}

// Whether `job_id` could have been submitted (CheckSubmit): a word of
// [A-Za-z0-9._-], so also a name within jobs/ of the state directory.
bool SubmittableJobId(const std::string& job_id) {
  return !job_id.empty() && job_id.size() <= 64 && job_id != "." && job_id != ".." &&
         job_id.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                  "0123456789._-") == std::string::npos;
}

Result<std::optional<std::string>> SlurmBackend::FindLaunched(const std::string& job_id,
                                                               int attempt) {
  // Names that could not have been submitted were never launched.
  if (!SubmittableJobId(job_id) || attempt < 1) return std::optional<std::string>();
  std::lock_guard<std::mutex> lock(mu_);
  auto id = FindByName(slurm::JobName(job_id, attempt));
  if (!id.ok()) return id.status();
  if (!id->has_value()) return std::optional<std::string>();
  return std::optional<std::string>(Handle(**id));
}

// The job's directory under state_dir (each attempt's environment file and,
// unless the spec named others, its working and log directories) and the
// names of attempts an sbatch may have submitted without saying so, and the
// same of a service's replicas. Slurm's own record of the jobs is its
// accounting's, not meridian's to delete.
Status SlurmBackend::Retire(const std::string& job_id, int attempts) {
  if (!SubmittableJobId(job_id)) {
    return Status::Invalid("job id \"" + job_id + "\": not a job this backend launched");
  }
  std::lock_guard<std::mutex> lock(mu_);
  for (int n = 1; n <= attempts; ++n) uncertain_.erase(slurm::JobName(job_id, n));
  const fs::path jobs = fs::path(options_.state_dir) / "jobs";
  std::error_code ec;
  // A service's replicas ran as jobs of their own, <id>.r0, <id>.r1, ...
  // (control::ReplicaRunId), each with a directory from its first launch
  // and attempts counted apart; the first index without one ends the set.
  for (int i = 0;; ++i) {
    const std::string replica = control::ReplicaRunId(job_id, i);
    if (!fs::exists(jobs / replica, ec)) break;
    const std::string prefix = slurm::JobNamePrefix(replica);
    std::erase_if(uncertain_, [&](const std::string& name) { return name.starts_with(prefix); });
    fs::remove_all(jobs / replica, ec);
    if (ec) return Status::Internal(replica + ": cannot remove its directory: " + ec.message());
  }
  fs::remove_all(jobs / job_id, ec);
  if (ec) return Status::Internal(job_id + ": cannot remove its directory: " + ec.message());
  return Status::Ok();
}

}  // namespace

Result<std::unique_ptr<control::Backend>> MakeSlurmBackend(const SlurmBackendOptions& options) {
  auto b = std::make_unique<SlurmBackend>(options);
  MERIDIAN_RETURN_IF_ERROR(b->Init());
  return std::unique_ptr<control::Backend>(std::move(b));
}

}  // namespace meridian::backends
