#include "backends/local/status_file.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

namespace meridian::backends {

namespace {

using Fields = std::map<std::string, std::string>;

// The fields of a complete record, nullopt when the file is absent.
Result<std::optional<Fields>> ReadRecord(const std::string& path, const char* magic) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return std::optional<Fields>();
  std::ifstream in(path);
  if (!in) {
    if (!std::filesystem::exists(path, ec)) return std::optional<Fields>();
    return Status::Internal(path + ": " + std::strerror(errno));
  }
  std::string line;
  if (!std::getline(in, line) || line != magic) {
    return Status::Internal(path + ": not a " + std::string(magic) + " record");
  }
  Fields f;
  bool ended = false;
  while (std::getline(in, line)) {
    if (line == kStatusFileEnd) {
      ended = true;
      break;
    }
    size_t sp = line.find(' ');
    if (sp == std::string::npos) return Status::Internal(path + ": malformed line \"" + line + "\"");
    f[line.substr(0, sp)] = line.substr(sp + 1);
  }
  if (!ended) return Status::Internal(path + ": record is incomplete");
  return std::optional<Fields>(std::move(f));
}

int64_t Int(const Fields& f, const std::string& key) {
  auto it = f.find(key);
  if (it == f.end()) return 0;
  return std::strtoll(it->second.c_str(), nullptr, 10);
}

std::string Str(const Fields& f, const std::string& key) {
  auto it = f.find(key);
  return it == f.end() ? std::string() : it->second;
}

}  // namespace

Result<std::optional<AttemptStatus>> ReadStatusFile(const std::string& path) {
  auto rec = ReadRecord(path, kStatusFileMagic);
  if (!rec.ok()) return rec.status();
  if (!rec->has_value()) return std::optional<AttemptStatus>();
  const Fields& f = **rec;
  AttemptStatus s;
  s.job_pid = static_cast<pid_t>(Int(f, "job_pid"));
  s.job_start = static_cast<uint64_t>(Int(f, "job_start"));
  s.exit_code = static_cast<int>(Int(f, "exit_code"));
  s.signal = static_cast<int>(Int(f, "signal"));
  s.started = Int(f, "started");
  s.ended = Int(f, "ended");
  s.cpu_user_us = Int(f, "cpu_user_us");
  s.cpu_system_us = Int(f, "cpu_system_us");
  s.max_rss_kib = Int(f, "max_rss_kib");
  s.stop_requested = Int(f, "stop_requested") != 0;
  s.killed_after_grace = Int(f, "killed_after_grace") != 0;
  s.exec_stage = static_cast<int>(Int(f, "exec_stage"));
  s.exec_errno = static_cast<int>(Int(f, "exec_errno"));
  return std::optional<AttemptStatus>(s);
}

Result<std::optional<AttemptRun>> ReadRunFile(const std::string& path) {
  auto rec = ReadRecord(path, kRunFileMagic);
  if (!rec.ok()) return rec.status();
  if (!rec->has_value()) return std::optional<AttemptRun>();
  const Fields& f = **rec;
  AttemptRun r;
  r.job_id = Str(f, "job_id");
  r.attempt = static_cast<int>(Int(f, "attempt"));
  r.shim_pid = static_cast<pid_t>(Int(f, "shim_pid"));
  r.shim_start = static_cast<uint64_t>(Int(f, "shim_start"));
  r.job_pid = static_cast<pid_t>(Int(f, "job_pid"));
  r.job_start = static_cast<uint64_t>(Int(f, "job_start"));
  r.started = Int(f, "started");
  return std::optional<AttemptRun>(r);
}

Status WriteRunFile(const std::string& path, const AttemptRun& run) {
  std::ostringstream text;
  text << kRunFileMagic << "\n"
       << "job_id " << run.job_id << "\n"
       << "attempt " << run.attempt << "\n"
       << "shim_pid " << run.shim_pid << "\n"
       << "shim_start " << run.shim_start << "\n"
       << "job_pid " << run.job_pid << "\n"
       << "job_start " << run.job_start << "\n"
       << "started " << run.started << "\n"
       << kStatusFileEnd << "\n";
  std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << text.str();
    out.flush();
    if (!out) return Status::Internal(tmp + ": cannot write the attempt record");
  }
  std::error_code ec;
  std::filesystem::permissions(tmp, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write, ec);
  std::filesystem::rename(tmp, path, ec);
  if (ec) return Status::Internal(path + ": " + ec.message());
  return Status::Ok();
}

}  // namespace meridian::backends
