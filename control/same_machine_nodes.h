// For reconciler tests on the real local backend: this machine offered to
// the scheduler as several nodes (the local backend itself runs on its one
// node), every launch run here as a real process. A service's replicas need
// distinct nodes; a move between a GPU node and a CPU node needs both kinds.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "control/backend.h"

namespace meridian::control::testing {

class SameMachineNodes : public Backend {
 public:
  // `count` copies of this machine's node, named m0, m1, ...
  SameMachineNodes(std::unique_ptr<Backend> local, int count)
      : local_(std::move(local)), count_(count) {}
  // Exactly `nodes`.
  SameMachineNodes(std::unique_ptr<Backend> local, std::vector<BackendNode> nodes)
      : local_(std::move(local)), nodes_(std::move(nodes)) {}
  std::string_view name() const override { return local_->name(); }
  Result<std::string> Launch(const LaunchRequest& request) override {
    {
      std::lock_guard<std::mutex> l(mu_);
      launched_nodes_.push_back(request.node);
      if (before_launch_) before_launch_(request);
    }
    LaunchRequest here = request;
    here.node = local_->Nodes().at(0).name;
    return local_->Launch(here);
  }
  Status Stop(const std::string& handle, int64_t grace_s) override {
    return local_->Stop(handle, grace_s);
  }
  std::vector<RunObservation> Poll() override { return local_->Poll(); }
  Result<RunObservation> Adopt(const std::string& job_id, int attempt,
                               const std::string& handle) override {
    return local_->Adopt(job_id, attempt, handle);
  }
  Result<std::optional<std::string>> FindLaunched(const std::string& job_id, int attempt) override {
    return local_->FindLaunched(job_id, attempt);
  }
  Status Retire(const std::string& job_id, int attempts) override {
    return local_->Retire(job_id, attempts);
  }
  // Called before each launch (say, to let the test's clock run on while a
  // replacement takes its time to come up).
  void BeforeLaunch(std::function<void(const LaunchRequest&)> f) {
    std::lock_guard<std::mutex> l(mu_);
    before_launch_ = std::move(f);
  }
  // The node each launch so far asked for, in order.
  std::vector<std::string> LaunchedNodes() {
    std::lock_guard<std::mutex> l(mu_);
    return launched_nodes_;
  }
  std::vector<BackendNode> Nodes() override {
    if (!nodes_.empty()) return nodes_;
    std::vector<BackendNode> nodes;
    const BackendNode here = local_->Nodes().at(0);
    for (int i = 0; i < count_; ++i) {
      nodes.push_back(here);
      nodes.back().name = "m" + std::to_string(i);
    }
    return nodes;
  }

 private:
  std::unique_ptr<Backend> local_;
  int count_ = 0;
  std::vector<BackendNode> nodes_;
  std::mutex mu_;
  std::function<void(const LaunchRequest&)> before_launch_;
  std::vector<std::string> launched_nodes_;
};

}  // namespace meridian::control::testing
