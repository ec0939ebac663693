// The body of GET /v1/jobs/{id}/utilization (docs/api.md): the job's samples
// in the sampler's window, its class with the evidence, the recommendation,
// and the compact series kept in the store (also after the job ended).
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "control/store.h"
#include "control/telemetry_sampler.h"

namespace meridian::control {

nlohmann::json UtilizationToJson(const JobRow& job, const std::optional<JobTelemetry>& live,
                                 const std::vector<UtilizationRow>& series,
                                 const telemetry::TelemetryConfig& config,
                                 const std::string& gpu_status);

// The parts, shared with `meridian top` through the API's JSON.
nlohmann::json RecommendationToJson(const telemetry::Recommendation& r);
nlohmann::json SampleToJson(const telemetry::JobSample& s);

}  // namespace meridian::control
