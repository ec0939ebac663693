// Fuzz target: the scheduling profile parser (sched/profile.cc,
// docs/scheduler.md) and, for a profile that parses, the construction of
// every plugin it names with its arguments (CheckProfile).
#include "fuzz/scratch_file.h"
#include "sched/profile.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto profile = meridian::sched::ParseProfile(meridian::fuzz::Bytes(data, size), "profile.yaml");
  if (!profile.ok()) return 0;
  meridian::Status s = meridian::sched::CheckProfile(*profile);
  (void)s;
  return 0;
}
