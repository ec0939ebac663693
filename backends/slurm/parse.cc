#include "backends/slurm/parse.h"

#include <signal.h>
#include <time.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <limits>
#include <set>

namespace meridian::backends::slurm {

namespace {

using control::RunPhase;

std::vector<std::string_view> Lines(std::string_view text) {
  std::vector<std::string_view> out;
  size_t from = 0;
  while (from < text.size()) {
    size_t nl = text.find('\n', from);
    std::string_view line = text.substr(from, nl == std::string_view::npos ? nl : nl - from);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (!line.empty()) out.push_back(line);
    if (nl == std::string_view::npos) break;
    from = nl + 1;
  }
  return out;
}

// Splits at '|' into at most `n` fields; the last takes the rest of the line.
std::vector<std::string> Fields(std::string_view line, size_t n) {
  std::vector<std::string> out;
  size_t from = 0;
  while (out.size() + 1 < n) {
    size_t bar = line.find('|', from);
    if (bar == std::string_view::npos) break;
    out.emplace_back(line.substr(from, bar - from));
    from = bar + 1;
  }
  out.emplace_back(line.substr(from));
  return out;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

std::optional<int64_t> Int(std::string_view s) {
  s = Trim(s);
  int64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return v;
}

// Epoch seconds, or "2026-12-03T05:38:14" in local time; "Unknown", "None" -> 0.
UnixSeconds LocalTime(std::string_view s) {
  if (auto epoch = Int(s)) return *epoch > 0 ? *epoch : 0;  // SLURM_TIME_FORMAT=%s
  tm t{};
  std::string text(s);
  const char* end = strptime(text.c_str(), "%Y-%m-%dT%H:%M:%S", &t);
  if (end == nullptr || *end != '\0') return 0;
  t.tm_isdst = -1;
  time_t v = mktime(&t);
  return v < 0 ? 0 : static_cast<UnixSeconds>(v);
}

// The keys of `scontrol show job` read here. Free-text fields (Command,
// WorkDir, Comment, StdOut, StdErr, Reason's detail) come after them.
const std::set<std::string_view> kJobKeys = {"JobId",    "JobName",   "JobState",
                                             "Reason",   "ExitCode",  "StartTime",
                                             "EndTime",  "NodeList",  "GRES"};

}  // namespace

std::vector<QueueRow> ParseQueue(std::string_view text) {
  std::vector<QueueRow> rows;
  for (std::string_view line : Lines(text)) {
    std::vector<std::string> f = Fields(line, 4);
    if (f.size() != 4 || !Int(f[0])) continue;
    rows.push_back({std::string(Trim(f[0])), std::string(Trim(f[1])), std::string(Trim(f[2])),
                    f[3]});
  }
  return rows;
}

Result<std::vector<int>> ParseIndexList(std::string_view text) {
  std::vector<int> out;
  auto bad = [&] {
    return Status::Invalid("GPU index list \"" + std::string(text) + "\" is not N, N-M, ...");
  };
  size_t from = 0;
  while (from <= text.size()) {
    size_t comma = text.find(',', from);
    std::string_view part = text.substr(from, comma == std::string_view::npos ? comma : comma - from);
    size_t dash = part.find('-');
    auto lo = Int(part.substr(0, dash));
    auto hi = dash == std::string_view::npos ? lo : Int(part.substr(dash + 1));
    if (!lo || !hi || *lo < 0 || *hi < *lo || *hi > 1023) return bad();
    for (int64_t i = *lo; i <= *hi; ++i) out.push_back(static_cast<int>(i));
    if (comma == std::string_view::npos) break;
    from = comma + 1;
  }
  return out;
}

Result<JobRecord> ParseJobRecord(std::string_view text) {
  std::map<std::string, std::string> kv;
  // Split at spaces; a token "Key=value" whose key is one of ours starts a
  // field, and the first occurrence of each key wins.
  size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
    size_t j = i;
    while (j < text.size() && !std::isspace(static_cast<unsigned char>(text[j]))) ++j;
    std::string_view tok = text.substr(i, j - i);
    i = j;
    size_t eq = tok.find('=');
    if (eq == std::string_view::npos) continue;
    std::string_view key = tok.substr(0, eq);
    if (!kJobKeys.count(key) || kv.count(std::string(key))) continue;
    kv[std::string(key)] = std::string(tok.substr(eq + 1));
  }
  if (!kv.count("JobId") || !kv.count("JobState")) {
    return Status::Invalid("scontrol show job: no JobId= and JobState= in \"" +
                           std::string(Trim(text.substr(0, 200))) + "\"");
  }
  JobRecord r;
  r.job_id = kv["JobId"];
  r.name = kv["JobName"];
  r.state = kv["JobState"];
  r.reason = kv["Reason"];
  r.nodes = kv["NodeList"] == "(null)" ? "" : kv["NodeList"];
  r.start = LocalTime(kv["StartTime"]);
  r.end = LocalTime(kv["EndTime"]);
  if (auto it = kv.find("ExitCode"); it != kv.end()) {
    size_t colon = it->second.find(':');
    auto code = Int(std::string_view(it->second).substr(0, colon));
    auto sig = colon == std::string::npos ? std::optional<int64_t>(0)
                                          : Int(std::string_view(it->second).substr(colon + 1));
    if (code && sig) {
      r.exit_code = static_cast<int>(*code);
      r.exit_signal = static_cast<int>(*sig);
    }
  }
  // GRES=gpu:a100-80gb:2(IDX:0-1) on the detail line of a running job.
  const std::string& gres = kv["GRES"];
  if (size_t idx = gres.find("(IDX:"); gres.starts_with("gpu") && idx != std::string::npos) {
    size_t close = gres.find(')', idx);
    auto list = ParseIndexList(std::string_view(gres).substr(idx + 5, close - idx - 5));
    if (list.ok()) r.gpu_indexes = *list;
  }
  return r;
}

std::vector<NodeRow> ParseNodes(std::string_view text) {
  std::vector<NodeRow> rows;
  for (std::string_view line : Lines(text)) {
    std::vector<std::string> f = Fields(line, 7);
    if (f.size() != 7) continue;
    auto cpus = Int(f[3]);
    auto mem = Int(f[4]);
    NodeRow n;
    n.name = std::string(Trim(f[0]));
    n.state = std::string(Trim(f[1]));
    n.gres = std::string(Trim(f[2]));
    n.cpus = cpus ? static_cast<int>(*cpus) : 0;
    n.mem_mib = mem.value_or(0);
    n.partition = std::string(Trim(f[5]));
    if (n.partition.ends_with('*')) n.partition.pop_back();
    n.reason = std::string(Trim(f[6]));
    if (n.name.empty()) continue;
    rows.push_back(std::move(n));
  }
  return rows;
}

Result<std::vector<GpuGres>> ParseGpuGresTypes(std::string_view gres) {
  std::vector<GpuGres> out;
  size_t from = 0;
  // Split at commas outside parentheses: "gpu:a100:4(S:0-1),nic:1".
  while (from < gres.size()) {
    size_t end = from;
    int depth = 0;
    while (end < gres.size() && (gres[end] != ',' || depth > 0)) {
      depth += gres[end] == '(' ? 1 : gres[end] == ')' ? -1 : 0;
      ++end;
    }
    std::string_view item = gres.substr(from, end - from);
    from = end + 1;
    if (size_t paren = item.find('('); paren != std::string_view::npos) item = item.substr(0, paren);
    if (!item.starts_with("gpu:") && item != "gpu") continue;
    std::vector<std::string_view> parts;
    size_t p = 0;
    while (p <= item.size()) {
      size_t c = item.find(':', p);
      parts.push_back(item.substr(p, c == std::string_view::npos ? c : c - p));
      if (c == std::string_view::npos) break;
      p = c + 1;
    }
    std::string type = parts.size() >= 3 ? std::string(parts[1]) : "";
    auto count = Int(parts.size() >= 2 ? parts.back() : "1");
    if (!count || *count < 0) {
      return Status::Invalid("GRES \"" + std::string(gres) + "\": GPU count is not a number");
    }
    auto same = std::find_if(out.begin(), out.end(), [&](const GpuGres& g) { return g.type == type; });
    if (same == out.end()) same = out.insert(out.end(), GpuGres{type, 0});
    if (*count > std::numeric_limits<int>::max() - same->count) {
      return Status::Invalid("GRES \"" + std::string(gres) + "\": GPU count " + std::to_string(*count) +
                             (same->count > 0 ? " (with " + std::to_string(same->count) + " before it)" : "") +
                             " is more than a node can hold");
    }
    same->count += static_cast<int>(*count);
  }
  return out;
}

bool IsMigProfileName(std::string_view t) {
  // <digits>g.<digits>gb, optionally +me (the media-extensions variant).
  if (t.ends_with("+me")) t.remove_suffix(3);
  size_t i = 0;
  auto digits = [&] {
    const size_t start = i;
    while (i < t.size() && std::isdigit(static_cast<unsigned char>(t[i]))) ++i;
    return i > start;
  };
  if (!digits() || t.substr(i, 2) != "g.") return false;
  i += 2;
  if (!digits() || t.substr(i) != "gb") return false;
  return true;
}

Result<GpuGres> ParseGpuGres(std::string_view gres) {
  auto types = ParseGpuGresTypes(gres);
  if (!types.ok()) return types.status();
  if (types->size() > 1) {
    return Status::Invalid("GRES \"" + std::string(gres) + "\": GPUs of types \"" + (*types)[0].type +
                           "\" and \"" + (*types)[1].type +
                           "\" on one node (meridian's nodes have one GPU model)");
  }
  return types->empty() ? GpuGres{} : types->front();
}

Result<std::string> ParseSubmitted(std::string_view text) {
  std::string_view line = Trim(text);
  if (size_t nl = line.rfind('\n'); nl != std::string_view::npos) line = Trim(line.substr(nl + 1));
  std::string_view id = line.substr(0, line.find(';'));
  if (!Int(id) || *Int(id) <= 0) {
    return Status::Internal("sbatch printed \"" + std::string(Trim(text)) +
                            "\" where it prints the new job's id");
  }
  return std::string(id);
}

bool IsTerminalJobState(std::string_view s) {
  static const std::set<std::string_view> kTerminal = {
      "COMPLETED", "FAILED",    "CANCELLED",     "TIMEOUT",   "DEADLINE",   "OUT_OF_MEMORY",
      "NODE_FAIL", "BOOT_FAIL", "PREEMPTED",     "REVOKED",   "SPECIAL_EXIT"};
  return kTerminal.count(s) > 0;
}

PhaseOfJob MapJobState(const std::string& id, const std::string& state,
                       std::optional<int> exit_code, std::optional<int> exit_signal,
                       const std::string& nodes) {
  static const std::set<std::string_view> kWaiting = {
      "PENDING", "CONFIGURING", "REQUEUED", "REQUEUE_FED", "REQUEUE_HOLD", "RESV_DEL_HOLD",
      "RESIZING"};
  // COMPLETING counts as running: Slurm still holds the node's GPUs until the
  // job is COMPLETED, and meridian must not place the next job on them sooner.
  static const std::set<std::string_view> kRunning = {
      "RUNNING", "COMPLETING", "SUSPENDED", "STOPPED", "SIGNALING", "STAGE_OUT"};
  PhaseOfJob p;
  const std::string on = nodes.empty() ? "" : " on " + nodes;
  p.message = "Slurm job " + id + " " + state + on;
  if (kWaiting.count(state)) return p;
  if (kRunning.count(state)) {
    p.phase = RunPhase::kRunning;
    return p;
  }
  const int sig = exit_signal.value_or(0);
  const int code = exit_code.value_or(0);
  if (state == "COMPLETED" || state == "FAILED") {
    if (sig != 0) {
      p.phase = RunPhase::kKilled;
      p.signal = sig;
    } else {
      p.phase = RunPhase::kExited;
      p.exit_code = code;
      if (code == 127) p.message += " (exit 127: the command was not found on the node)";
      if (code == 126) p.message += " (exit 126: the command is not executable)";
    }
    return p;
  }
  if (state == "CANCELLED" || state == "TIMEOUT" || state == "DEADLINE" ||
      state == "OUT_OF_MEMORY") {
    p.phase = RunPhase::kKilled;
    p.signal = sig != 0 ? sig : (state == "OUT_OF_MEMORY" ? SIGKILL : SIGTERM);
    if (state == "TIMEOUT") p.message += " (it ran past its time limit)";
    if (state == "CANCELLED" && sig == 0 && code == 0) p.message += " (before it started)";
    return p;
  }
  // NODE_FAIL, BOOT_FAIL, PREEMPTED (by Slurm itself), REVOKED, SPECIAL_EXIT
  // and states this table does not know: the attempt is lost, and meridian
  // decides whether to requeue it.
  p.phase = RunPhase::kLost;
  return p;
}

NodeHealth MapNodeState(const std::string& state, const std::string& reason) {
  NodeHealth h;
  std::string base = state;
  std::string flags;
  while (!base.empty() && std::string_view("*~#!%$@^-").find(base.back()) != std::string_view::npos) {
    flags += base.back();
    base.pop_back();
  }
  static const std::set<std::string_view> kTakesWork = {"idle", "mixed", "allocated",
                                                        "completing", "planned"};
  std::string why;
  if (!kTakesWork.count(base)) {
    why = "Slurm state " + state;
  } else if (flags.find('*') != std::string::npos) {
    why = "Slurm state " + state + " (not responding)";
  } else if (flags.find_first_of("~#!%") != std::string::npos) {
    why = "Slurm state " + state + " (powered down or powering)";
  } else if (flags.find_first_of("$@^") != std::string::npos) {
    why = "Slurm state " + state + " (maintenance or reboot)";
  }
  if (why.empty()) return h;
  h.schedulable = false;
  h.reason = why + (reason.empty() || reason == "none" ? "" : ": " + reason);
  return h;
}

Status CommandFailure(const std::string& what, int exit_code, std::string_view err) {
  std::string_view text = err.substr(0, err.find_last_not_of(" \n\r\t") + 1);
  if (size_t nl = text.rfind('\n'); nl != std::string_view::npos) text = text.substr(nl + 1);
  if (text.size() > 300) text = text.substr(0, 300);
  const std::string msg = what + " exited with " + std::to_string(exit_code) + ": " + std::string(text);
  // The controller did not answer, or answered "not now": slurm_errno's
  // texts for ESLURM_*_TIMEOUT, SLURM_COMMUNICATIONS_*, ESLURM_NOT_SUPPORTED
  // while a backup takes over, EAGAIN.
  static constexpr std::string_view kTransient[] = {
      "Unable to contact slurm controller", "Socket timed out", "temporarily unable",
      "Resource temporarily unavailable", "Zero Bytes were transmitted", "Connection refused",
      "Communication connection failure", "backup controller", "try again", "Slurmctld is busy",
      "Transport endpoint"};
  for (std::string_view t : kTransient) {
    if (err.find(t) != std::string_view::npos) return Status::Internal(msg);
  }
  // The controller answered and refused: the same request is refused again.
  if (err.find("submission failed") != std::string_view::npos ||
      err.find("Invalid") != std::string_view::npos ||
      err.find("not available") != std::string_view::npos) {
    return Status::Invalid(msg);
  }
  return Status::Internal(msg);
}

}  // namespace meridian::backends::slurm
