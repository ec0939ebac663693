// `meridian serve` with a fleet file that cannot run as a Slurm cluster exits
// 2 and names the file, the field and the reason. No Slurm is needed: each
// case fails before a Slurm command would run.
#include <fstream>

#include "control/test_daemon.h"

namespace meridian::backends {
namespace {

using control::testing::MakeTempDir;
using control::testing::RunCommand;

TEST(SlurmServeConfigTest, FleetsThatCannotRunExitTwoWithTheReason) {
  struct Case {
    const char* what;
    std::string cluster_keys;
    std::string want;
  } cases[] = {
      {"no slurm settings", "    backend: slurm\n",
       "fleet.yaml:2:5: clusters[0]: slurm: is required to run the cluster; name its partitions"},
      {"a local cluster", "",
       "fleet.yaml: clusters: meridian serve runs one cluster with backend: slurm or kubernetes; this "
       "file has 1 "
       "cluster(s), the first with backend: local"},
      {"no Slurm commands", "    backend: slurm\n    slurm: {partitions: [gpu], bin_dir: /nonexistent}\n",
       "fleet.yaml: clusters[0]: slurm: sbatch not found in \"/nonexistent\" (install slurm-client, "
       "or set slurm.bin_dir)"},
      {"an unknown GPU type target", "    backend: slurm\n    slurm: {partitions: [gpu], gpu_types: {a100: A100}}\n",
       "clusters[0].slurm.gpu_types.a100: \"A100\" is not a GPU model in the catalog"},
  };
  const std::string dir = MakeTempDir("slurm-config");
  for (const Case& c : cases) {
    std::ofstream(dir + "/fleet.yaml") << "clusters:\n  - name: dev\n    region: gcp:us-central1\n"
                                       << "    gpu_hour_usd: 1\n" << c.cluster_keys
                                       << "    nodes: [{count: 1, gpu: A100-80GB, gpus: 8}]\n";
    std::ofstream(dir + "/serve.yaml") << "fleet: fleet.yaml\n";
    int rc = 0;
    std::string out = RunCommand({"/bin/sh", "-c",
                                  "cd " + dir + " && " + MERIDIAN_BINARY +
                                      " serve --listen 127.0.0.1:0 --db m.db --config serve.yaml 2>&1"},
                                 &rc);
    EXPECT_EQ(rc, 2) << c.what << ": " << out;
    EXPECT_NE(out.find(c.want), std::string::npos) << c.what << ": " << out;
  }
  std::filesystem::remove_all(dir);
}

// The log cap on Slurm needs meridian-log-relay beside meridian (it runs on
// the compute nodes at that path): a meridian copied without it refuses to
// serve, naming the setting, the path and the way out.
TEST(SlurmServeConfigTest, ALogCapWithoutTheRelayBesideMeridianExitsTwo) {
  const std::string dir = MakeTempDir("slurm-relay");
  std::filesystem::copy_file(MERIDIAN_BINARY, dir + "/meridian");
  std::ofstream(dir + "/fleet.yaml") << "clusters:\n  - name: dev\n    region: gcp:us-central1\n"
                                     << "    gpu_hour_usd: 1\n    backend: slurm\n    slurm: {partitions: [gpu]}\n"
                                     << "    nodes: [{count: 1, gpu: A100-80GB, gpus: 8}]\n";
  std::ofstream(dir + "/serve.yaml") << "fleet: fleet.yaml\nnode: {max_log_bytes: 4096}\n";
  int rc = 0;
  std::string out = RunCommand({"/bin/sh", "-c",
                                "cd " + dir + " && ./meridian serve --listen 127.0.0.1:0 --db m.db "
                                "--config serve.yaml 2>&1"},
                               &rc);
  EXPECT_EQ(rc, 2) << out;
  EXPECT_NE(out.find("node.max_log_bytes: 4096 needs meridian-log-relay to cut the logs on the compute "
                     "nodes; \"" + dir + "/meridian-log-relay\" is not an executable file (install it "
                     "beside meridian, or set node.max_log_bytes: 0)"),
            std::string::npos)
      << out;
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace meridian::backends
