// Interconnect figures of the embedded catalog against the cited sources,
// written out by hand, and the loader's errors for bad rows.
#include <gtest/gtest.h>

#include <set>
#include <utility>

#include "catalog/catalog.h"
#include "catalog/csv.h"
#include "catalog/embedded.h"
#include "catalog/parse.h"

namespace meridian::catalog {
namespace {

const Catalog& Embedded() {
  static std::shared_ptr<const Catalog> cat = [] {
    auto c = Catalog::LoadEmbedded();
    EXPECT_TRUE(c.ok()) << c.status().ToString();
    return *c;
  }();
  return *cat;
}

const Offering* FindType(std::string_view provider, std::string_view type) {
  for (const auto& o : Embedded().offerings()) {
    if (o.provider == provider && o.instance_type == type) return &o;
  }
  return nullptr;
}

TEST(Interconnect, GpuLinksMatchTheDatasheets) {
  struct Case {
    const char* gpu;
    const char* link;
    double gbyte_per_s;
  };
  const Case cases[] = {
      // NVIDIA H100 datasheet, SXM: NVLink 900 GB/s (18 links x 50 GB/s).
      {"H100-80GB", "NVLink 4 (NVSwitch)", 900},
      // NVIDIA NVLink page: twelve third-generation links, 600 GB/s.
      {"A100-40GB", "NVLink 3 (NVSwitch)", 600},
      // NVIDIA T4 datasheet: PCIe Gen3 x16, 2 x 16 GB/s.
      {"T4", "PCIe Gen3 x16", 32},
      // NVIDIA H100 datasheet, PCIe: Gen5 128 GB/s.
      {"H100-PCIE-80GB", "PCIe Gen5 x16", 128},
      // NVIDIA HGX B200: fifth-generation NVLink, 1.8 TB/s per GPU.
      {"B200", "NVLink 5 (NVSwitch)", 1800},
  };
  for (const Case& c : cases) {
    const GpuModel* g = Embedded().FindGpu(c.gpu);
    ASSERT_NE(g, nullptr) << c.gpu;
    EXPECT_EQ(g->intra_node_link, c.link) << c.gpu;
    EXPECT_DOUBLE_EQ(g->intra_node_gbyte_per_s, c.gbyte_per_s) << c.gpu;
  }
}

TEST(Interconnect, InstanceNetworksMatchTheProviderDocs) {
  struct Case {
    const char* provider;
    const char* type;
    NetworkKind kind;
    double gbit_per_s;
  };
  const Case cases[] = {
      // AWS p5-efa: up to 32 network cards, 3,200 Gbps.
      {"aws", "p5.48xlarge", NetworkKind::kEfa, 3200},
      // AWS Compute Blog, "Amazon EC2 P4d instances deep dive": 400 Gbps EFA.
      {"aws", "p4d.24xlarge", NetworkKind::kEfa, 400},
      // GCP gpu-network-bandwidth: A3 Mega up to 1,600 Gbps, GPUDirect-TCPXO.
      {"gcp", "a3-megagpu-8g", NetworkKind::kGpuDirectTcpxo, 1600},
      // GCP: A3 Ultra, eight CX7 NICs, 3,200 Gbps GPUDirect RDMA.
      {"gcp", "a3-ultragpu-8g", NetworkKind::kRoce, 3200},
      // Azure ND H100 v5: one 400 Gb/s NDR InfiniBand link per GPU, 8 x 400 = 3,200.
      {"azure", "Standard_ND96isr_H100_v5", NetworkKind::kInfiniBand, 3200},
      // Azure ND H200 v5: 3.2 Tb/s a VM, one 400 Gb/s CX7 InfiniBand link per GPU.
      {"azure", "Standard_ND96isr_H200_v5", NetworkKind::kInfiniBand, 3200},
      // Azure ND A100 v4: one 200 Gb/s HDR link per GPU, 8 x 200 = 1,600.
      {"azure", "Standard_ND96asr_v4", NetworkKind::kInfiniBand, 1600},
      // AWS instance types, accelerated computing network specifications:
      // p5en.48xlarge 3,200 Gigabit over 16 EFAv3 cards.
      {"aws", "p5en.48xlarge", NetworkKind::kEfa, 3200},
      // Same page: p6-b200.48xlarge 8 x 400 = 3,200 Gigabit.
      {"aws", "p6-b200.48xlarge", NetworkKind::kEfa, 3200},
      // Same page: p4de.24xlarge 4 x 100 = 400 Gigabit, as p4d.
      {"aws", "p4de.24xlarge", NetworkKind::kEfa, 400},
      // Same page: p5.4xlarge, one GPU, 100 Gigabit.
      {"aws", "p5.4xlarge", NetworkKind::kEfa, 100},
  };
  for (const Case& c : cases) {
    const Offering* o = FindType(c.provider, c.type);
    ASSERT_NE(o, nullptr) << c.type;
    EXPECT_EQ(o->network_kind, c.kind) << c.type;
    EXPECT_DOUBLE_EQ(o->network_gbit_per_s, c.gbit_per_s) << c.type;
    EXPECT_FALSE(o->network_fallback) << c.type;
  }
}

TEST(Interconnect, EveryOfferingHasANetworkAndALink) {
  for (const auto& o : Embedded().offerings()) {
    EXPECT_GT(o.network_gbit_per_s, 0) << o.provider << " " << o.instance_type;
    EXPECT_GT(o.intra_node_gbyte_per_s, 0) << o.provider << " " << o.instance_type;
    EXPECT_FALSE(o.intra_node_link.empty()) << o.instance_type;
  }
}

// The built file itself: one row per instance type of the offerings, and every
// row either cites a source (fallback=0) or is the documented fallback
// (fallback=1: Ethernet, 25 Gbit/s, a source naming the fallback). An instance
// type added to the offerings without a row of
// tools/catalog_interconnect_instances.csv must come out as the marked
// fallback, never as an uncited figure.
TEST(Interconnect, EveryInstanceTypeHasACitedRowOrTheMarkedFallback) {
  const CatalogFiles& files = EmbeddedCatalogFiles();
  auto it = files.find("instance_networks.csv");
  ASSERT_NE(it, files.end());
  auto table = CsvTable::Parse("instance_networks.csv", it->second);
  ASSERT_TRUE(table.ok()) << table.status().ToString();
  std::set<std::pair<std::string, std::string>> rows;
  for (const CsvRow& row : table->rows()) {
    CsvRecord r(*table, row);
    const std::string where = r.Text("provider") + " " + r.Text("instance_type");
    EXPECT_TRUE(rows.emplace(r.Text("provider"), r.Text("instance_type")).second) << where;
    const std::string& source = r.Text("source");
    if (r.Text("fallback") == "1") {
      EXPECT_EQ(r.Text("network_kind"), "Ethernet") << where;
      EXPECT_EQ(r.Text("network_gbit_per_s"), "25") << where;
      EXPECT_EQ(source.rfind("fallback:", 0), 0u) << where << ": " << source;
    } else {
      EXPECT_EQ(r.Text("fallback"), "0") << where;
      EXPECT_GT(source.size(), 20u) << where << " cites no source";
      EXPECT_NE(source.rfind("fallback", 0), 0u) << where;
    }
  }
  std::set<std::pair<std::string, std::string>> offered;
  for (const auto& o : Embedded().offerings()) offered.emplace(o.provider, o.instance_type);
  EXPECT_EQ(rows, offered);
}

TEST(Interconnect, LambdaInstancesAreTheMarkedFallback) {
  // Lambda publishes no network figure between its on-demand instances
  // (docs/catalog.md, Interconnect): its 8x H100 SXM type stays on the
  // fallback, not on the InfiniBand of its separately sold clusters.
  const Offering* o = FindType("lambda", "gpu_8x_h100_sxm5");
  ASSERT_NE(o, nullptr);
  EXPECT_TRUE(o->network_fallback);
  EXPECT_DOUBLE_EQ(o->network_gbit_per_s, 25);
  EXPECT_EQ(o->intra_node_link, "NVLink 4 (NVSwitch)");
}

TEST(Interconnect, UndocumentedInstanceIsAMarkedFallback) {
  // GCP documents no per-size figure for the smaller A3 High types.
  const Offering* o = FindType("gcp", "a3-highgpu-1g");
  ASSERT_NE(o, nullptr);
  EXPECT_TRUE(o->network_fallback);
  EXPECT_EQ(o->network_kind, NetworkKind::kEthernet);
  EXPECT_DOUBLE_EQ(o->network_gbit_per_s, 25);
}

TEST(Interconnect, InstanceLinkOverridesTheGpuDefault) {
  // Azure NC A100 v4: PCIe A100 cards, not the SXM board's NVLink.
  const Offering* o = FindType("azure", "Standard_NC96ads_A100_v4");
  ASSERT_NE(o, nullptr);
  EXPECT_EQ(o->intra_node_link, "PCIe Gen4 x16");
  EXPECT_DOUBLE_EQ(o->intra_node_gbyte_per_s, 64);
  // p5: the GPU model's own link.
  EXPECT_EQ(FindType("aws", "p5.48xlarge")->intra_node_link, "NVLink 4 (NVSwitch)");
}

Offering OneOffering() {
  Offering o;
  o.provider = "aws";
  o.instance_type = "p5.48xlarge";
  return o;
}

constexpr std::string_view kHeader =
    "provider,instance_type,gpu_model,intra_node_link,intra_node_gbyte_per_s,network_kind,"
    "network_gbit_per_s,fallback,source\n";

std::string ParseError(const std::string& row) {
  auto t = CsvTable::Parse("instance_networks.csv", std::string(kHeader) + row);
  EXPECT_TRUE(t.ok());
  auto o = internal::ParseInstanceNetworks(*t, {OneOffering()});
  return o.ok() ? "" : o.status().ToString();
}

TEST(Interconnect, BadRowsNameFileLineAndField) {
  EXPECT_NE(ParseError("aws,p5.48xlarge,H100-80GB,NVLink,900,Token Ring,3200,0,x\n")
                .find("instance_networks.csv:2: column network_kind"),
            std::string::npos);
  EXPECT_NE(ParseError("aws,p5.48xlarge,H100-80GB,NVLink,900,EFA,-1,0,x\n")
                .find("column network_gbit_per_s"),
            std::string::npos);
  EXPECT_NE(ParseError("aws,p4d.24xlarge,A100-40GB,NVLink,600,EFA,400,0,x\n")
                .find("column instance_type"),
            std::string::npos);
  // An offering without a row.
  EXPECT_NE(ParseError("").find("no row for offering aws p5.48xlarge"), std::string::npos);
}

}  // namespace
}  // namespace meridian::catalog
