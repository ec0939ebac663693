// Renders a Decision's explanation as plain text, one fact per line:
//
//   job 7: place on onprem-a-a100-80gb-0 GPUs 0-3 (fleet), start now
//     start: capacity free now
//     pricing: owned capacity of cluster onprem-a at 1.10 $/GPU-h
//     scores (chosen, total 200):   cheapest_price 100 x1 = 100 ($4.40 = ...)
//     runner-up gcp:us-central1 a2-ultragpu-4g x1 on-demand (total 35): ...
//     filters: gpu_fit rejected 12 (e.g. "onprem-b-v100-32gb-0: bf16 ...")
//     candidates: 40 examined, 28 feasible
#pragma once

#include <string>

#include "sched/decision.h"

namespace meridian::sched {

std::string FormatDecision(const Decision& d);

}  // namespace meridian::sched
