#include "control/store.h"

#include <cstdio>

namespace meridian::control {

std::string JobIdFor(int64_t seq) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "j-%08lld", static_cast<long long>(seq));
  return buf;
}

std::optional<int64_t> SeqFromJobId(const std::string& id) {
  if (id.size() < 3 || id.compare(0, 2, "j-") != 0 || id.size() > 20) return std::nullopt;
  int64_t v = 0;
  for (size_t i = 2; i < id.size(); ++i) {
    if (id[i] < '0' || id[i] > '9') return std::nullopt;
    v = v * 10 + (id[i] - '0');
  }
  return v;
}

std::string StoredGpuList(const std::vector<int>& gpus) {
  std::string s;
  for (size_t i = 0; i < gpus.size(); ++i) s += (i ? "," : "") + std::to_string(gpus[i]);
  return s;
}

std::vector<int> ParseStoredGpuList(const std::string& text) {
  std::vector<int> out;
  size_t i = 0;
  while (i < text.size()) {
    size_t j = text.find(',', i);
    if (j == std::string::npos) j = text.size();
    out.push_back(std::stoi(text.substr(i, j - i)));
    i = j + 1;
  }
  return out;
}

JobRow WithUpdate(JobRow j, const JobUpdate& u) {
  if (u.state) j.state = *u.state;
  if (u.state) j.reason = u.message;
  // A finished job always has an end, which retention goes by.
  if (u.state && IsTerminal(*u.state) && !j.ended_at && !u.ended_at) j.ended_at = u.at;
  if (u.reason) j.reason = *u.reason;
  if (u.clear_ended) {
    j.started_at.reset();
    j.ended_at.reset();
    j.exit_code.reset();
  }
  if (u.started_at) j.started_at = u.started_at;
  if (u.ended_at) j.ended_at = u.ended_at;
  if (u.exit_code) j.exit_code = u.exit_code;
  if (u.attempts) j.attempts = *u.attempts;
  if (u.placement) j.placement = *u.placement;
  if (u.handle) j.handle = *u.handle;
  if (u.allocation_json) j.allocation_json = *u.allocation_json;
  if (u.cancel_requested) j.cancel_requested = *u.cancel_requested;
  j.cost_micro_usd += u.add_cost_micro_usd;
  j.co2_mg += u.add_co2_mg;
  return j;
}

}  // namespace meridian::control
