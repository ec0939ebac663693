// `meridian catalog gpus|regions|offers`: the embedded catalog as tables or JSON.
#pragma once

#include <ostream>
#include <string>

#include "catalog/catalog.h"
#include "core/status.h"

namespace meridian::cli {

// Empty fields match everything. `region` is a region id or a geography.
struct CatalogFilter {
  std::string gpu;
  std::string region;
  std::string provider;
};

// Unknown GPU models, regions and providers are errors naming the flag.
Status CheckCatalogFilter(const catalog::Catalog& cat, const CatalogFilter& f);

void PrintGpus(const catalog::Catalog& cat, const CatalogFilter& f, bool json, std::ostream& out);
void PrintRegions(const catalog::Catalog& cat, const CatalogFilter& f, bool json,
                  std::ostream& out);
void PrintOffers(const catalog::Catalog& cat, const CatalogFilter& f, bool json,
                 std::ostream& out);

}  // namespace meridian::cli
