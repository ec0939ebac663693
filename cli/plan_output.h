// Renders an estimate::Plan for people (a table with the arithmetic) and for
// programs (one JSON object; the fields are documented in docs/plan-output.md).
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>

#include "estimate/plan.h"

namespace meridian::cli {

nlohmann::json PlanToJson(const estimate::Plan& plan);

struct PlanTableOptions {
  size_t top = 10;  // options shown; 0 = all
};
void PrintPlanTable(const estimate::Plan& plan, const PlanTableOptions& options,
                    std::ostream& out);

}  // namespace meridian::cli
