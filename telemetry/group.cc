#include "telemetry/group.h"

#include <algorithm>

namespace meridian::telemetry {

namespace {

template <typename T>
T Growth(T now, T before) {
  return now > before ? now - before : T{0};
}

}  // namespace

JobSample GroupCounters::Sample(const ProcFs& fs, int64_t t_ms) {
  std::map<pid_t, ProcCounters> now;
  std::vector<pid_t> members = fs.GroupMembers(pgid_);
  // The leader first: it may be a zombie the group scan misses while reaped.
  if (std::find(members.begin(), members.end(), pgid_) == members.end()) members.push_back(pgid_);
  int threads = 0;
  for (pid_t pid : members) {
    ProcCounters c;
    if (!fs.ReadProcess(pid, &c) || c.pgrp != pgid_) continue;
    threads += c.threads;
    ProcCounters before;  // zeros: a process new since the last sample counts from its start
    auto it = last_.find(pid);
    if (it != last_.end() && it->second.start_time == c.start_time) before = it->second;
    total_.cpu_user_s += Growth(c.user_s, before.user_s);
    total_.cpu_system_s += Growth(c.system_s, before.system_s);
    total_.iowait_s += Growth(c.blkio_s, before.blkio_s);
    total_.run_delay_s += Growth(c.run_delay_s, before.run_delay_s);
    total_.ctx_voluntary += Growth(c.ctx_voluntary, before.ctx_voluntary);
    total_.ctx_involuntary += Growth(c.ctx_involuntary, before.ctx_involuntary);
    total_.read_bytes += Growth(c.read_bytes, before.read_bytes);
    total_.write_bytes += Growth(c.write_bytes, before.write_bytes);
    now[pid] = c;
  }
  last_ = std::move(now);
  total_.t_ms = t_ms;
  total_.processes = static_cast<int>(last_.size());
  total_.threads = threads;
  return total_;
}

std::vector<pid_t> GroupCounters::pids() const {
  std::vector<pid_t> out;
  for (const auto& [pid, c] : last_) out.push_back(pid);
  return out;
}

}  // namespace meridian::telemetry
