// Shared body of the trace reader targets: the input is one trace file of
// `format`, read with the embedded catalog and the options `simulate` uses.
#pragma once

#include <cstdint>
#include <cstdlib>

#include "catalog/catalog.h"
#include "fuzz/scratch_file.h"
#include "sim/trace.h"

namespace meridian::fuzz {

// Loaded once; a target that uses it loads it in LLVMFuzzerInitialize, so the
// load (seconds in an -O0 sanitizer build) is not timed as the first input's.
inline const catalog::Catalog& EmbeddedCatalog() {
  static const auto catalog = catalog::Catalog::LoadEmbedded();
  if (!catalog.ok()) std::abort();
  return **catalog;
}

// Reads `bytes` (written to a scratch file named with `suffix`) as `format`.
// A bad trace is an error Status; only a crash or a sanitizer report is a bug.
inline void ReadTraceBytes(std::string_view bytes, sim::TraceFormat format,
                           const sim::TraceOptions& options, const std::string& suffix) {
  static ScratchFile file(suffix);
  auto trace = sim::ReadTrace(file.Write(bytes), format, EmbeddedCatalog(), options);
  (void)trace;
}

}  // namespace meridian::fuzz
