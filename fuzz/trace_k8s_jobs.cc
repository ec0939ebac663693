// Fuzz target: the Kubernetes Jobs history reader (sim/readers/k8s_jobs.cc):
// `kubectl get jobs -o json` output.
#include "fuzz/trace_input.h"

// The catalog loads before the first input (fuzz/trace_input.h).
extern "C" int LLVMFuzzerInitialize(int*, char***) {
  (void)meridian::fuzz::EmbeddedCatalog();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  meridian::fuzz::ReadTraceBytes(meridian::fuzz::Bytes(data, size),
                                 meridian::sim::TraceFormat::kK8sJobs, {}, "k8s_jobs.json");
  return 0;
}
