// The words a capped log says where it was cut (node.max_log_bytes,
// docs/backends.md "Logs"): one text for every backend that caps logs, the
// local backend's relay (backends/local/log_relay.h), which Slurm jobs run
// too, and the Kubernetes backend's copy of each attempt's pod log
// (backends/kubernetes/pod_logs.h). Plain character arrays, so the relay can
// write them after fork() without the C++ library.
#pragma once

namespace meridian::backends {

// "\n[meridian: the job's logs reached their cap of <cap> bytes; what the
//  job writes to this stream from here on is dropped]\n"
inline constexpr char kLogCapReachedHead[] = "\n[meridian: the job's logs reached their cap of ";
inline constexpr char kLogCapReachedTail[] =
    " bytes; what the job writes to this stream from here on is dropped]\n";

}  // namespace meridian::backends
