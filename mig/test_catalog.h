// The embedded catalog for mig/ tests.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string_view>

#include "catalog/catalog.h"

namespace meridian::mig {

inline const catalog::Catalog& EmbeddedCatalog() {
  static std::shared_ptr<const catalog::Catalog> cat = [] {
    auto r = catalog::Catalog::LoadEmbedded();
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? *r : nullptr;
  }();
  return *cat;
}

inline const catalog::GpuModel& Gpu(std::string_view name) {
  return *EmbeddedCatalog().FindGpu(name);
}

// Index of profile `name` of `gpu` (-1 when absent).
inline int ProfileIndex(const catalog::GpuModel& gpu, std::string_view name) {
  for (size_t i = 0; i < gpu.mig_profiles.size(); ++i) {
    if (gpu.mig_profiles[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

}  // namespace meridian::mig
