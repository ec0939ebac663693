// Fuzz target: the Slurm sacct history reader (sim/readers/sacct.cc), with its
// local times read in UTC so a run does not depend on the machine's zone.
#include "fuzz/trace_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  meridian::sim::TraceOptions options;
  options.time_zone = "UTC";
  meridian::fuzz::ReadTraceBytes(meridian::fuzz::Bytes(data, size),
                                 meridian::sim::TraceFormat::kSacct, options, "sacct.txt");
  return 0;
}
