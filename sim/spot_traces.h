// SpotTrace: one measured spot series from "Can't Be Late" (Wu et al.,
// NSDI'24; ../shared/data/spot), as the replay market reads it: where it was
// measured (AWS zone, instance type, GPU model), the tick length, and the
// count per tick as runs of equal counts: the instances that could be had
// (availability traces: 0/1 in the 1-node traces, 0..16 in the 16-node ones)
// or that were alive (preemption traces). sim/market/spot_traces.csv holds
// every GPU trace, run-length encoded by sim/market/build_spot_traces.py, and
// is compiled into the binary; ParseSpotTraceJson reads one trace in the
// SkyPilot spot-traces JSON the data comes in (`simulate --spot-traces`).
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
  // Runs of equal counts: run i covers ticks [run_end[i-1], run_end[i]) (run
  // 0 from tick 0) with count[i] instances.
  std::vector<int64_t> run_end;
  std::vector<int32_t> count;
  // Running sums over the runs, for i in 0..runs: the ticks up in runs
  // [0, i) and the reclaims (up -> down steps, cyclic) at the first ticks of
  // runs [0, i). The parsers fill them (IndexRuns) once the runs are read,
  // so a window's rate (ReclaimsPerHourUpBefore) is a few binary searches.
  std::vector<int64_t> up_ticks_before;
  std::vector<int32_t> reclaims_before;
  void IndexRuns();

  int64_t period_s() const { return gap_s * ticks; }
  // The instances at `s` seconds from the first tick (s >= 0; cyclic).
  int CountAt(int64_t s) const;
  // Whether any instance is there at `s` (CountAt(s) > 0).
  bool UpAt(int64_t s) const { return CountAt(s) > 0; }
  // The first second >= s at which the count is below `need` (s itself when
  // it is now); nullopt when it never is. Not wrapped: may exceed period_s.
  std::optional<int64_t> NextBelow(int64_t s, int need) const;
  // The first second >= s at which spot is down: NextBelow(s, 1).
  std::optional<int64_t> NextDown(int64_t s) const { return NextBelow(s, 1); }
  // Share of ticks up (count > 0), up -> down transitions per period, and the
  // largest count.
  double UpFraction() const;
  int Reclaims() const;
  int MaxCount() const;
  // Reclaims() per hour up: Reclaims() / (UpFraction() x period_s() / 3600);
  // -1 when the trace is never up.
  double ReclaimsPerHourUp() const;
  // The same rate over the `window_s` seconds before `s` only (whole ticks,
  // at most one period), the trace read as repeating before its first tick
  // as after its last: what had been seen by second `s`. -1 when never up in
  // that window.
  double ReclaimsPerHourUpBefore(int64_t s, int64_t window_s) const;
};

// Parses the CSV of sim/market/spot_traces.csv; errors name file and line.
Result<std::vector<SpotTrace>> ParseSpotTraces(std::string_view csv, const std::string& file);

// One trace in SkyPilot's spot-traces JSON ({"metadata": {"gap_seconds": N},
// "data": [count per tick, ...]}); `file` names it in errors, which give the
// field, the value and the reason. Only gap_s, ticks and the runs are filled.
Result<SpotTrace> ParseSpotTraceJson(std::string_view json, const std::string& file);

// The traces compiled into the binary, parsed once.
const std::vector<SpotTrace>& EmbeddedSpotTraces();

}  // namespace meridian::sim
