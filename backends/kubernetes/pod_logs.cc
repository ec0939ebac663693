#include "backends/kubernetes/pod_logs.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <optional>
#include <vector>

#include "backends/common/log_cap.h"
#include "control/backend.h"

namespace meridian::backends::k8s {

namespace fs = std::filesystem;

bool IsRunsLogDir(const std::string& dir, const std::string& run_id) {
  const std::optional<control::ReplicaRef> replica = control::ParseReplicaRunId(run_id);
  const std::string job = replica ? replica->job_id : run_id;
  if (job.empty() || job.find('/') != std::string::npos || job == "." || job == "..") return false;
  const std::string tail = "/jobs/" + job + "/logs";
  if (dir.size() <= tail.size() || dir.compare(dir.size() - tail.size(), tail.size(), tail) != 0) {
    return false;
  }
  for (const auto& part : std::filesystem::path(dir)) {
    if (part == "." || part == "..") return false;
  }
  return true;
}

int64_t LogRoom(const std::string& log_dir, int64_t cap) {
  if (cap <= 0) return -1;
  int64_t held = 0;
  for (const char* name : {"stdout.log", "stderr.log"}) {
    std::error_code ec;
    const auto size = fs::file_size(fs::path(log_dir) / name, ec);
    if (!ec) held += static_cast<int64_t>(size);
  }
  return std::max<int64_t>(0, cap - held);
}

Status CopyPodLog(const Kubectl& kubectl, const std::string& ns, const std::string& job,
                  const std::string& log_dir, int64_t cap) {
  std::error_code ec;
  fs::create_directories(log_dir, ec);
  if (ec) return Status::Internal("log directory \"" + log_dir + "\": " + ec.message());
  const int64_t room = LogRoom(log_dir, cap);
  std::vector<std::string> args = {"logs", "job/" + job, "-n", ns};
  // One byte past the room says whether the log goes on beyond the cap.
  if (room >= 0) args.push_back("--limit-bytes=" + std::to_string(room + 1));
  auto res = kubectl.Run(args);
  if (!res.ok()) return res.status();
  if (res->exit_code != 0) return KubectlFailure("kubectl logs job/" + job + " failed", *res);
  std::string text = std::move(res->out);
  if (room >= 0 && static_cast<int64_t>(text.size()) > room) {
    text.resize(static_cast<size_t>(room));
    text += kLogCapReachedHead + std::to_string(cap) + kLogCapReachedTail;
  }
  if (text.empty()) return Status::Ok();
  const std::string path = (fs::path(log_dir) / "stdout.log").string();
  std::ofstream out(path, std::ios::binary | std::ios::app);
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  out.close();
  if (!out) return Status::Internal("\"" + path + "\": cannot append the pod log");
  return Status::Ok();
}

}  // namespace meridian::backends::k8s
