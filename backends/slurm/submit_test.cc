#include "backends/slurm/submit.h"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

namespace meridian::backends::slurm {
namespace {

control::LaunchRequest Request() {
  control::LaunchRequest r;
  r.job_id = "j-00000042";
  r.attempt = 2;
  r.tenant = "team-a";
  r.argv = {"python3", "train.py", "--lr", "3e-4; rm -rf /", "$HOME", "`id`"};
  r.env = {{"EPOCHS", "3"}, {"CUDA_VISIBLE_DEVICES", "7"}};
  r.gpus = {0, 1};
  r.node = "node2";
  r.checkpoint_dir = "/state/jobs/j-00000042/checkpoint";
  r.log_dir = "/state/jobs/j-00000042/logs";
  r.vcpus = 8;
  r.ram_mib = 65536;
  return r;
}

SubmitPlan Plan() {
  SubmitPlan p;
  p.partition = "gpu";
  p.gres_type = "a100-80gb";
  p.script_path = "/state/meridian-batch.sh";
  p.env_path = "/state/jobs/j-00000042/attempt-2.env";
  p.working_dir = "/work/run";
  p.log_dir = "/state/jobs/j-00000042/logs";
  p.now = 1'000'000;
  return p;
}

TEST(SlurmSubmitTest, ArgvCarriesThePlacementAndTheCommandLiterally) {
  control::LaunchRequest r = Request();
  r.deadline = 1'000'000 + 3600 + 1;  // 60 min and 1 s left: 61 minutes
  std::vector<std::string> a = SbatchArgs(r, Plan());
  std::vector<std::string> want = {
      "--parsable",
      "--job-name=meridian-j-00000042-2",
      "--comment=meridian job j-00000042 attempt 2 tenant team-a",
      "--nodes=1",
      "--ntasks=1",
      "--no-requeue",
      "--export=ALL",
      "--chdir=/work/run",
      "--output=/state/jobs/j-00000042/logs/stdout.log",
      "--error=/state/jobs/j-00000042/logs/stderr.log",
      "--open-mode=append",
      "--partition=gpu",
      "--nodelist=node2",
      "--gres=gpu:a100-80gb:2",
      "--cpus-per-task=8",
      "--mem=65536M",
      "--time=61",
      "/state/meridian-batch.sh",
      "/state/jobs/j-00000042/attempt-2.env",
      "python3", "train.py", "--lr", "3e-4; rm -rf /", "$HOME", "`id`"};
  EXPECT_EQ(a, want);
}

// With a log cap the batch script execs the relay, which runs the argv.
TEST(SlurmSubmitTest, ALogCapPutsTheRelayBeforeTheCommand) {
  SubmitPlan p = Plan();
  p.max_log_bytes = 4096;
  p.log_relay = "/opt/meridian/meridian-log-relay";
  std::vector<std::string> a = SbatchArgs(Request(), p);
  ASSERT_GE(a.size(), 12u);
  const std::vector<std::string> tail(a.end() - 12, a.end());
  std::vector<std::string> want = {"/state/meridian-batch.sh", "/state/jobs/j-00000042/attempt-2.env",
                                   "/opt/meridian/meridian-log-relay", "--cap", "4096", "--",
                                   "python3", "train.py", "--lr", "3e-4; rm -rf /", "$HOME", "`id`"};
  EXPECT_EQ(tail, want);
}

TEST(SlurmSubmitTest, CpuJobUntypedGresAndNoDeadline) {
  control::LaunchRequest r = Request();
  r.gpus.clear();
  r.vcpus = 0;
  r.ram_mib = 0;
  std::vector<std::string> a = SbatchArgs(r, Plan());
  EXPECT_EQ(std::count_if(a.begin(), a.end(), [](const std::string& s) {
              return s.starts_with("--gres") || s.starts_with("--time") || s.starts_with("--cpus") ||
                     s.starts_with("--mem");
            }),
            0);
  control::LaunchRequest g = Request();
  SubmitPlan p = Plan();
  p.gres_type = "";
  std::vector<std::string> b = SbatchArgs(g, p);
  EXPECT_NE(std::find(b.begin(), b.end(), "--gres=gpu:2"), b.end());
}

TEST(SlurmSubmitTest, TimeLimitFromTheDeadline) {
  EXPECT_EQ(TimeLimitMinutes(std::nullopt, 100), std::nullopt);
  EXPECT_EQ(TimeLimitMinutes(100 + 60, 100), 1);
  EXPECT_EQ(TimeLimitMinutes(100 + 61, 100), 2);
  EXPECT_EQ(TimeLimitMinutes(50, 100), 1);  // already past: the shortest limit
}

TEST(SlurmSubmitTest, EnvironmentMeridianWinsAndSlurmSetsGpus) {
  control::LaunchRequest r = Request();
  std::vector<std::string> env = JobEnvironment(r, {{"PATH", "/usr/bin"}, {"SLURM_CONF", "/c/slurm.conf"}},
                                                r.checkpoint_dir);
  std::vector<std::string> want = {"EPOCHS=3",
                                   "MERIDIAN_ATTEMPT=2",
                                   "MERIDIAN_CHECKPOINT_DIR=/state/jobs/j-00000042/checkpoint",
                                   "MERIDIAN_JOB_ID=j-00000042",
                                   "PATH=/usr/bin",
                                   "SLURM_CONF=/c/slurm.conf"};
  EXPECT_EQ(env, want);  // no CUDA_VISIBLE_DEVICES: Slurm sets it from the GRES
  r.gpus.clear();
  std::vector<std::string> cpu = JobEnvironment(r, {}, "/ck");
  EXPECT_NE(std::find(cpu.begin(), cpu.end(), "CUDA_VISIBLE_DEVICES="), cpu.end());
  // A MIG job (its GRES is the instance; no whole GPU index) keeps Slurm's.
  r.mig_profile = "3g.40gb";
  std::vector<std::string> mig = JobEnvironment(r, {}, "/ck");
  EXPECT_EQ(std::count_if(mig.begin(), mig.end(),
                          [](const std::string& e) { return e.starts_with("CUDA_VISIBLE_DEVICES="); }),
            0);
}

TEST(SlurmSubmitTest, SbatchRunsWithAMinimalEnvironmentAndNoneOfTheJobs) {
  EXPECT_EQ(SbatchEnvironment("/usr/bin:/bin", ""), std::vector<std::string>{"PATH=/usr/bin:/bin"});
  EXPECT_EQ(SbatchEnvironment("/usr/bin", "/c/slurm.conf"),
            (std::vector<std::string>{"PATH=/usr/bin", "SLURM_CONF=/c/slurm.conf"}));
  // The argv names the environment file right after the script; no job
  // variable appears in sbatch's argv or environment.
  control::LaunchRequest r = Request();
  r.env["SECRET"] = "s3cr3t";
  std::vector<std::string> a = SbatchArgs(r, Plan());
  auto script = std::find(a.begin(), a.end(), "/state/meridian-batch.sh");
  ASSERT_NE(script, a.end());
  EXPECT_EQ(*(script + 1), "/state/jobs/j-00000042/attempt-2.env");
  for (const std::string& s : a) EXPECT_EQ(s.find("s3cr3t"), std::string::npos) << s;
}

TEST(SlurmSubmitTest, EnvironmentFileQuotesEveryValueForSh) {
  EXPECT_EQ(EnvironmentFile({"A=plain", "B=it's", "C="}),
            "# meridian: the job's environment, sourced by the batch script\n"
            "export A='plain'\n"
            "export B='it'\\''s'\n"  // ' closes, \' is a quote, ' reopens
            "export C=''\n");
}

// The batch script and the environment file under a real sh: every value
// arrives byte for byte (commas, quotes, $(...), newlines), and the argv
// after the file is exec'd as given.
TEST(SlurmSubmitTest, BatchScriptSourcesTheFileThenExecsTheArgvUnderARealShell) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::path(::testing::TempDir()) / ("meridian_batch_" + std::to_string(getpid()));
  fs::create_directories(dir);
  const std::string script = (dir / "batch.sh").string(), envf = (dir / "job.env").string(),
                    out = (dir / "out").string();
  std::ofstream(script) << kBatchScript;
  const std::string tricky = "a,b 'q' \"d\" $(touch " + (dir / "pwned").string() + ") `id`\nline2";
  std::ofstream(envf) << EnvironmentFile({"TRICKY=" + tricky, "PATH=/usr/bin:/bin"});
  pid_t pid = fork();
  if (pid == 0) {
    FILE* f = std::fopen(out.c_str(), "w");
    dup2(fileno(f), 1);
    execl("/bin/sh", "sh", script.c_str(), envf.c_str(), "/usr/bin/printenv", "TRICKY",
          static_cast<char*>(nullptr));
    _exit(126);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  std::ifstream in(out);
  std::string got((std::istreambuf_iterator<char>(in)), {});
  EXPECT_EQ(got, tricky + "\n");
  EXPECT_FALSE(fs::exists(dir / "pwned"));
  fs::remove_all(dir);
}

// A MIG instance is one GPU GRES of its profile's type, whatever the node's
// whole-GPU type.
TEST(SlurmSubmitTest, MigInstanceIsAGresOfItsProfile) {
  control::LaunchRequest r = Request();
  r.gpus = {1};
  r.mig_profile = "3g.40gb";
  ASSERT_TRUE(CheckSubmit(r).ok());
  std::vector<std::string> a = SbatchArgs(r, Plan());
  EXPECT_NE(std::find(a.begin(), a.end(), "--gres=gpu:3g.40gb:1"), a.end());
  EXPECT_EQ(std::count_if(a.begin(), a.end(), [](const std::string& s) { return s.starts_with("--gres"); }), 1);
}

TEST(SlurmSubmitTest, RejectsWhatWouldChangeSbatchsMeaning) {
  struct Case {
    const char* what;
    void (*edit)(control::LaunchRequest&);
    const char* message;
  } cases[] = {
      {"job id", [](control::LaunchRequest& r) { r.job_id = "j 1 --uid=0"; },
       "job_id: \"j 1 --uid=0\" must be 1-64 letters, digits, '.', '_' or '-' (it names the Slurm job)"},
      {"tenant", [](control::LaunchRequest& r) { r.tenant = "a,b"; },
       "tenant: \"a,b\" must be 1-64 letters, digits, '.', '_' or '-' (it goes in the Slurm job's comment)"},
      {"SBATCH_ env", [](control::LaunchRequest& r) { r.env["SBATCH_PARTITION"] = "x"; },
       "env: \"SBATCH_PARTITION\": names starting with SLURM_ or SBATCH_ are Slurm's own (sbatch would read them as options)"},
      {"loader env", [](control::LaunchRequest& r) { r.env["LD_PRELOAD"] = "/tmp/x.so"; },
       "env.LD_PRELOAD: variables starting with LD_ steer the dynamic loader and are refused"},
      {"not a shell name", [](control::LaunchRequest& r) { r.env["A-B"] = "x"; },
       "env.A-B: \"A-B\" is not a shell variable name ([A-Za-z_][A-Za-z0-9_]*), which the Slurm "
       "backend needs (the job's environment file is sourced by sh)"},
      {"SLURM_ env", [](control::LaunchRequest& r) { r.env["SLURM_CONF"] = "/x"; },
       "env: \"SLURM_CONF\": names starting with SLURM_ or SBATCH_ are Slurm's own (sbatch would read them as options)"},
      {"pattern", [](control::LaunchRequest& r) { r.log_dir = "/logs/%j"; },
       "log_dir: \"/logs/%j\" holds '%' or '\\', which Slurm reads as a file name pattern"},
      {"empty command", [](control::LaunchRequest& r) { r.argv.clear(); },
       "command: must name a program to run"},
      {"MIG", [](control::LaunchRequest& r) { r.mig_uuids = {"MIG-1"}; },
       "mig: the Slurm backend asks for a MIG instance by its profile (a GRES type), not by UUID; "
       "this placement names MIG UUIDs"},
      {"MIG profile", [](control::LaunchRequest& r) { r.mig_profile = "3g.40gb --uid=0"; },
       "mig: \"3g.40gb --uid=0\" is not a MIG profile name (3g.40gb)"},
      {"node", [](control::LaunchRequest& r) { r.node = "node[1-4]"; },
       "node: \"node[1-4]\" is not a Slurm node name"},
  };
  EXPECT_TRUE(CheckSubmit(Request()).ok());
  for (const Case& c : cases) {
    control::LaunchRequest r = Request();
    c.edit(r);
    Status st = CheckSubmit(r);
    EXPECT_FALSE(st.ok()) << c.what;
    EXPECT_EQ(st.message(), c.message) << c.what;
  }
}

}  // namespace
}  // namespace meridian::backends::slurm
