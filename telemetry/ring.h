// SampleRing: the last `capacity` samples of one job, oldest first. Memory is
// bounded by the capacity whatever the job's length. Not thread-safe: the
// sampler guards its rings with its own mutex.
#pragma once

#include <cstddef>
#include <vector>

#include "telemetry/sample.h"

namespace meridian::telemetry {

class SampleRing {
 public:
  explicit SampleRing(size_t capacity) : capacity_(capacity == 0 ? 1 : capacity) {
    buf_.reserve(capacity_);
  }

  void Push(JobSample s) {
    if (buf_.size() < capacity_) {
      buf_.push_back(std::move(s));
    } else {
      buf_[head_] = std::move(s);
      head_ = (head_ + 1) % capacity_;
    }
  }
  size_t size() const { return buf_.size(); }
  size_t capacity() const { return capacity_; }
  // The samples, oldest first.
  std::vector<JobSample> Ordered() const {
    std::vector<JobSample> out;
    out.reserve(buf_.size());
    for (size_t i = 0; i < buf_.size(); ++i) out.push_back(buf_[(head_ + i) % buf_.size()]);
    return out;
  }
  const JobSample* Latest() const {
    if (buf_.empty()) return nullptr;
    return &buf_[(head_ + buf_.size() - 1) % buf_.size()];
  }

 private:
  size_t capacity_;
  size_t head_ = 0;  // the oldest sample once full
  std::vector<JobSample> buf_;
};

}  // namespace meridian::telemetry
