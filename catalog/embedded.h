// The data/catalog files compiled into the binary (catalog/CMakeLists.txt
// generates the definition: one .incbin per file). The views point at
// read-only data that lives as long as the program.
#pragma once

#include "catalog/catalog.h"

namespace meridian::catalog {

// Every embedded file by its name relative to data/catalog ("gpus.csv",
// "carbon/GB.csv").
const CatalogFiles& EmbeddedCatalogFiles();

}  // namespace meridian::catalog
