// Fuzz target: the jsonl trace reader (sim/readers/jsonl.cc, docs/trace-format.md).
#include "fuzz/trace_input.h"

// The catalog loads before the first input (fuzz/trace_input.h).
extern "C" int LLVMFuzzerInitialize(int*, char***) {
  (void)meridian::fuzz::EmbeddedCatalog();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  meridian::fuzz::ReadTraceBytes(meridian::fuzz::Bytes(data, size),
                                 meridian::sim::TraceFormat::kJsonl, {}, "trace.jsonl");
  return 0;
}
