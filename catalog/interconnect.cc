// gpu_links.csv and instance_networks.csv: how GPUs reach each other within a
// node and across nodes (tools/build_catalog.py, docs/catalog.md "Interconnect").
#include <algorithm>
#include <array>
#include <map>
#include <set>
#include <utility>

#include "catalog/parse.h"

namespace meridian::catalog {

namespace {

constexpr std::array<std::pair<NetworkKind, std::string_view>, 6> kNetworkKinds = {{
    {NetworkKind::kEthernet, "Ethernet"},
    {NetworkKind::kEfa, "EFA"},
    {NetworkKind::kInfiniBand, "InfiniBand"},
    {NetworkKind::kGpuDirectTcpx, "GPUDirect-TCPX"},
    {NetworkKind::kGpuDirectTcpxo, "GPUDirect-TCPXO"},
    {NetworkKind::kRoce, "RoCE"},
}};

}  // namespace

std::string_view ToString(NetworkKind k) {
  for (const auto& [kind, name] : kNetworkKinds) {
    if (kind == k) return name;
  }
  return "?";
}

namespace internal {

namespace {

Result<double> Positive(const CsvRecord& r, std::string_view col) {
  Result<double> v = r.Number(col);
  if (!v.ok()) return v.status();
  if (*v <= 0) return r.Error(col, "must be > 0, got " + r.Text(col));
  return *v;
}

Result<NetworkKind> ParseNetworkKind(const CsvRecord& r) {
  for (const auto& [kind, name] : kNetworkKinds) {
    if (r.Text("network_kind") == name) return kind;
  }
  return r.Error("network_kind", "\"" + r.Text("network_kind") +
                                     "\" is not EFA, InfiniBand, GPUDirect-TCPX, "
                                     "GPUDirect-TCPXO, RoCE or Ethernet");
}

// The figures of one instance_networks.csv row, applied to each of its offerings.
struct InstanceNetwork {
  NetworkKind kind = NetworkKind::kEthernet;
  double gbit_per_s = 0;
  bool fallback = false;
  std::string intra_link;
  double intra_gbyte_per_s = 0;
};

Result<InstanceNetwork> ParseNetworkRow(const CsvRecord& r) {
  InstanceNetwork n;
  Result<NetworkKind> kind = ParseNetworkKind(r);
  if (!kind.ok()) return kind.status();
  n.kind = *kind;
  Result<double> gbit = Positive(r, "network_gbit_per_s");
  if (!gbit.ok()) return gbit.status();
  n.gbit_per_s = *gbit;
  Result<int> fallback = r.Integer("fallback");
  if (!fallback.ok()) return fallback.status();
  if (*fallback != 0 && *fallback != 1) return r.Error("fallback", "must be 0 or 1");
  n.fallback = *fallback == 1;
  Result<std::string> link = r.NonEmpty("intra_node_link");
  if (!link.ok()) return link.status();
  n.intra_link = *link;
  Result<double> gbyte = Positive(r, "intra_node_gbyte_per_s");
  if (!gbyte.ok()) return gbyte.status();
  n.intra_gbyte_per_s = *gbyte;
  return n;
}

}  // namespace

Result<std::vector<GpuModel>> ParseGpuLinks(const CsvTable& t, std::vector<GpuModel> gpus) {
  MERIDIAN_RETURN_IF_ERROR(t.RequireColumns({"gpu", "link", "gbyte_per_s", "source"}));
  std::set<std::string, std::less<>> seen;
  for (const CsvRow& row : t.rows()) {
    CsvRecord r(t, row);
    auto g = std::find_if(gpus.begin(), gpus.end(),
                          [&](const GpuModel& m) { return m.name == r.Text("gpu"); });
    if (g == gpus.end()) return r.Error("gpu", "unknown GPU model \"" + r.Text("gpu") + "\"");
    if (!seen.insert(g->name).second) return r.Error("gpu", "duplicate GPU model \"" + g->name + "\"");
    Result<std::string> link = r.NonEmpty("link");
    if (!link.ok()) return link.status();
    Result<double> gbyte = Positive(r, "gbyte_per_s");
    if (!gbyte.ok()) return gbyte.status();
    g->intra_node_link = *link;
    g->intra_node_gbyte_per_s = *gbyte;
  }
  return gpus;
}

Result<std::vector<Offering>> ParseInstanceNetworks(const CsvTable& t,
                                                    std::vector<Offering> offerings) {
  MERIDIAN_RETURN_IF_ERROR(t.RequireColumns(
      {"provider", "instance_type", "gpu_model", "intra_node_link", "intra_node_gbyte_per_s",
       "network_kind", "network_gbit_per_s", "fallback", "source"}));
  std::set<std::pair<std::string, std::string>> offered;
  for (const Offering& o : offerings) offered.emplace(o.provider, o.instance_type);
  std::map<std::pair<std::string, std::string>, InstanceNetwork> by_type;
  for (const CsvRow& row : t.rows()) {
    CsvRecord r(t, row);
    auto key = std::make_pair(r.Text("provider"), r.Text("instance_type"));
    if (offered.count(key) == 0) {
      return r.Error("instance_type", "\"" + key.first + " " + key.second +
                                          "\" is not an instance type of offerings.csv");
    }
    Result<InstanceNetwork> n = ParseNetworkRow(r);
    if (!n.ok()) return n.status();
    if (!by_type.emplace(key, std::move(n).value()).second) {
      return r.Error("instance_type", "duplicate instance type \"" + key.second + "\"");
    }
  }
  for (Offering& o : offerings) {
    auto it = by_type.find({o.provider, o.instance_type});
    if (it == by_type.end()) {
      return Status::Invalid(t.file() + ": no row for offering " + o.provider + " " +
                             o.instance_type + " (every instance type needs one)");
    }
    const InstanceNetwork& n = it->second;
    o.network_kind = n.kind;
    o.network_gbit_per_s = n.gbit_per_s;
    o.network_fallback = n.fallback;
    o.intra_node_link = n.intra_link;
    o.intra_node_gbyte_per_s = n.intra_gbyte_per_s;
  }
  return offerings;
}

}  // namespace internal

}  // namespace meridian::catalog
