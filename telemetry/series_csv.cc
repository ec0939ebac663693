#include "telemetry/series_csv.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace meridian::telemetry {

namespace {

constexpr int kColumns = 19;

std::vector<std::string> Split(const std::string& line) {
  std::vector<std::string> out;
  std::string cell;
  std::istringstream in(line);
  while (std::getline(in, cell, ',')) out.push_back(cell);
  if (!line.empty() && line.back() == ',') out.emplace_back();
  return out;
}

bool Number(const std::string& s, double* out) {
  if (s.empty()) {
    *out = kUnknown;
    return true;
  }
  char* end = nullptr;
  *out = std::strtod(s.c_str(), &end);
  return end == s.c_str() + s.size();
}

std::string Cell(double v) {
  if (!Known(v)) return "";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

}  // namespace

std::string SeriesCsvHeader() {
  return "t_s,cpu_user_s,cpu_system_s,iowait_s,run_delay_s,ctx_vol,ctx_invol,read_bytes,"
         "write_bytes,threads,vcpus,gpu,mig_gi,sm_pct,membw_pct,mem_used_mib,mem_total_mib,"
         "power_w,job_mem_mib\n";
}

std::string SeriesCsvRows(const JobSample& s) {
  char head[256];
  std::snprintf(head, sizeof head, "%.3f,%.3f,%.3f,%.3f,%.3f,%llu,%llu,%llu,%llu,%d,%d,",
                s.t_ms / 1000.0, s.cpu_user_s, s.cpu_system_s, s.iowait_s, s.run_delay_s,
                static_cast<unsigned long long>(s.ctx_voluntary),
                static_cast<unsigned long long>(s.ctx_involuntary),
                static_cast<unsigned long long>(s.read_bytes),
                static_cast<unsigned long long>(s.write_bytes), s.threads, s.vcpus);
  if (s.gpus.empty()) return std::string(head) + ",,,,,,,\n";
  std::string out;
  for (const GpuReading& g : s.gpus) {
    out += head + std::to_string(g.index) + "," + (g.mig_gi >= 0 ? std::to_string(g.mig_gi) : "") +
           "," + Cell(g.sm_util_pct) + "," + Cell(g.mem_bw_util_pct) + "," + Cell(g.mem_used_mib) +
           "," + Cell(g.mem_total_mib) + "," + Cell(g.power_w) + "," + Cell(g.job_mem_used_mib) + "\n";
  }
  return out;
}

Result<std::vector<JobSample>> ParseSeriesCsv(const std::string& text, const std::string& source) {
  std::vector<JobSample> out;
  std::istringstream in(text);
  std::string line;
  int n = 0;
  bool header = false;
  while (std::getline(in, line)) {
    ++n;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty() || line[0] == '#') continue;
    if (!header) {
      header = true;
      if (line + "\n" != SeriesCsvHeader()) {
        return Status::Invalid(source + ":" + std::to_string(n) + ": header: expected \"" +
                               SeriesCsvHeader().substr(0, SeriesCsvHeader().size() - 1) + "\"");
      }
      continue;
    }
    std::vector<std::string> c = Split(line);
    if (static_cast<int>(c.size()) != kColumns) {
      return Status::Invalid(source + ":" + std::to_string(n) + ": " + std::to_string(c.size()) +
                             " columns; expected " + std::to_string(kColumns));
    }
    double v[kColumns];
    for (int i = 0; i < kColumns; ++i) {
      if (!Number(c[static_cast<size_t>(i)], &v[i]) || (i <= 10 && !Known(v[i]))) {
        return Status::Invalid(source + ":" + std::to_string(n) + ": column " + std::to_string(i + 1) +
                               ": \"" + c[static_cast<size_t>(i)] + "\" is not a number");
      }
    }
    const int64_t t_ms = static_cast<int64_t>(v[0] * 1000);
    if (out.empty() || out.back().t_ms != t_ms) {
      if (!out.empty() && t_ms < out.back().t_ms) {
        return Status::Invalid(source + ":" + std::to_string(n) + ": t_s: " + c[0] +
                               " goes back in time");
      }
      JobSample s;
      s.t_ms = t_ms;
      s.cpu_user_s = v[1];
      s.cpu_system_s = v[2];
      s.iowait_s = v[3];
      s.run_delay_s = v[4];
      s.ctx_voluntary = static_cast<uint64_t>(v[5]);
      s.ctx_involuntary = static_cast<uint64_t>(v[6]);
      s.read_bytes = static_cast<uint64_t>(v[7]);
      s.write_bytes = static_cast<uint64_t>(v[8]);
      s.threads = static_cast<int>(v[9]);
      s.vcpus = static_cast<int>(v[10]);
      out.push_back(s);
    }
    if (!Known(v[11])) continue;
    GpuReading g;
    g.index = static_cast<int>(v[11]);
    g.mig_gi = Known(v[12]) ? static_cast<int>(v[12]) : -1;
    g.sm_util_pct = v[13];
    g.mem_bw_util_pct = v[14];
    g.mem_used_mib = v[15];
    g.mem_total_mib = v[16];
    g.power_w = v[17];
    g.job_mem_used_mib = v[18];
    out.back().gpus.push_back(g);
  }
  if (!header) return Status::Invalid(source + ": empty: expected the header line");
  return out;
}

Result<std::vector<JobSample>> ReadSeriesCsv(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Status::Invalid(path + ": cannot read the series file");
  std::stringstream ss;
  ss << in.rdbuf();
  return ParseSeriesCsv(ss.str(), path);
}

}  // namespace meridian::telemetry
