// Fuzz target: the Alibaba openb reader (sim/readers/openb.cc), which reads
// two files: the node list and the pod list. An input holding a line "%%"
// is the node list, that line, then the pod list; any other input is a pod
// list read against the node list of sim/readers/testdata.
#include "fuzz/trace_input.h"

namespace {

constexpr std::string_view kNodeList =
    "sn,cpu_milli,memory_mib,gpu,model\n"
    "openb-node-0123,64000,262144,2,P100\n"
    "openb-node-0124,64000,262144,2,P100\n"
    "openb-node-0234,96000,393216,8,G2\n"
    "openb-node-0235,96000,393216,8,G2\n"
    "openb-node-0000,32000,262144,0,\n";

}  // namespace

// The catalog loads before the first input (fuzz/trace_input.h).
extern "C" int LLVMFuzzerInitialize(int*, char***) {
  (void)meridian::fuzz::EmbeddedCatalog();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using meridian::fuzz::ScratchFile;
  std::string_view in = meridian::fuzz::Bytes(data, size);
  std::string_view nodes = kNodeList;
  std::string_view pods = in;
  if (size_t at = in.find("\n%%\n"); at != std::string_view::npos) {
    nodes = in.substr(0, at + 1);
    pods = in.substr(at + 4);
  }
  static ScratchFile nodes_file("openb_node_list_all_node.csv");
  meridian::sim::TraceOptions options;
  options.nodes_path = nodes_file.Write(nodes);
  meridian::fuzz::ReadTraceBytes(pods, meridian::sim::TraceFormat::kOpenb, options,
                                 "openb_pods.csv");
  return 0;
}
