// Fuzz target: the job-spec parser (spec/parse.cc, docs/job-spec.md) and, for
// a spec that parses, its checks against the embedded catalog, as `plan` runs
// them on a file.
#include "fuzz/scratch_file.h"
#include "fuzz/trace_input.h"
#include "spec/spec.h"

// The catalog loads before the first input (fuzz/trace_input.h).
extern "C" int LLVMFuzzerInitialize(int*, char***) {
  (void)meridian::fuzz::EmbeddedCatalog();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto specs = meridian::spec::ParseJobSpecs(meridian::fuzz::Bytes(data, size), "fuzz.yaml");
  if (!specs.ok()) return 0;
  for (const meridian::JobSpec& job : *specs) {
    // Submitted at 2026-01-01T00:00:00Z.
    meridian::Status s = meridian::spec::ValidateAgainstCatalog(
        job, meridian::fuzz::EmbeddedCatalog(), meridian::UnixSeconds{1767225600});
    (void)s;
  }
  return 0;
}
