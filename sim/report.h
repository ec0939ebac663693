// The files `meridian simulate --out DIR` writes (docs/simulate.md):
//   summary.json  one object per policy, in command-line order
//   jobs.csv      one row per job per policy
//   report.html   one self-contained page of plots (report_html.cc)
// Every figure comes from the PolicyRuns and their Summaries; the same runs
// give the same bytes.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "core/status.h"
#include "sim/engine.h"
#include "sim/metrics.h"
#include "sim/trace.h"

namespace meridian::sim {

// What one `meridian simulate` produced, for the report writers.
struct Simulation {
  const Trace* trace = nullptr;
  const World* world = nullptr;
  std::vector<PolicyRun> runs;
  std::vector<Summary> summaries;  // one per run, same order
  uint64_t seed = 1;
  std::string fleet_source;        // "--fleet FILE", "the trace's node list", "elastic only"
};

// Sets each summary's `common` to its run's figures over the jobs done under
// every run of `sim` (CommonToAll), so the policies compare the same jobs.
void SetCommonFigures(Simulation& sim);

// The policies that rejected more than `share` (0.01: 1%) of their jobs,
// each with its rejection reasons in full, most frequent first, `top` at
// most per policy; "" when none did. `simulate` prints it to stderr.
std::string RejectionWarnings(const Simulation& sim, double share = 0.01, size_t top = 5);

// What the first policy's extra spend bought against one that spent less in
// all (Summary::cost_micros): the deadline jobs (trace indices) it finished by
// their deadline and the cheaper one did not, and the other way round.
struct ExtraSpend {
  size_t other = 0;                 // index into Simulation::runs
  int64_t extra_cost_micros = 0;    // first's cost - other's cost, > 0
  std::vector<size_t> met_only_first;
  std::vector<size_t> met_only_other;
};
// One entry per policy after the first that cost less than the first, in
// command-line order; none with a single policy.
std::vector<ExtraSpend> WhatExtraSpendBought(const Simulation& sim);

// summary.json: a JSON list, one object per policy (fields in docs/simulate.md).
std::string SummaryJson(const std::vector<Summary>& summaries);

// jobs.csv: header, then for each policy its jobs in trace order.
void WriteJobsCsv(const Simulation& sim, std::ostream& out);

// report.html: self-contained (inline SVG and CSS, no script, no network).
std::string ReportHtml(const Simulation& sim);

// Creates `dir` (and parents) if needed and writes the three files into it,
// replacing earlier ones. Errors name the path.
Status WriteSimulation(const Simulation& sim, const std::string& dir);

}  // namespace meridian::sim
