// Fuzz target: serve.yaml, the daemon's config (cli/serve_config.cc,
// docs/control-plane.md "Configuration"), as `meridian serve --config` reads it.
#include "cli/serve_config.h"
#include "fuzz/scratch_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  meridian::cli::ServeConfig config;
  meridian::Status s = meridian::cli::ParseServeConfig(
      std::string(meridian::fuzz::Bytes(data, size)), "serve.yaml", &config);
  (void)s;
  return 0;
}
