#include "control/leadership.h"

#include <unistd.h>

#include <chrono>
#include <iostream>

namespace meridian::control {

Leadership::Leadership(Store* store, LeadershipOptions options)
    : store_(store), options_(std::move(options)) {}

Leadership::~Leadership() { Stop(); }

int64_t Leadership::SteadyMs() const {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

bool Leadership::LeaseHeld() const {
  return leading_ && !deposed_ && SteadyMs() - renewed_sent_ms_ < options_.lease_ms;
}

void Leadership::Deposed() {
  {
    std::lock_guard<std::mutex> l(mu_);
    deposed_ = true;
  }
  cv_.notify_all();
}

Status Leadership::Start() {
  MERIDIAN_RETURN_IF_ERROR(TryLead());
  thread_ = std::thread([this] { Loop(); });
  return Status::Ok();
}

void Leadership::Stop() {
  {
    std::lock_guard<std::mutex> l(mu_);
    if (stop_) return;
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  if (!leading_) return;
  options_.follow();
  leading_ = false;
  // Renewed for no time: expired now, so a follower need not wait a lease.
  (void)store_->RenewLease(options_.holder, epoch_, 0);
}

void Leadership::Loop() {
  const auto period = std::chrono::milliseconds(std::max<int64_t>(1, options_.lease_ms / 3));
  for (;;) {
    {
      std::unique_lock<std::mutex> l(mu_);
      cv_.wait_for(l, period, [&] { return stop_ || deposed_; });
      if (stop_) return;
    }
    if (leading_ && deposed_) {
      StepDown("the backend refused a launch: a newer leader has fenced it");
    } else if (leading_) {
      Renew();
    } else if (Status st = TryLead(); !st.ok()) {
      std::cerr << "meridian serve: took the lead but could not start leading: " << st.message()
                << "\n";
    }
  }
}

Status Leadership::TryLead() {
  const int64_t sent = SteadyMs();
  auto epoch = store_->TakeLease(options_.holder, options_.lease_ms);
  if (!epoch.ok()) {
    std::cerr << "meridian serve: cannot ask for the lead: " << epoch.status().message() << "\n";
    return Status::Ok();  // still a follower; asked again next period
  }
  if (*epoch == 0) return Status::Ok();  // another replica leads
  epoch_ = *epoch;
  deposed_ = false;
  renewed_sent_ms_ = sent;
  store_->FenceWrites(epoch_);
  leading_ = true;  // before the loop starts: its recovery's backend calls ask LeaseHeld
  if (Status st = options_.lead(); !st.ok()) {
    // Not renewed: the lease expires and any replica, this one too, may take it.
    leading_ = false;
    store_->FenceWrites(0);
    return st;
  }
  std::cerr << "meridian serve: leading (lease epoch " << epoch_ << ")\n";
  return Status::Ok();
}

void Leadership::Renew() {
  const int64_t sent = SteadyMs();
  auto renewed = store_->RenewLease(options_.holder, epoch_, options_.lease_ms);
  if (renewed.ok() && *renewed) {
    renewed_sent_ms_ = sent;
    return;
  }
  if (renewed.ok()) return StepDown("another replica took the lease");
  if (sent - renewed_sent_ms_ >= options_.lease_ms) {
    StepDown("the lease was not renewed for " + std::to_string(options_.lease_ms) +
             " ms: " + renewed.status().message());
  }
}

void Leadership::StepDown(const std::string& why) {
  std::cerr << "meridian serve: no longer leading (epoch " << epoch_ << "): " << why
            << "; following\n";
  options_.follow();  // its writes still fenced with the old epoch
  leading_ = false;
  deposed_ = false;
  store_->FenceWrites(0);
}

std::string LeaseHolderName() {
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) != 0) host[0] = '\0';
  const int64_t ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                         std::chrono::system_clock::now().time_since_epoch())
                         .count();
  return std::string(host) + ":" + std::to_string(getpid()) + ":" + std::to_string(ms);
}

}  // namespace meridian::control
