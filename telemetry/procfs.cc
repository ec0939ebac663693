#include "telemetry/procfs.h"

#include <dirent.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

namespace meridian::telemetry {

namespace {

bool ReadText(const std::string& path, std::string* out) {
  std::ifstream in(path);
  if (!in) return false;
  std::stringstream ss;
  ss << in.rdbuf();
  *out = ss.str();
  return !out->empty();
}

// The value after "key:" on its line of a "key: value" file.
bool Field(const std::string& text, const char* key, uint64_t* out) {
  const std::string k = std::string(key) + ":";
  size_t at = 0;
  while ((at = text.find(k, at)) != std::string::npos) {
    if (at == 0 || text[at - 1] == '\n') {
      *out = std::strtoull(text.c_str() + at + k.size(), nullptr, 10);
      return true;
    }
    at += k.size();
  }
  return false;
}

}  // namespace

bool ParseStat(const std::string& text, double ticks_per_s, ProcCounters* out) {
  // "pid (comm) S ppid pgrp ...": the command ends at the last ')'.
  const size_t close = text.rfind(')');
  if (close == std::string::npos || close + 2 >= text.size()) return false;
  out->pid = static_cast<pid_t>(std::strtol(text.c_str(), nullptr, 10));
  std::istringstream rest(text.substr(close + 2));
  std::vector<std::string> f;  // f[0] is field 3 (state)
  std::string tok;
  while (rest >> tok) f.push_back(tok);
  if (f.size() < 20) return false;
  auto at = [&](int field) { return std::strtoull(f[static_cast<size_t>(field - 3)].c_str(), nullptr, 10); };
  out->pgrp = static_cast<pid_t>(at(5));
  out->user_s = static_cast<double>(at(14)) / ticks_per_s;
  out->system_s = static_cast<double>(at(15)) / ticks_per_s;
  out->threads = static_cast<int>(at(20));
  out->start_time = at(22);
  out->blkio_s = f.size() >= 40 ? static_cast<double>(at(42)) / ticks_per_s : 0;
  return true;
}

bool ParseStatus(const std::string& text, ProcCounters* out) {
  return Field(text, "voluntary_ctxt_switches", &out->ctx_voluntary) &&
         Field(text, "nonvoluntary_ctxt_switches", &out->ctx_involuntary);
}

bool ParseIo(const std::string& text, ProcCounters* out) {
  out->io_known = Field(text, "read_bytes", &out->read_bytes) &&
                  Field(text, "write_bytes", &out->write_bytes);
  return out->io_known;
}

bool ParseNode(const std::string& stat, const std::string& loadavg, double ticks_per_s,
               NodeSample* out) {
  if (stat.compare(0, 4, "cpu ") != 0) return false;
  std::istringstream line(stat.substr(4, stat.find('\n') - 4));
  // user nice system idle iowait irq softirq steal
  double v[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  for (double& x : v) {
    if (!(line >> x)) return false;
  }
  out->cpu_busy_s = (v[0] + v[1] + v[2] + v[5] + v[6] + v[7]) / ticks_per_s;
  out->cpu_iowait_s = v[4] / ticks_per_s;
  out->cpu_total_s = out->cpu_busy_s + out->cpu_iowait_s + v[3] / ticks_per_s;
  int cpus = 0;
  for (size_t at = stat.find("\ncpu"); at != std::string::npos; at = stat.find("\ncpu", at + 1)) {
    if (at + 4 < stat.size() && std::isdigit(static_cast<unsigned char>(stat[at + 4]))) ++cpus;
  }
  out->online_cpus = cpus;
  char* end = nullptr;
  out->load1 = std::strtod(loadavg.c_str(), &end);
  return end != loadavg.c_str();
}

ProcFs::ProcFs(std::string root)
    : root_(std::move(root)), ticks_per_s_(static_cast<double>(sysconf(_SC_CLK_TCK))) {}

std::vector<pid_t> ProcFs::GroupMembers(pid_t pgid) const {
  std::vector<pid_t> out;
  DIR* d = opendir(root_.c_str());
  if (d == nullptr) return out;
  while (dirent* e = readdir(d)) {
    char* end = nullptr;
    const long pid = std::strtol(e->d_name, &end, 10);
    if (*end != '\0' || pid <= 0) continue;
    std::string text;
    ProcCounters c;
    if (!ReadText(root_ + "/" + e->d_name + "/stat", &text)) continue;
    if (ParseStat(text, ticks_per_s_, &c) && c.pgrp == pgid) out.push_back(static_cast<pid_t>(pid));
  }
  closedir(d);
  return out;
}

bool ProcFs::ReadProcess(pid_t pid, ProcCounters* out) const {
  const std::string dir = root_ + "/" + std::to_string(pid);
  std::string text;
  if (!ReadText(dir + "/stat", &text) || !ParseStat(text, ticks_per_s_, out)) return false;
  if (ReadText(dir + "/status", &text)) (void)ParseStatus(text, out);
  if (ReadText(dir + "/io", &text)) (void)ParseIo(text, out);
  if (ReadText(dir + "/schedstat", &text)) {
    std::istringstream s(text);
    double run_ns = 0, wait_ns = 0;
    if (s >> run_ns >> wait_ns) out->run_delay_s = wait_ns / 1e9;
  }
  return true;
}

bool ProcFs::ReadNode(NodeSample* out) const {
  std::string stat, load;
  if (!ReadText(root_ + "/stat", &stat) || !ReadText(root_ + "/loadavg", &load)) return false;
  return ParseNode(stat, load, ticks_per_s_, out);
}

}  // namespace meridian::telemetry
