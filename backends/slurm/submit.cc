#include "backends/slurm/submit.h"

#include <algorithm>

#include "backends/slurm/parse.h"

namespace meridian::backends::slurm {

namespace {

bool SafeWord(const std::string& s) {
  if (s.empty() || s.size() > 64) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '.' || c == '_' || c == '-';
  });
}

Status CheckPath(const std::string& field, const std::string& path) {
  if (path.find('\0') != std::string::npos) return Status::Invalid(field + ": holds a NUL byte");
  if (path.find('%') != std::string::npos || path.find('\\') != std::string::npos) {
    return Status::Invalid(field + ": \"" + path +
                           "\" holds '%' or '\\', which Slurm reads as a file name pattern");
  }
  return Status::Ok();
}

bool ShellName(const std::string& s) {
  if (s.empty() || (s[0] >= '0' && s[0] <= '9')) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
  });
}

}  // namespace

std::string JobNamePrefix(const std::string& job_id) { return "meridian-" + job_id + "-"; }

std::string JobName(const std::string& job_id, int attempt) {
  return JobNamePrefix(job_id) + std::to_string(attempt);
}

Status CheckSubmit(const control::LaunchRequest& r) {
  if (!SafeWord(r.job_id)) {
    return Status::Invalid("job_id: \"" + r.job_id +
                           "\" must be 1-64 letters, digits, '.', '_' or '-' (it names the Slurm job)");
  }
  if (r.attempt < 1) {
    return Status::Invalid("attempt: \"" + std::to_string(r.attempt) + "\" must be 1 or more");
  }
  if (!r.tenant.empty() && !SafeWord(r.tenant)) {
    return Status::Invalid("tenant: \"" + r.tenant +
                           "\" must be 1-64 letters, digits, '.', '_' or '-' (it goes in the Slurm job's comment)");
  }
  if (r.argv.empty() || r.argv[0].empty()) return Status::Invalid("command: must name a program to run");
  for (const std::string& a : r.argv) {
    if (a.find('\0') != std::string::npos) return Status::Invalid("command: holds a NUL byte");
  }
  for (const auto& [k, v] : r.env) {
    if (k.empty() || k.find('=') != std::string::npos || k.find('\0') != std::string::npos ||
        v.find('\0') != std::string::npos) {
      return Status::Invalid("env: \"" + k + "\" is not a valid variable name");
    }
    if (k.starts_with("LD_")) {
      return Status::Invalid("env." + k +
                             ": variables starting with LD_ steer the dynamic loader and are "
                             "refused");
    }
    if (!ShellName(k)) {
      return Status::Invalid("env." + k + ": \"" + k +
                             "\" is not a shell variable name ([A-Za-z_][A-Za-z0-9_]*), which the "
                             "Slurm backend needs (the job's environment file is sourced by sh)");
    }
    if (k.starts_with("SLURM_") || k.starts_with("SBATCH_")) {
      return Status::Invalid("env: \"" + k +
                             "\": names starting with SLURM_ or SBATCH_ are Slurm's own (sbatch "
                             "would read them as options)");
    }
  }
  if (!r.mig_uuids.empty()) {
    return Status::Invalid("mig: the Slurm backend asks for a MIG instance by its profile (a GRES "
                           "type), not by UUID; this placement names MIG UUIDs");
  }
  if (!r.mig_profile.empty() && !IsMigProfileName(r.mig_profile)) {
    return Status::Invalid("mig: \"" + r.mig_profile + "\" is not a MIG profile name (3g.40gb)");
  }
  MERIDIAN_RETURN_IF_ERROR(CheckPath("working_dir", r.working_dir));
  MERIDIAN_RETURN_IF_ERROR(CheckPath("log_dir", r.log_dir));
  MERIDIAN_RETURN_IF_ERROR(CheckPath("checkpoint_dir", r.checkpoint_dir));
  if (!r.node.empty() && !SafeWord(r.node)) {
    return Status::Invalid("node: \"" + r.node + "\" is not a Slurm node name");
  }
  return Status::Ok();
}

