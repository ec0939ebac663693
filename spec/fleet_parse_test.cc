// ParseFleet: every key reads into the right field, and what is left out
// takes its documented default.
#include <functional>

#include <gtest/gtest.h>

#include "spec/fleet.h"

namespace meridian::spec {
namespace {

FleetSpec Parse(const std::string& yaml) {
  auto fleet = ParseFleet(yaml, "f.yaml");
  EXPECT_TRUE(fleet.ok()) << fleet.status().message();
  return fleet.ok() ? *fleet : FleetSpec{};
}

// A cluster with one node group; `cluster` and `group` add keys.
std::string One(const std::string& cluster, const std::string& group) {
  return "clusters:\n  - name: c\n    region: gcp:us-central1\n    gpu_hour_usd: 1\n" + cluster +
         "    nodes:\n      - {count: 1, gpu: A100-80GB, gpus: 8" + group + "}\n";
}

TEST(ParseFleet, SlurmSettings) {
  FleetSpec f = Parse(
      "clusters:\n"
      "  - name: dev\n"
      "    region: gcp:us-central1\n"
      "    gpu_hour_usd: 1\n"
      "    backend: slurm\n"
      "    slurm:\n"
      "      partitions: [gpu, debug]\n"
      "      conf: /etc/slurm/slurm.conf\n"
      "      bin_dir: /opt/slurm/bin\n"
      "      gpu_types: {a100: A100-80GB}\n"
      "    nodes: [{count: 2, gpu: A100-80GB, gpus: 8}]\n");
  ASSERT_EQ(f.clusters.size(), 1u);
  ASSERT_TRUE(f.clusters[0].slurm.has_value());
  const SlurmSettings& s = *f.clusters[0].slurm;
  EXPECT_EQ(s.partitions, (std::vector<std::string>{"gpu", "debug"}));
  EXPECT_EQ(s.conf, "/etc/slurm/slurm.conf");
  EXPECT_EQ(s.bin_dir, "/opt/slurm/bin");
  EXPECT_EQ(s.gpu_types, (std::map<std::string, std::string>{{"a100", "A100-80GB"}}));
}

TEST(ParseFleet, EveryKeyReadsIntoItsField) {
  FleetSpec f = Parse(
      "clusters:\n"
      "  - name: onprem-a\n"
      "    region: gcp:us-central1\n"
      "    pricing: owned\n"
      "    gpu_hour_usd: 1.10\n"
      "    backend: slurm\n"
      "    repartitionable: true\n"
      "    nodes:\n"
      "      - {count: 4, gpu: A100-80GB, gpus: 8, vcpus: 96, ram_gib: 1024.5,\n"
      "         mig: [3g.40gb, 2g.20gb, 2g.20gb], name_prefix: a100-}\n"
      "  - name: aws-r\n"
      "    region: aws:us-east-1\n"
      "    pricing: reserved\n"
      "    instance_type: p4de.24xlarge\n"
      "    backend: kubernetes\n"
      "    nodes: [{count: 2, gpu: A100-80GB, gpus: 8}]\n"
      "elastic: false\n");
  ASSERT_EQ(f.clusters.size(), 2u);
  EXPECT_FALSE(f.elastic);
  const ClusterSpec& a = f.clusters[0];
  EXPECT_EQ(a.name, "onprem-a");
  EXPECT_EQ(a.region, "gcp:us-central1");
  EXPECT_EQ(a.pricing, CapacityPricing::kOwned);
  EXPECT_EQ(a.gpu_hour, Money::FromMicros(1'100'000));
  EXPECT_EQ(a.backend, "slurm");
  EXPECT_TRUE(a.repartitionable);
  ASSERT_EQ(a.nodes.size(), 1u);
  const NodeGroup& g = a.nodes[0];
  EXPECT_EQ(g.count, 4);
  EXPECT_EQ(g.gpu, "A100-80GB");
  EXPECT_EQ(g.gpus, 8);
  EXPECT_EQ(g.vcpus, 96);
  EXPECT_EQ(g.ram_gib, 1024.5);
  EXPECT_EQ(g.mig, (std::vector<std::string>{"3g.40gb", "2g.20gb", "2g.20gb"}));
  EXPECT_EQ(g.name_prefix, "a100-");
  const ClusterSpec& r = f.clusters[1];
  EXPECT_EQ(r.pricing, CapacityPricing::kReserved);
  EXPECT_EQ(r.instance_type, "p4de.24xlarge");
  EXPECT_FALSE(r.gpu_hour.has_value());
  EXPECT_EQ(r.backend, "kubernetes");
  // Positions are kept for later messages.
  EXPECT_EQ(LocateFleetField(f, "clusters[1].instance_type"),
            "f.yaml:14:20: clusters[1].instance_type");
  EXPECT_EQ(LocateFleetField(f, "clusters[0].nodes[0].mig[1]"),
            "f.yaml:10:25: clusters[0].nodes[0].mig[1]");
}

// A node group may declare its driver / CUDA stack (for jobs that pin one);
// the versions read like a job's `driver:`.
TEST(ParseFleet, NodeGroupDriverStack) {
  FleetSpec f = Parse(One("", ", driver: {version: \"550.54.15\", cuda: \"12.4\"}"));
  const NodeGroup& g = f.clusters.at(0).nodes.at(0);
  EXPECT_EQ(g.driver.version, "550.54.15");
  EXPECT_EQ(g.driver.cuda, "12.4");
  EXPECT_FALSE(Parse(One("", "")).clusters.at(0).nodes.at(0).driver.set());

  auto bad = ParseFleet(One("", ", driver: {cuda: twelve, kernel: 6}"), "f.yaml");
  ASSERT_FALSE(bad.ok());
  const std::string& m = bad.status().message();
  EXPECT_NE(m.find("clusters[0].nodes[0].driver.cuda: \"twelve\" is not a version"),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("clusters[0].nodes[0].driver.kernel"), std::string::npos) << m;
}

TEST(ParseFleet, DefaultsForWhatIsLeftOut) {
  FleetSpec f = Parse(One("", ""));
  EXPECT_TRUE(f.elastic);  // elastic: true unless said otherwise
  const ClusterSpec& c = f.clusters.at(0);
  EXPECT_EQ(c.pricing, CapacityPricing::kOwned);
  EXPECT_EQ(c.backend, "local");
  EXPECT_FALSE(c.repartitionable);
  EXPECT_TRUE(c.instance_type.empty());
  const NodeGroup& g = c.nodes.at(0);
  EXPECT_EQ(g.vcpus, 0);
  EXPECT_EQ(g.ram_gib, 0);
  EXPECT_TRUE(g.mig.empty());
  EXPECT_EQ(g.name_prefix, "a100-80gb-");
}

TEST(ParseFleet, ScalarKeysTable) {
  struct Case {
    std::string yaml;
    std::function<void(const FleetSpec&)> check;
  } cases[] = {
      {One("    backend: local\n", ""), [](const FleetSpec& f) { EXPECT_EQ(f.clusters[0].backend, "local"); }},
      {One("    repartitionable: no\n", ""),
       [](const FleetSpec& f) { EXPECT_FALSE(f.clusters[0].repartitionable); }},
      {"clusters: [{name: c, region: r:x, gpu_hour_usd: 1, nodes: [{count: 3, gpu: L4, gpus: 1}]}]\n",
       [](const FleetSpec& f) { EXPECT_EQ(f.clusters[0].nodes[0].count, 3); }},
      {One("", ", mig: []"), [](const FleetSpec& f) { EXPECT_TRUE(f.clusters[0].nodes[0].mig.empty()); }},
      {One("", ", ram_gib: 2048"),
       [](const FleetSpec& f) { EXPECT_EQ(f.clusters[0].nodes[0].ram_gib, 2048); }},
      // A free owned cluster is allowed: gpu_hour_usd: 0.
      {"clusters: [{name: c, region: r:x, gpu_hour_usd: 0, nodes: [{count: 1, gpu: L4, gpus: 1}]}]\n",
       [](const FleetSpec& f) { EXPECT_EQ(f.clusters[0].gpu_hour, Money()); }},
      // A CPU-only owned cluster needs no gpu_hour_usd.
      {"clusters: [{name: c, region: r:x, nodes: [{count: 3, gpus: 0, vcpus: 64}]}]\n",
       [](const FleetSpec& f) {
         EXPECT_EQ(f.clusters[0].nodes[0].gpu, "");
         EXPECT_EQ(f.clusters[0].nodes[0].vcpus, 64);
         EXPECT_EQ(f.clusters[0].nodes[0].name_prefix, "cpu-");
         EXPECT_FALSE(f.clusters[0].gpu_hour.has_value());
       }},
      // A CPU-only cluster priced per vCPU-hour and GiB-hour; left out, the
      // rates stay unset here and sched::Fleet fills in the defaults.
      {"clusters: [{name: c, region: r:x, vcpu_hour_usd: 0.05, ram_gib_hour_usd: 0.005, "
       "nodes: [{count: 3, gpus: 0, vcpus: 64}]}]\n",
       [](const FleetSpec& f) {
         EXPECT_EQ(f.clusters[0].vcpu_hour, Money::FromMicros(50'000));
         EXPECT_EQ(f.clusters[0].ram_gib_hour, Money::FromMicros(5'000));
       }},
      {"clusters: [{name: c, region: r:x, nodes: [{count: 3, gpus: 0, vcpus: 64}]}]\n",
       [](const FleetSpec& f) {
         EXPECT_FALSE(f.clusters[0].vcpu_hour.has_value());
         EXPECT_FALSE(f.clusters[0].ram_gib_hour.has_value());
       }},
      // No clusters at all: cloud only.
      {"clusters: []\n", [](const FleetSpec& f) { EXPECT_TRUE(f.clusters.empty()); }},
      // A null value counts as left out.
      {One("    backend: ~\n", ""), [](const FleetSpec& f) { EXPECT_EQ(f.clusters[0].backend, "local"); }},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.yaml);
    c.check(Parse(c.yaml));
  }
}

TEST(ParseFleet, DefaultNamePrefixesAreUniqueInACluster) {
  FleetSpec f = Parse(
      "clusters:\n  - name: c\n    region: r:x\n    gpu_hour_usd: 1\n    nodes:\n"
      "      - {count: 1, gpu: H100-80GB, gpus: 8}\n"
      "      - {count: 1, gpu: H100-80GB, gpus: 8, mig: [7g.80gb]}\n"
      "      - {count: 1, gpus: 0, vcpus: 8}\n");
  const std::vector<NodeGroup>& g = f.clusters.at(0).nodes;
  EXPECT_EQ(g[0].name_prefix, "h100-80gb-");
  EXPECT_EQ(g[1].name_prefix, "h100-80gb-g1-");  // second group of the model: its index added
  EXPECT_EQ(g[2].name_prefix, "cpu-");
}

}  // namespace
}  // namespace meridian::spec
