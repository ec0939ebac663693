// Every kind of bad fleet file gives an error naming the position, the field
// path, the value and the reason.
#include <gtest/gtest.h>

#include "spec/fleet.h"

namespace meridian::spec {
namespace {

struct BadCase {
  const char* what;
  std::string yaml;
  std::vector<std::string> want;  // substrings of the error message
};

// One owned cluster whose first node group is `group` (a flow map's insides),
// with `extra` cluster keys.
std::string Group(const std::string& group, const std::string& extra = "") {
  return "clusters:\n  - name: c\n    region: gcp:us-central1\n    gpu_hour_usd: 1\n" + extra +
         "    nodes:\n      - {" + group + "}\n";
}
// Same, with `keys` replacing the cluster's keys (name and nodes kept).
std::string Cluster(const std::string& keys) {
  return "clusters:\n  - name: c\n" + keys + "    nodes: [{count: 1, gpu: L4, gpus: 1}]\n";
}

std::vector<BadCase> BadCases() {
  return {
      // The file as a whole.
      {"malformed yaml", "clusters: [\n", {"bad.yaml:2:1: malformed YAML"}},
      {"empty file", "", {"bad.yaml: is empty; a fleet file needs clusters"}},
      {"two documents", "clusters: []\n---\nclusters: []\n", {"a second YAML document"}},
      // Issue 24 (fuzzing): yaml-cpp 0.7's LoadAll never returned on a "," where a
      // value begins, here line 1, column 1.
      {"issue 24: a lone comma", ", ", {"bad.yaml:1:1: malformed YAML: \",\" cannot begin a value here"}},
      {"top level list", "- name: c\n", {"bad.yaml:1:1: a list where a map of keys belongs"}},
      {"no clusters", "elastic: true\n", {"bad.yaml:1:1: clusters: is required"}},
      {"clusters not a list", "clusters: {name: c}\n",
       {"bad.yaml:1:11: clusters: a map where a list belongs"}},
      {"no capacity at all", "clusters: []\nelastic: false\n",
       {"clusters: is empty and elastic is false"}},
      {"unknown top key", "clusters: []\nelastik: true\n",
       {"bad.yaml:2:1: elastik: unknown key \"elastik\"; did you mean `elastic`?"}},
      {"tenants are not fleet keys", "clusters: []\ntenants: []\n",
       {"tenants: unknown key \"tenants\"; known keys here: clusters or elastic"}},
      {"elastic not a bool", "clusters: []\nelastic: sometimes\n",
       {"bad.yaml:2:10: elastic: \"sometimes\" must be true or false"}},
      // Clusters.
      {"cluster not a map", "clusters: [c]\n", {"bad.yaml:1:12: clusters[0]: \"c\" where a map"}},
      {"cluster without name", "clusters:\n  - region: r:x\n    nodes: [{count: 1, gpus: 0, vcpus: 1}]\n",
       {"bad.yaml:2:5: clusters[0].name: is required"}},
      {"cluster without region", "clusters:\n  - name: c\n    nodes: [{count: 1, gpus: 0, vcpus: 1}]\n",
       {"clusters[0].region: is required"}},
      {"cluster without nodes", "clusters:\n  - {name: c, region: r:x}\n",
       {"clusters[0].nodes: is required"}},
      {"empty nodes", "clusters:\n  - name: c\n    region: r:x\n    gpu_hour_usd: 1\n    nodes: []\n",
       {"bad.yaml:5:12: clusters[0].nodes: is empty; list at least one node group"}},
      {"bad cluster name", "clusters:\n  - name: \"on prem\"\n    region: r:x\n    nodes: []\n",
       {"bad.yaml:2:11: clusters[0].name: \"on prem\" must be 1-63 letters"}},
      {"unknown cluster key", Cluster("    region: r:x\n    gpu_hour_usd: 1\n    regoin: x\n"),
       {"bad.yaml:5:5: clusters[0].regoin: unknown key \"regoin\"; did you mean `region`?"}},
      {"repeated cluster key", Cluster("    region: r:x\n    region: r:y\n    gpu_hour_usd: 1\n"),
       {"clusters[0].region: is given twice"}},
      {"duplicate cluster names",
       "clusters:\n  - {name: a, region: r:x, nodes: [{count: 1, gpus: 0, vcpus: 1}]}\n"
       "  - {name: a, region: r:y, nodes: [{count: 1, gpus: 0, vcpus: 1}]}\n",
       {"bad.yaml:3:12: clusters[1].name: \"a\" is already used by clusters[0]; cluster names must "
        "be unique"}},
      {"unknown pricing", Cluster("    region: r:x\n    pricing: leased\n"),
       {"bad.yaml:4:14: clusters[0].pricing: \"leased\" is not a pricing; use owned or reserved"}},
      {"slurm settings on a local cluster",
       Cluster("    region: r:x\n    gpu_hour_usd: 1\n    slurm: {partitions: [gpu]}\n"),
       {"bad.yaml:5:12: clusters[0].slurm: belongs only with backend: slurm (this cluster's backend is local)"}},
      {"slurm without partitions",
       Cluster("    region: r:x\n    gpu_hour_usd: 1\n    backend: slurm\n    slurm: {conf: /etc/slurm/slurm.conf}\n"),
       {"bad.yaml:6:12: clusters[0].slurm.partitions: is required; name at least one partition ([gpu])"}},
      {"slurm empty partitions",
       Cluster("    region: r:x\n    gpu_hour_usd: 1\n    backend: slurm\n    slurm: {partitions: []}\n"),
       {"clusters[0].slurm.partitions: is empty; name at least one partition"}},
      {"unknown slurm key",
       Cluster("    region: r:x\n    gpu_hour_usd: 1\n    backend: slurm\n    slurm: {partitions: [gpu], config: x}\n"),
       {"clusters[0].slurm.config: unknown key \"config\"; did you mean `conf`?"}},
      {"unknown backend", Cluster("    region: r:x\n    gpu_hour_usd: 1\n    backend: k8s\n"),
       {"clusters[0].backend: \"k8s\" is not a backend; use local, slurm or kubernetes"}},
      {"repartitionable not a bool",
       Cluster("    region: r:x\n    gpu_hour_usd: 1\n    repartitionable: 2\n"),
       {"clusters[0].repartitionable: \"2\" must be true or false"}},
      {"region not text", Cluster("    region: [a]\n    gpu_hour_usd: 1\n"),
       {"clusters[0].region: a list where a single value (text) belongs"}},
      // Prices.
      {"owned without gpu_hour_usd", Cluster("    region: r:x\n"),
       {"bad.yaml:2:5: clusters[0].gpu_hour_usd: is required for owned GPUs"}},
      {"negative price", Cluster("    region: r:x\n    gpu_hour_usd: -1\n"),
       {"bad.yaml:4:19: clusters[0].gpu_hour_usd: \"-1\" is out of range; must be a number >= 0"}},
      {"text price", Cluster("    region: r:x\n    gpu_hour_usd: cheap\n"),
       {"clusters[0].gpu_hour_usd: \"cheap\" is not a number"}},
      {"owned with instance_type",
       Cluster("    region: r:x\n    gpu_hour_usd: 1\n    instance_type: p4de.24xlarge\n"),
       {"clusters[0].instance_type: belongs only with pricing: reserved"}},
      {"reserved without instance_type", Cluster("    region: r:x\n    pricing: reserved\n"),
       {"clusters[0].instance_type: is required with pricing: reserved"}},
      {"reserved with gpu_hour_usd",
       Cluster("    region: r:x\n    pricing: reserved\n    instance_type: p\n    gpu_hour_usd: 2\n"),
       {"bad.yaml:6:19: clusters[0].gpu_hour_usd: belongs only with pricing: owned"}},
      {"reserved with vcpu_hour_usd",
       Cluster("    region: r:x\n    pricing: reserved\n    instance_type: p\n    vcpu_hour_usd: 0.1\n"),
       {"bad.yaml:6:20: clusters[0].vcpu_hour_usd: belongs only with pricing: owned"}},
      {"negative ram_gib_hour_usd", Cluster("    region: r:x\n    gpu_hour_usd: 1\n    ram_gib_hour_usd: -1\n"),
       {"clusters[0].ram_gib_hour_usd: \"-1\" is out of range; must be a number >= 0"}},
      // Node groups.
      {"group not a map", "clusters:\n  - {name: c, region: r:x, nodes: [[8]]}\n",
       {"clusters[0].nodes[0]: a list where a map of keys belongs"}},
      {"group without count", Group("gpu: L4, gpus: 1"),
       {"bad.yaml:6:9: clusters[0].nodes[0].count: is required"}},
      {"group without gpus", Group("count: 1, gpu: L4"),
       {"clusters[0].nodes[0].gpus: is required (GPUs per node; 0 for a CPU-only node)"}},
      {"zero count", Group("count: 0, gpu: L4, gpus: 1"),
       {"bad.yaml:6:17: clusters[0].nodes[0].count: \"0\" must be a whole number >= 1"}},
      {"negative gpus", Group("count: 1, gpu: L4, gpus: -1"),
       {"bad.yaml:6:35: clusters[0].nodes[0].gpus: \"-1\" must be a whole number >= 0"}},
      {"fraction of a gpu", Group("count: 1, gpu: L4, gpus: 0.5"),
       {"clusters[0].nodes[0].gpus: \"0.5\" must be a whole number >= 0"}},
      {"too many gpus", Group("count: 1, gpu: L4, gpus: 17"),
       {"clusters[0].nodes[0].gpus: \"17\" is more than 16 GPUs per node"}},
      {"gpus without a model", Group("count: 1, gpus: 8"),
       {"bad.yaml:6:26: clusters[0].nodes[0].gpu: is required with gpus: 8"}},
      {"model without gpus", Group("count: 1, gpu: L4, gpus: 0"),
       {"clusters[0].nodes[0].gpus: \"0\" but gpu is \"L4\""}},
      {"mig on a cpu node", Group("count: 1, gpus: 0, vcpus: 8, mig: [1g.10gb]"),
       {"clusters[0].nodes[0].mig: a MIG layout on a node without GPUs"}},
      {"cpu node without vcpus", Group("count: 1, gpus: 0"),
       {"clusters[0].nodes[0].vcpus: is required for a CPU-only node"}},
      {"cpu node with zero vcpus", Group("count: 1, gpus: 0, vcpus: 0"),
       {"clusters[0].nodes[0].vcpus: \"0\" on a CPU-only node"}},
      {"negative vcpus", Group("count: 1, gpu: L4, gpus: 1, vcpus: -4"),
       {"clusters[0].nodes[0].vcpus: \"-4\" must be a whole number >= 0"}},
      {"negative ram", Group("count: 1, gpu: L4, gpus: 1, ram_gib: -1"),
       {"clusters[0].nodes[0].ram_gib: \"-1\" is out of range; must be a number >= 0"}},
      {"mig not a list", Group("count: 1, gpu: A100-80GB, gpus: 8, mig: 3g.40gb"),
       {"clusters[0].nodes[0].mig: \"3g.40gb\" where a list belongs"}},
      {"unknown group key", Group("count: 1, gpu: L4, gpu_count: 1"),
       {"clusters[0].nodes[0].gpu_count: unknown key \"gpu_count\"; known keys here: count, gpu, gpus"}},
      {"bad name prefix", Group("count: 1, gpu: L4, gpus: 1, name_prefix: \"a b\""),
       {"clusters[0].nodes[0].name_prefix: \"a b\" must be 1-63 letters"}},
      {"repeated name prefix",
       "clusters:\n  - name: c\n    region: r:x\n    gpu_hour_usd: 1\n    nodes:\n"
       "      - {count: 1, gpu: L4, gpus: 1, name_prefix: n-}\n"
       "      - {count: 1, gpu: T4, gpus: 1, name_prefix: n-}\n",
       {"bad.yaml:7:51: clusters[0].nodes[1].name_prefix: \"n-\" is already used by "
        "clusters[0].nodes[0]"}},
  };
}

TEST(ParseFleet, EveryBadInputNamesFieldValueAndReason) {
  for (const BadCase& c : BadCases()) {
    auto fleet = ParseFleet(c.yaml, "bad.yaml");
    ASSERT_FALSE(fleet.ok()) << c.what;
    EXPECT_EQ(fleet.status().code(), StatusCode::kInvalidArgument) << c.what;
    for (const std::string& want : c.want) {
      EXPECT_NE(fleet.status().message().find(want), std::string::npos)
          << c.what << "\n  want: " << want << "\n  got:  " << fleet.status().message();
    }
  }
}

TEST(ParseFleet, ReportsEveryProblemOnItsOwnLineInFileOrder) {
  auto fleet = ParseFleet(
      "clusters:\n"
      "  - name: c\n"
      "    region: r:x\n"
      "    gpu_hour_usd: -2\n"
      "    nodes: [{count: 0, gpu: L4, gpus: 99}]\n",
      "f.yaml");
  ASSERT_FALSE(fleet.ok());
  EXPECT_EQ(fleet.status().message(),
            "f.yaml:4:19: clusters[0].gpu_hour_usd: \"-2\" is out of range; must be a number >= 0\n"
            "f.yaml:5:21: clusters[0].nodes[0].count: \"0\" must be a whole number >= 1\n"
            "f.yaml:5:39: clusters[0].nodes[0].gpus: \"99\" is more than 16 GPUs per node; split "
            "the machine into several nodes");
}

TEST(LoadFleetFile, MissingFileNamesThePath) {
  auto fleet = LoadFleetFile("examples/fleets/no-such-fleet.yaml");
  ASSERT_FALSE(fleet.ok());
  EXPECT_NE(fleet.status().message().find("examples/fleets/no-such-fleet.yaml: cannot open"),
            std::string::npos);
}

}  // namespace
}  // namespace meridian::spec