std::optional<int64_t> TimeLimitMinutes(std::optional<UnixSeconds> deadline, UnixSeconds now) {
  if (!deadline) return std::nullopt;
  const int64_t left = *deadline - now;
  return std::max<int64_t>(1, (left + 59) / 60);
}

std::vector<std::string> SbatchArgs(const control::LaunchRequest& r, const SubmitPlan& p) {
  std::vector<std::string> a = {
      "--parsable",
      "--job-name=" + JobName(r.job_id, r.attempt),
      "--comment=meridian job " + r.job_id + " attempt " + std::to_string(r.attempt) +
          (r.tenant.empty() ? "" : " tenant " + r.tenant),
      "--nodes=1",
      "--ntasks=1",
      // meridian requeues (maybe elsewhere); Slurm must not do it behind its back.
      "--no-requeue",
      // sbatch's own environment is the minimal one (SbatchEnvironment); the
      // job's comes from its environment file.
      "--export=ALL",
      "--chdir=" + p.working_dir,
      "--output=" + p.log_dir + "/stdout.log",
      "--error=" + p.log_dir + "/stderr.log",
      "--open-mode=append",
  };
  if (!p.partition.empty()) a.push_back("--partition=" + p.partition);
  if (!r.node.empty()) a.push_back("--nodelist=" + r.node);
  if (!r.mig_profile.empty()) {
    a.push_back("--gres=gpu:" + r.mig_profile + ":1");  // one instance, typed by its profile
  } else if (!r.gpus.empty()) {
    a.push_back("--gres=gpu:" + (p.gres_type.empty() ? "" : p.gres_type + ":") +
                std::to_string(r.gpus.size()));
  }
  if (r.vcpus > 0) a.push_back("--cpus-per-task=" + std::to_string(r.vcpus));
  if (r.ram_mib > 0) a.push_back("--mem=" + std::to_string(r.ram_mib) + "M");
  if (auto minutes = TimeLimitMinutes(r.deadline, p.now)) {
    a.push_back("--time=" + std::to_string(*minutes));
  }
  a.push_back(p.script_path);
  a.push_back(p.env_path);
  if (p.max_log_bytes > 0) {
    a.insert(a.end(), {p.log_relay, "--cap", std::to_string(p.max_log_bytes), "--"});
  }
  a.insert(a.end(), r.argv.begin(), r.argv.end());
  return a;
}

std::vector<std::string> JobEnvironment(const control::LaunchRequest& r,
                                        const std::map<std::string, std::string>& base,
                                        const std::string& checkpoint_dir) {
  std::map<std::string, std::string> env = base;
  for (const auto& [k, v] : r.env) env[k] = v;
  env.erase("CUDA_VISIBLE_DEVICES");
  // A CPU job sees no GPU. A job with a GPU GRES (whole GPUs or a MIG
  // instance) gets Slurm's value: the environment file, sourced after Slurm
  // set it, must not hide it.
  if (r.gpus.empty() && r.mig_profile.empty()) env["CUDA_VISIBLE_DEVICES"] = "";
  env["MERIDIAN_JOB_ID"] = r.job_id;
  env["MERIDIAN_ATTEMPT"] = std::to_string(r.attempt);
  env["MERIDIAN_CHECKPOINT_DIR"] = checkpoint_dir;
  std::vector<std::string> out;
  for (const auto& [k, v] : env) out.push_back(k + "=" + v);
  return out;
}

std::string EnvironmentFile(const std::vector<std::string>& env) {
  std::string text = "# meridian: the job's environment, sourced by the batch script\n";
  for (const std::string& e : env) {
    const size_t eq = e.find('=');
    text += "export " + e.substr(0, eq) + "='";
    for (char c : e.substr(eq + 1)) {
      if (c == '\'') {
        text += "'\\''";
      } else {
        text += c;
      }
    }
    text += "'\n";
  }
  return text;
}

std::vector<std::string> SbatchEnvironment(const std::string& path, const std::string& slurm_conf) {
  std::vector<std::string> env = {"PATH=" + path};
  if (!slurm_conf.empty()) env.push_back("SLURM_CONF=" + slurm_conf);
  return env;
}

}  // namespace meridian::backends::slurm
