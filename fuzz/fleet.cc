// Fuzz target: the fleet file parser (spec/fleet_parse.cc, docs/fleet.md) and,
// for a fleet that parses, its checks against the embedded catalog.
#include "fuzz/scratch_file.h"
#include "fuzz/trace_input.h"
#include "spec/fleet.h"

// The catalog loads before the first input (fuzz/trace_input.h).
extern "C" int LLVMFuzzerInitialize(int*, char***) {
  (void)meridian::fuzz::EmbeddedCatalog();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto fleet = meridian::spec::ParseFleet(meridian::fuzz::Bytes(data, size), "fleet.yaml");
  if (!fleet.ok()) return 0;
  meridian::Status s =
      meridian::spec::ValidateFleetAgainstCatalog(*fleet, meridian::fuzz::EmbeddedCatalog());
  (void)s;
  return 0;
}
