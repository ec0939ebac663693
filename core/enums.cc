#include "core/enums.h"

#include <array>
#include <utility>

namespace meridian {

namespace {

template <typename E, size_t N>
std::optional<E> Lookup(const std::array<std::pair<E, std::string_view>, N>& table,
                        std::string_view s) {
  for (const auto& [e, name] : table) {
    if (name == s) return e;
  }
  return std::nullopt;
}

template <typename E, size_t N>
std::string_view Name(const std::array<std::pair<E, std::string_view>, N>& table, E e) {
  for (const auto& [v, name] : table) {
    if (v == e) return name;
  }
  return "?";
}

constexpr std::array<std::pair<Precision, std::string_view>, 7> kPrecisions{{
    {Precision::kFp64, "fp64"},
    {Precision::kFp32, "fp32"},
    {Precision::kTf32, "tf32"},
    {Precision::kFp16, "fp16"},
    {Precision::kBf16, "bf16"},
    {Precision::kFp8, "fp8"},
    {Precision::kInt8, "int8"},
}};

constexpr std::array<std::pair<WorkloadKind, std::string_view>, 8> kKinds{{
    {WorkloadKind::kLlmTraining, "llm-training"},
    {WorkloadKind::kTraining, "training"},
    {WorkloadKind::kFineTuning, "fine-tuning"},
    {WorkloadKind::kBatchInference, "batch-inference"},
    {WorkloadKind::kRealtimeInference, "realtime-inference"},
    {WorkloadKind::kDataScience, "data-science"},
    {WorkloadKind::kRendering, "rendering"},
    {WorkloadKind::kScientific, "scientific"},
}};

constexpr std::array<std::pair<Priority, std::string_view>, 4> kPriorities{{
    {Priority::kCritical, "critical"},
    {Priority::kHigh, "high"},
    {Priority::kNormal, "normal"},
    {Priority::kLow, "low"},
}};

constexpr std::array<std::pair<PricingModel, std::string_view>, 4> kPricing{{
    {PricingModel::kOnDemand, "on-demand"},
    {PricingModel::kSpot, "spot"},
    {PricingModel::kFlexStart, "flex-start"},
    {PricingModel::kReserved, "reserved"},
}};

}  // namespace

std::string_view ToString(Precision p) { return Name(kPrecisions, p); }
std::optional<Precision> ParsePrecision(std::string_view s) { return Lookup(kPrecisions, s); }
const std::vector<Precision>& AllPrecisions() {
  static const std::vector<Precision> all = [] {
    std::vector<Precision> v;
    for (const auto& [p, _] : kPrecisions) v.push_back(p);
    return v;
  }();
  return all;
}
double BytesPerValue(Precision p) {
  switch (p) {
    case Precision::kFp64: return 8;
    case Precision::kFp32:
    case Precision::kTf32: return 4;
    case Precision::kFp16:
    case Precision::kBf16: return 2;
    case Precision::kFp8:
    case Precision::kInt8: return 1;
  }
  return 4;
}

std::string_view ToString(WorkloadKind k) { return Name(kKinds, k); }
std::optional<WorkloadKind> ParseWorkloadKind(std::string_view s) { return Lookup(kKinds, s); }
const std::vector<WorkloadKind>& AllWorkloadKinds() {
  static const std::vector<WorkloadKind> all = [] {
    std::vector<WorkloadKind> v;
    for (const auto& [k, _] : kKinds) v.push_back(k);
    return v;
  }();
  return all;
}
bool IsTraining(WorkloadKind k) {
  return k == WorkloadKind::kLlmTraining || k == WorkloadKind::kTraining ||
         k == WorkloadKind::kFineTuning;
}

std::string_view ToString(Priority p) { return Name(kPriorities, p); }
std::optional<Priority> ParsePriority(std::string_view s) { return Lookup(kPriorities, s); }

std::string_view ToString(PricingModel m) { return Name(kPricing, m); }
std::optional<PricingModel> ParsePricingModel(std::string_view s) { return Lookup(kPricing, s); }

std::string JoinAlternatives(const std::vector<std::string>& words) {
  std::string out;
  for (size_t i = 0; i < words.size(); ++i) {
    if (i > 0) out += (i + 1 == words.size()) ? " or " : ", ";
    out += words[i];
  }
  return out;
}

}  // namespace meridian
