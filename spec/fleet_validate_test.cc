// ValidateFleetAgainstCatalog and PriceCluster against the real embedded
// catalog: names the catalog lacks, reserved instance types, MIG layouts, and
// the example fleets.
#include <filesystem>

#include <gtest/gtest.h>

#include "spec/fleet.h"

namespace meridian::spec {
namespace {

std::shared_ptr<const catalog::Catalog> Embedded() {
  static auto cat = catalog::Catalog::LoadEmbedded();
  EXPECT_TRUE(cat.ok()) << cat.status().message();
  return cat.ok() ? *cat : nullptr;
}

FleetSpec Parse(const std::string& yaml) {
  auto fleet = ParseFleet(yaml, "v.yaml");
  EXPECT_TRUE(fleet.ok()) << fleet.status().message();
  return fleet.ok() ? *fleet : FleetSpec{};
}

// An owned cluster in `region` with one group of `gpus` x `gpu` (and `extra`
// keys in the group).
std::string Owned(const std::string& region, const std::string& gpu, int gpus,
                  const std::string& extra = "") {
  return "clusters:\n  - name: c\n    region: " + region + "\n    gpu_hour_usd: 1\n    nodes:\n" +
         "      - {count: 1, gpu: " + gpu + ", gpus: " + std::to_string(gpus) + extra + "}\n";
}

// A reserved cluster of `instance_type` in `region` with one group.
std::string Reserved(const std::string& region, const std::string& instance_type,
                     const std::string& group) {
  return "clusters:\n  - name: r\n    region: " + region +
         "\n    pricing: reserved\n    instance_type: " + instance_type + "\n    nodes:\n      - {" +
         group + "}\n";
}

TEST(ValidateFleetAgainstCatalog, AcceptsWhatTheCatalogHas) {
  auto cat = Embedded();
  ASSERT_NE(cat, nullptr);
  const std::string good[] = {
      Owned("gcp:us-central1", "V100-32GB", 8),
      // 3 + 2 + 2 = 7 compute slices, 4 + 2 + 2 = 8 memory slices: exactly one A100.
      Owned("gcp:us-central1", "A100-80GB", 8, ", mig: [3g.40gb, 2g.20gb, 2g.20gb]"),
      // 7 x 1g.10gb: max_instances is 7.
      Owned("aws:us-east-1", "H100-80GB", 8,
            ", mig: [1g.10gb, 1g.10gb, 1g.10gb, 1g.10gb, 1g.10gb, 1g.10gb, 1g.10gb]"),
      Owned("aws:us-east-1", "H100-80GB", 8, ", mig: [7g.80gb]"),
      Reserved("aws:us-east-1", "p4de.24xlarge", "count: 4, gpu: A100-80GB, gpus: 8, vcpus: 96"),
      "clusters: [{name: cpu, region: aws:us-east-1, nodes: [{count: 2, gpus: 0, vcpus: 64}]}]\n",
  };
  for (const std::string& yaml : good) {
    Status st = ValidateFleetAgainstCatalog(Parse(yaml), *cat);
    EXPECT_TRUE(st.ok()) << yaml << "\n" << st.message();
  }
}

TEST(ValidateFleetAgainstCatalog, RejectsWithLocationValueAndReason) {
  auto cat = Embedded();
  ASSERT_NE(cat, nullptr);
  struct Case {
    std::string yaml;
    std::vector<std::string> want;
  } cases[] = {
      {Owned("gcp:us-central2", "L4", 1),
       {"v.yaml:3:13: clusters[0].region: \"gcp:us-central2\" is not a region in the catalog",
        "did you mean gcp:us-central1"}},
      {Owned("us-central1", "L4", 1), {"clusters[0].region: \"us-central1\"", "gcp:us-central1"}},
      {Owned("gcp:us-central1", "H100", 8),
       {"v.yaml:6:25: clusters[0].nodes[0].gpu: \"H100\" is not a GPU model in the catalog; did "
        "you mean H100-80GB"}},
      {Owned("gcp:us-central1", "TPU-v5e", 8),
       {"clusters[0].nodes[0].gpu: \"TPU-v5e\"", "known models: A10, A100-40GB"}},
      // MIG on a model without MIG.
      {Owned("gcp:us-central1", "L4", 1, ", mig: [1g.6gb]"),
       {"clusters[0].nodes[0].mig: [1g.6gb] but L4 has no MIG profiles",
        "MIG-capable model (A100-40GB, A100-80GB"}},
      // A profile of another model.
      {Owned("gcp:us-central1", "A100-80GB", 8, ", mig: [3g.40gb, 1g.5gb]"),
       {"v.yaml:6:60: clusters[0].nodes[0].mig[1]: \"1g.5gb\" is not a MIG profile of A100-80GB",
        "did you mean"}},
      {Owned("gcp:us-central1", "H100-80GB", 8, ", mig: [3g.41gb]"),
       {"clusters[0].nodes[0].mig[0]: \"3g.41gb\" is not a MIG profile of H100-80GB; did you mean "
        "3g.40gb?"}},
      // 3 + 3 + 2 = 8 compute slices > 7; memory 4 + 4 + 2 = 10 > 8; 3g.40gb fits twice at most.
      {Owned("gcp:us-central1", "A100-80GB", 8, ", mig: [3g.40gb, 3g.40gb, 2g.20gb]"),
       {"v.yaml:6:50: clusters[0].nodes[0].mig: [3g.40gb, 3g.40gb, 2g.20gb] needs 8 compute "
        "slices; one A100-80GB has 7",
        "[3g.40gb, 3g.40gb, 2g.20gb] needs 10 memory slices; one A100-80GB has 8"}},
      // 4 x 1g.20gb: 4 compute, 8 memory slices, within both, but max_instances is 4... and
      // 5 x 1g.20gb is 10 memory slices and over max_instances.
      {Owned("gcp:us-central1", "H100-80GB", 8,
             ", mig: [1g.20gb, 1g.20gb, 1g.20gb, 1g.20gb, 1g.20gb]"),
       {"needs 10 memory slices; one H100-80GB has 8",
        "has 5 x 1g.20gb; at most 4 fit on one H100-80GB"}},
      // Two 1g.10gb+me: compute 2, memory 2, within the slices, but max_instances is 1.
      {Owned("gcp:us-central1", "H100-80GB", 8, ", mig: [1g.10gb+me, 1g.10gb+me]"),
       {"clusters[0].nodes[0].mig: [1g.10gb+me, 1g.10gb+me] has 2 x 1g.10gb+me; at most 1 fit on "
        "one H100-80GB"}},
      // Reserved capacity.
      {Reserved("aws:us-east-1", "p4de.48xlarge", "count: 1, gpu: A100-80GB, gpus: 8"),
       {"v.yaml:5:20: clusters[0].instance_type: \"p4de.48xlarge\" is not sold in aws:us-east-1",
        "did you mean"}},
      {Reserved("aws:us-east-1", "a3-highgpu-8g", "count: 1, gpu: H100-80GB, gpus: 8"),
       {"clusters[0].instance_type: \"a3-highgpu-8g\" is not sold in aws:us-east-1 according to "
        "the catalog; it is sold in gcp:"}},
      {Reserved("aws:us-east-1", "p4de.24xlarge", "count: 1, gpu: H100-80GB, gpus: 8"),
       {"v.yaml:7:25: clusters[0].nodes[0].gpu: \"H100-80GB\" but the reserved p4de.24xlarge has 8 "
        "x A100-80GB"}},
      {Reserved("aws:us-east-1", "p4de.24xlarge", "count: 1, gpu: A100-80GB, gpus: 4"),
       {"clusters[0].nodes[0].gpus: \"4\" but the reserved p4de.24xlarge has 8 GPUs per node"}},
      {Reserved("aws:us-east-1", "p4de.24xlarge", "count: 1, gpus: 0, vcpus: 8"),
       {"clusters[0].nodes[0].gpus: \"none\" but the reserved p4de.24xlarge has 8 x A100-80GB"}},
      {Reserved("aws:us-east-1", "p4de.24xlarge",
                "count: 1, gpu: A100-80GB, gpus: 8, vcpus: 128, ram_gib: 4096"),
       {"clusters[0].nodes[0].vcpus: \"128\" is more than the 96 of p4de.24xlarge",
        "clusters[0].nodes[0].ram_gib: \"4096\" is more than the 1152 GiB of p4de.24xlarge"}},
  };
  for (const Case& c : cases) {
    Status st = ValidateFleetAgainstCatalog(Parse(c.yaml), *cat);
    ASSERT_FALSE(st.ok()) << c.yaml;
    EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
    for (const std::string& want : c.want) {
      EXPECT_NE(st.message().find(want), std::string::npos)
          << c.yaml << "\n  want: " << want << "\n  got:  " << st.message();
    }
  }
}

TEST(ValidateFleetAgainstCatalog, CollectsEveryProblemOnItsOwnLine) {
  auto cat = Embedded();
  ASSERT_NE(cat, nullptr);
  Status st = ValidateFleetAgainstCatalog(
      Parse("clusters:\n"
            "  - {name: a, region: gcp:nowhere, gpu_hour_usd: 1, nodes: [{count: 1, gpu: X1, gpus: 1}]}\n"
            "  - {name: b, region: aws:us-east-1, gpu_hour_usd: 1,\n"
            "     nodes: [{count: 1, gpu: L4, gpus: 1, mig: [1g.6gb]}]}\n"),
      *cat);
  ASSERT_FALSE(st.ok());
  const std::string& m = st.message();
  EXPECT_EQ(std::count(m.begin(), m.end(), '\n'), 2) << m;
  EXPECT_NE(m.find("v.yaml:2:23: clusters[0].region: \"gcp:nowhere\""), std::string::npos) << m;
  EXPECT_NE(m.find("v.yaml:2:77: clusters[0].nodes[0].gpu: \"X1\""), std::string::npos) << m;
  EXPECT_NE(m.find("v.yaml:4:48: clusters[1].nodes[0].mig: [1g.6gb] but L4"), std::string::npos)
      << m;
}

TEST(PriceCluster, OwnedIsGpuHourUsdPerGpuHourUsed) {
  auto cat = Embedded();
  ASSERT_NE(cat, nullptr);
  FleetSpec f = Parse(Owned("gcp:us-central1", "L4", 1).replace(
      Owned("gcp:us-central1", "L4", 1).find("gpu_hour_usd: 1"), 15, "gpu_hour_usd: 1.10"));
  auto price = PriceCluster(f, 0, *cat);
  ASSERT_TRUE(price.ok()) << price.status().message();
  EXPECT_EQ(price->per_gpu_hour, Money::FromMicros(1'100'000));
  EXPECT_FALSE(price->per_node_hour.has_value());
  EXPECT_FALSE(price->paid_when_idle);
  EXPECT_EQ(price->source, "gpu_hour_usd in the fleet file");
}

TEST(PriceCluster, ReservedTakesTheCatalogsOneYearRateElseOnDemand) {
  auto cat = Embedded();
  ASSERT_NE(cat, nullptr);
  // p4de.24xlarge in aws:us-east-1: reserved_1y 17.401365 $/h for 8 GPUs
  // -> 17.401365 / 8 = 2.175170625, truncated to 2.175170 $/GPU-hour.
  auto reserved = PriceCluster(
      Parse(Reserved("aws:us-east-1", "p4de.24xlarge", "count: 4, gpu: A100-80GB, gpus: 8")), 0,
      *cat);
  ASSERT_TRUE(reserved.ok()) << reserved.status().message();
  EXPECT_EQ(reserved->per_node_hour, Money::FromMicros(17'401'365));
  EXPECT_EQ(reserved->per_gpu_hour, Money::FromMicros(2'175'170));
  EXPECT_TRUE(reserved->paid_when_idle);
  EXPECT_NE(reserved->source.find("catalog 1-year reserved rate of p4de.24xlarge in aws:us-east-1"),
            std::string::npos)
      << reserved->source;
  // p5.48xlarge in aws:us-east-1 lists no reserved rate: on-demand 55.04 $/h.
  auto on_demand = PriceCluster(
      Parse(Reserved("aws:us-east-1", "p5.48xlarge", "count: 1, gpu: H100-80GB, gpus: 8")), 0,
      *cat);
  ASSERT_TRUE(on_demand.ok()) << on_demand.status().message();
  EXPECT_EQ(on_demand->per_node_hour, Money::FromMicros(55'040'000));
  EXPECT_EQ(on_demand->per_gpu_hour, Money::FromMicros(6'880'000));
  EXPECT_NE(on_demand->source.find("catalog on-demand rate (no 1-year reserved rate listed)"),
            std::string::npos)
      << on_demand->source;
  auto missing = PriceCluster(
      Parse(Reserved("aws:us-east-1", "p9.mega", "count: 1, gpu: H100-80GB, gpus: 8")), 0, *cat);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find(
                "v.yaml:5:20: clusters[0].instance_type: \"p9.mega\" is not sold in aws:us-east-1"),
            std::string::npos)
      << missing.status().message();
}

TEST(FleetExamples, EveryFileParsesAndValidatesAgainstTheEmbeddedCatalog) {
  auto cat = Embedded();
  ASSERT_NE(cat, nullptr);
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator("examples/fleets")) {
    if (entry.path().extension() != ".yaml") continue;
    ++files;
    auto fleet = LoadFleetFile(entry.path().string());
    ASSERT_TRUE(fleet.ok()) << fleet.status().message();
    Status st = ValidateFleetAgainstCatalog(*fleet, *cat);
    EXPECT_TRUE(st.ok()) << st.message();
    for (size_t i = 0; i < fleet->clusters.size(); ++i) {
      auto price = PriceCluster(*fleet, i, *cat);
      EXPECT_TRUE(price.ok()) << price.status().message();
    }
  }
  EXPECT_GE(files, 3);
}

