// Fuzz target: the API's decoding of a node registration (POST /v1/nodes,
// control/node_request.cc) against the embedded catalog, and the field its
// refusal names.
#include "control/node_request.h"
#include "control/submission.h"
#include "fuzz/scratch_file.h"
#include "fuzz/trace_input.h"

// The catalog loads before the first input (fuzz/trace_input.h).
extern "C" int LLVMFuzzerInitialize(int*, char***) {
  (void)meridian::fuzz::EmbeddedCatalog();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto node = meridian::control::DecodeNodeRegistration(meridian::fuzz::Bytes(data, size),
                                                        meridian::fuzz::EmbeddedCatalog());
  if (!node.ok()) (void)meridian::control::FieldOfMessage(node.status().message());
  return 0;
}
