// A small catalog for spec tests: the GPU model names and regions the
// examples use, without prices. Test-only.
#pragma once

#include <memory>
#include <string>

#include "catalog/catalog.h"

namespace meridian::spec::testing {

inline std::shared_ptr<const catalog::Catalog> SpecTestCatalog() {
  catalog::CatalogParts parts;
  for (const char* name : {"A100-40GB", "A100-80GB", "H100-80GB", "H200-141GB", "B200", "L4",
                           "L40S", "A10G", "T4", "V100-16GB", "V100-32GB", "MI300X"}) {
    catalog::GpuModel g;
    g.name = name;
    std::string n = name;
    if (n.rfind("A100", 0) == 0 || n.rfind("H100", 0) == 0 || n.rfind("H200", 0) == 0 ||
        n == "B200") {
      catalog::MigProfile p;
      p.name = "1g.10gb";
      p.compute_slices = 1;
      p.memory_slices = 1;
      p.memory_gib = 10;
      p.max_instances = 7;
      p.sm_count = 14;
      g.mig_profiles.push_back(p);
    }
    parts.gpus.push_back(g);
  }
  struct R {
    const char* id;
    const char* geo;
  };
  for (R r : {R{"gcp:us-central1", "us"}, R{"gcp:europe-west4", "eu"}, R{"gcp:us-east4", "us"},
              R{"aws:us-east-1", "us"}, R{"aws:eu-central-1", "eu"}, R{"aws:us-west-2", "us"},
              R{"azure:eastus", "us"}, R{"azure:westeurope", "eu"}, R{"lambda:us-east-1", "us"},
              R{"gcp:asia-northeast1", "asia"}}) {
    catalog::Region region;
    region.id = r.id;
    std::string id = r.id;
    region.provider = id.substr(0, id.find(':'));
    region.name = id.substr(id.find(':') + 1);
    region.geography = r.geo;
    parts.regions.push_back(region);
  }
  auto cat = catalog::Catalog::FromParts(std::move(parts));
  return cat.ok() ? *cat : nullptr;
}

}  // namespace meridian::spec::testing
