// Catalog::LoadFromFiles / LoadFromDirectory / LoadEmbedded: files to
// CatalogParts (catalog/parse.h), then Catalog::FromParts.
#include <filesystem>
#include <fstream>
#include <sstream>

#include "catalog/catalog.h"
#include "catalog/csv.h"
#include "catalog/embedded.h"
#include "catalog/parse.h"

namespace meridian::catalog {

namespace {

constexpr std::string_view kCarbonPrefix = "carbon/";
constexpr std::string_view kCsvSuffix = ".csv";
const std::string kMigPlacements = "mig_placements.csv";
const std::string kGpuLinks = "gpu_links.csv";
const std::string kInstanceNetworks = "instance_networks.csv";

Result<CsvTable> Table(const CatalogFiles& files, const std::string& name) {
  auto it = files.find(name);
  if (it == files.end()) return Status::Invalid("catalog: missing file " + name);
  return CsvTable::Parse(name, it->second);
}

bool IsCarbonFile(const std::string& name) {
  return name.size() > kCarbonPrefix.size() + kCsvSuffix.size() &&
         name.compare(0, kCarbonPrefix.size(), kCarbonPrefix) == 0 &&
         name.compare(name.size() - kCsvSuffix.size(), kCsvSuffix.size(), kCsvSuffix) == 0;
}

Result<std::vector<CarbonSeries>> LoadCarbon(const CatalogFiles& files) {
  std::vector<CarbonSeries> out;
  for (const auto& [name, text] : files) {
    if (!IsCarbonFile(name)) continue;
    std::string zone = name.substr(kCarbonPrefix.size(),
                                   name.size() - kCarbonPrefix.size() - kCsvSuffix.size());
    Result<CsvTable> t = CsvTable::Parse(name, text);
    if (!t.ok()) return t.status();
    Result<CarbonSeries> s = internal::ParseCarbon(zone, *t);
    if (!s.ok()) return s.status();
    out.push_back(std::move(s).value());
  }
  return out;
}

// Builds the parts from the files; the order matters: offerings and egress
// refer to GPU models and regions.
Result<CatalogParts> LoadParts(const CatalogFiles& files) {
  CatalogParts parts;
  Result<CsvTable> gpus = Table(files, "gpus.csv");
  if (!gpus.ok()) return gpus.status();
  Result<CsvTable> mig = Table(files, "mig_profiles.csv");
  if (!mig.ok()) return mig.status();
  Result<std::vector<GpuModel>> g = internal::ParseGpus(*gpus, *mig);
  if (!g.ok()) return g.status();
  parts.gpus = std::move(g).value();
  // Optional: a catalog without it has no MIG placement data.
  if (files.count(kMigPlacements) > 0) {
    Result<CsvTable> placements = Table(files, kMigPlacements);
    if (!placements.ok()) return placements.status();
    g = internal::ParseMigPlacements(*placements, std::move(parts.gpus));
    if (!g.ok()) return g.status();
    parts.gpus = std::move(g).value();
  }
  // Optional, as placements: a catalog without them has no interconnect data.
  if (files.count(kGpuLinks) > 0) {
    Result<CsvTable> links = Table(files, kGpuLinks);
    if (!links.ok()) return links.status();
    g = internal::ParseGpuLinks(*links, std::move(parts.gpus));
    if (!g.ok()) return g.status();
    parts.gpus = std::move(g).value();
  }

  Result<CsvTable> regions = Table(files, "regions.csv");
  if (!regions.ok()) return regions.status();
  Result<std::vector<Region>> r = internal::ParseRegions(*regions);
  if (!r.ok()) return r.status();
  parts.regions = std::move(r).value();

  Result<CsvTable> offerings = Table(files, "offerings.csv");
  if (!offerings.ok()) return offerings.status();
  Result<std::vector<Offering>> o = internal::ParseOfferings(*offerings, parts.gpus, parts.regions);
  if (!o.ok()) return o.status();
  parts.offerings = std::move(o).value();
  if (files.count(kInstanceNetworks) > 0) {
    Result<CsvTable> networks = Table(files, kInstanceNetworks);
    if (!networks.ok()) return networks.status();
    o = internal::ParseInstanceNetworks(*networks, std::move(parts.offerings));
    if (!o.ok()) return o.status();
    parts.offerings = std::move(o).value();
  }

  Result<CsvTable> egress = Table(files, "egress.csv");
  if (!egress.ok()) return egress.status();
  auto e = internal::ParseEgress(*egress, parts.regions);
  if (!e.ok()) return e.status();
  parts.egress = std::move(e).value();

  Result<CsvTable> internet = Table(files, "internet_egress.csv");
  if (!internet.ok()) return internet.status();
  auto ie = internal::ParseInternetEgress(*internet);
  if (!ie.ok()) return ie.status();
  parts.internet_egress = std::move(ie).value();

  Result<CsvTable> market = Table(files, "market.csv");
  if (!market.ok()) return market.status();
  Result<MarketParameters> m = internal::ParseMarket(*market);
  if (!m.ok()) return m.status();
  parts.market = std::move(m).value();

  Result<std::vector<CarbonSeries>> c = LoadCarbon(files);
  if (!c.ok()) return c.status();
  parts.carbon = std::move(c).value();
  return parts;
}

Result<std::string> ReadFile(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) return Status::Invalid("catalog: cannot read " + p.string());
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

Result<std::shared_ptr<const Catalog>> Catalog::LoadFromFiles(const CatalogFiles& files) {
  Result<CatalogParts> parts = LoadParts(files);
  if (!parts.ok()) return parts.status();
  return FromParts(std::move(parts).value());
}

Result<std::shared_ptr<const Catalog>> Catalog::LoadFromDirectory(const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return Status::Invalid("catalog: " + dir + " is not a directory");
  std::map<std::string, std::string> contents;
  for (const auto& entry : fs::recursive_directory_iterator(dir, ec)) {
    if (!entry.is_regular_file() || entry.path().extension() != kCsvSuffix) continue;
    Result<std::string> text = ReadFile(entry.path());
    if (!text.ok()) return text.status();
    contents[fs::relative(entry.path(), dir).generic_string()] = std::move(text).value();
  }
  if (ec) return Status::Invalid("catalog: cannot list " + dir + ": " + ec.message());
  CatalogFiles files;
  for (const auto& [name, text] : contents) files[name] = text;
  Result<std::shared_ptr<const Catalog>> cat = LoadFromFiles(files);
  if (!cat.ok()) return cat.status().WithContext(dir);
  return cat;
}

Result<std::shared_ptr<const Catalog>> Catalog::LoadEmbedded() {
  return LoadFromFiles(EmbeddedCatalogFiles());
}

}  // namespace meridian::catalog
