// The small closed vocabularies of meridian's domain, with their spellings in
// specs, catalogs and JSON. Parse* functions return nullopt for an unknown word;
// callers turn that into an error naming the field.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace meridian {

// Numeric formats a GPU computes in. Order is not meaningful.
enum class Precision { kFp64, kFp32, kTf32, kFp16, kBf16, kFp8, kInt8 };
std::string_view ToString(Precision p);
std::optional<Precision> ParsePrecision(std::string_view s);
const std::vector<Precision>& AllPrecisions();
// Bytes per value in memory (fp64 8, fp32/tf32 4, fp16/bf16 2, fp8/int8 1).
double BytesPerValue(Precision p);

// The workload kinds of the seed document, point (f).
enum class WorkloadKind {
  kLlmTraining,
  kTraining,
  kFineTuning,
  kBatchInference,
  kRealtimeInference,
  kDataScience,
  kRendering,
  kScientific,
};
std::string_view ToString(WorkloadKind k);
std::optional<WorkloadKind> ParseWorkloadKind(std::string_view s);
const std::vector<WorkloadKind>& AllWorkloadKinds();
bool IsTraining(WorkloadKind k);  // llm-training, training, fine-tuning

enum class Priority { kCritical, kHigh, kNormal, kLow };
std::string_view ToString(Priority p);
std::optional<Priority> ParsePriority(std::string_view s);

// How a cloud capacity is paid for (seed point d).
enum class PricingModel { kOnDemand, kSpot, kFlexStart, kReserved };
std::string_view ToString(PricingModel m);
std::optional<PricingModel> ParsePricingModel(std::string_view s);

// Joins words as "a, b or c" for error messages listing the allowed values.
std::string JoinAlternatives(const std::vector<std::string>& words);

}  // namespace meridian
