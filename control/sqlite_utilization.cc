#include "control/sqlite_utilization.h"

#include <cmath>
#include <limits>
#include <set>

namespace meridian::control {

namespace {

void BindFigure(Stmt& s, int i, double v) {
  if (std::isnan(v)) {
    s.BindNull(i);
  } else {
    s.BindDouble(i, v);
  }
}

double Figure(const Stmt& s, int col) {
  return s.IsNull(col) ? std::numeric_limits<double>::quiet_NaN() : s.Double(col);
}

}  // namespace

Status InsertUtilization(Db& db, const std::vector<UtilizationRow>& rows, int keep_per_job) {
  std::set<std::string> jobs;
  for (const UtilizationRow& r : rows) {
    auto s = db.Prepare(
        "INSERT OR REPLACE INTO utilization(job_id,at,cpu_cores,iowait_frac,read_mb_per_s,"
        "gpu_sm_pct,gpu_mem_bw_pct,gpu_mem_used_mib,gpu_power_w,class) VALUES(?,?,?,?,?,?,?,?,?,?)");
    if (!s.ok()) return s.status();
    Stmt& st = **s;
    st.Bind(1, r.job_id).Bind(2, r.at).BindDouble(3, r.cpu_cores).BindDouble(4, r.iowait_frac);
    st.BindDouble(5, r.read_mb_per_s);
    BindFigure(st, 6, r.gpu_sm_pct);
    BindFigure(st, 7, r.gpu_mem_bw_pct);
    BindFigure(st, 8, r.gpu_mem_used_mib);
    BindFigure(st, 9, r.gpu_power_w);
    MERIDIAN_RETURN_IF_ERROR(st.Bind(10, r.job_class).Run());
    jobs.insert(r.job_id);
  }
  for (const std::string& job : jobs) {
    auto d = db.Prepare(
        "DELETE FROM utilization WHERE job_id=?1 AND at < (SELECT at FROM utilization WHERE "
        "job_id=?1 ORDER BY at DESC LIMIT 1 OFFSET ?2)");
    if (!d.ok()) return d.status();
    MERIDIAN_RETURN_IF_ERROR((*d)->Bind(1, job).Bind(2, int64_t{keep_per_job - 1}).Run());
  }
  return Status::Ok();
}

Result<std::vector<UtilizationRow>> ReadUtilization(Db& db, const std::string& job_id, int limit) {
  auto s = db.Prepare(
      "SELECT at,cpu_cores,iowait_frac,read_mb_per_s,gpu_sm_pct,gpu_mem_bw_pct,gpu_mem_used_mib,"
      "gpu_power_w,class FROM (SELECT * FROM utilization WHERE job_id=? ORDER BY at DESC LIMIT ?) "
      "ORDER BY at");
  if (!s.ok()) return s.status();
  (*s)->Bind(1, job_id).Bind(2, int64_t{limit});
  std::vector<UtilizationRow> out;
  for (;;) {
    auto r = (*s)->Step();
    if (!r.ok()) return r.status();
    if (!*r) return out;
    UtilizationRow u;
    u.job_id = job_id;
    u.at = (*s)->Int(0);
    u.cpu_cores = (*s)->Double(1);
    u.iowait_frac = (*s)->Double(2);
    u.read_mb_per_s = (*s)->Double(3);
    u.gpu_sm_pct = Figure(**s, 4);
    u.gpu_mem_bw_pct = Figure(**s, 5);
    u.gpu_mem_used_mib = Figure(**s, 6);
    u.gpu_power_w = Figure(**s, 7);
    u.job_class = (*s)->Text(8);
    out.push_back(std::move(u));
  }
}

}  // namespace meridian::control