TEST(FleetExamples, TheDocumentedFleetsReadAsWritten) {
  auto mixed = LoadFleetFile("examples/fleets/onprem-mixed.yaml");
  ASSERT_TRUE(mixed.ok()) << mixed.status().message();
  ASSERT_EQ(mixed->clusters.size(), 2u);
  EXPECT_TRUE(mixed->elastic);
  EXPECT_EQ(mixed->clusters[0].nodes[1].mig,
            (std::vector<std::string>{"3g.40gb", "2g.20gb", "2g.20gb"}));
  EXPECT_TRUE(mixed->clusters[1].repartitionable);

  auto reserved = LoadFleetFile("examples/fleets/reserved-plus-cloud.yaml");
  ASSERT_TRUE(reserved.ok()) << reserved.status().message();
  EXPECT_EQ(reserved->clusters.at(0).pricing, CapacityPricing::kReserved);
  EXPECT_EQ(reserved->clusters.at(0).instance_type, "p4de.24xlarge");
  EXPECT_TRUE(reserved->elastic);

  auto sun = LoadFleetFile("examples/fleets/follow-the-sun.yaml");
  ASSERT_TRUE(sun.ok()) << sun.status().message();
  auto cat = Embedded();
  ASSERT_NE(cat, nullptr);
  std::vector<std::string> geographies;
  for (const ClusterSpec& c : sun->clusters) geographies.push_back(cat->FindRegion(c.region)->geography);
  EXPECT_EQ(geographies, (std::vector<std::string>{"us", "eu", "asia"}));
}

}  // namespace
}  // namespace meridian::spec

namespace meridian::spec {
namespace {

TEST(ValidateFleetAgainstCatalog, SlurmGpuTypesNameCatalogModels) {
  auto cat = Embedded();
  ASSERT_NE(cat, nullptr);
  FleetSpec f = Parse(
      "clusters:\n  - name: c\n    region: gcp:us-central1\n    gpu_hour_usd: 1\n    backend: slurm\n"
      "    slurm: {partitions: [gpu], gpu_types: {a100: A100-80G}}\n"
      "    nodes: [{count: 1, gpu: A100-80GB, gpus: 8}]\n");
  Status st = ValidateFleetAgainstCatalog(f, *cat);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("clusters[0].slurm.gpu_types.a100: \"A100-80G\""), std::string::npos)
      << st.message();
}

}  // namespace
}  // namespace meridian::spec
