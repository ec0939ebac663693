// SpotTrace: one measured spot series from "Can't Be Late" (Wu et al.,
// NSDI'24; ../shared/data/spot), as the replay market reads it: where it was
// measured (AWS zone, instance type, GPU model), the tick length, and the
// state per tick as runs of equal state (up = spot capacity could be had /
// the instance was alive). sim/market/spot_traces.csv holds every GPU trace,
// run-length encoded by sim/market/build_spot_traces.py, and is compiled into
// the binary.
//
// Times passed to a trace are seconds from its first tick; a trace repeats
// after its last tick (period_s), so it covers a simulation of any length.
// Immutable once parsed; safe to share between threads.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace meridian::sim {

struct SpotTrace {
  std::string name;           // "availability/1-node/aws-02-15-2023/us-east-1a_v100_1"
  std::string kind;           // "availability" | "preemption"
  std::string region;         // catalog region id of the zone: "aws:us-east-1"
  std::string zone;           // "us-east-1a"
  std::string instance_type;  // "p3.2xlarge"
  std::string gpu_model;      // "V100-16GB", "K80"
  int gpus = 1;               // GPUs per instance
  int64_t gap_s = 0;          // seconds per tick
  int64_t ticks = 0;
  // Runs of equal state: run i covers ticks [run_end[i-1], run_end[i]) (run 0
  // from tick 0) and is up when up[i] is 1.
  std::vector<int64_t> run_end;
  std::vector<uint8_t> up;

  int64_t period_s() const { return gap_s * ticks; }
  // Whether spot is up at `s` seconds from the first tick (s >= 0; cyclic).
  bool UpAt(int64_t s) const;
  // The first second >= s at which spot is down (s itself when down now);
  // nullopt when the trace is never down. Not wrapped: may exceed period_s.
  std::optional<int64_t> NextDown(int64_t s) const;
  // Share of ticks up, and up -> down transitions per period.
  double UpFraction() const;
  int Reclaims() const;
};

// Parses the CSV of sim/market/spot_traces.csv; errors name file and line.
Result<std::vector<SpotTrace>> ParseSpotTraces(std::string_view csv, const std::string& file);

// The traces compiled into the binary, parsed once.
const std::vector<SpotTrace>& EmbeddedSpotTraces();

}  // namespace meridian::sim
