// Fuzz target: the Slurm sacct history reader (sim/readers/sacct.cc), with its
// local times read in UTC so a run does not depend on the machine's zone.
#include <cstdlib>

#include "fuzz/trace_input.h"

// The process's zone is UTC from the start and each input is read in the
// process's zone (time_zone ""), as `simulate` reads sacct without --tz:
// naming the zone per input would set TZ and reload the zone files twice for
// each. The catalog loads here too.
extern "C" int LLVMFuzzerInitialize(int*, char***) {
  if (setenv("TZ", "UTC", 1) != 0) std::abort();
  (void)meridian::fuzz::EmbeddedCatalog();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const meridian::sim::TraceOptions options;
  meridian::fuzz::ReadTraceBytes(meridian::fuzz::Bytes(data, size),
                                 meridian::sim::TraceFormat::kSacct, options, "sacct.txt");
  return 0;
}
