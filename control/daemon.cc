#include "control/daemon.h"

#include <filesystem>

#include "control/pg.h"

namespace meridian::control {

Result<std::unique_ptr<Daemon>> Daemon::Start(DaemonOptions options,
                                              std::unique_ptr<Backend> backend) {
  std::unique_ptr<Daemon> d(new Daemon());
  auto store = OpenStore(options.store);
  if (!store.ok()) return store.status();
  d->store_ = std::move(store).value();
  d->backend_ = std::move(backend);
  std::error_code ec;
  std::filesystem::create_directories(options.reconciler.state_dir + "/jobs", ec);
  if (ec) {
    return Status::Invalid(options.reconciler.state_dir + ": cannot create the state directory: " +
                           ec.message());
  }
  auto catalog = options.reconciler.catalog;
  SamplerOptions so;
  so.config = options.telemetry;
  so.catalog = catalog;
  so.region = options.reconciler.region;
  so.gpu_hour_usd = options.reconciler.gpu_hour_usd;
  d->sampler_ = std::make_unique<TelemetrySampler>(d->store_.get(), std::move(so));
  TelemetrySampler* sampler = d->sampler_.get();
  options.reconciler.thresholds = options.telemetry.thresholds;
  options.reconciler.measured = [sampler](const std::string& id) { return sampler->View(id); };
  options.api.telemetry = sampler;
  LeadershipOptions lo;
  lo.lease_ms = options.lease_ms;
  lo.holder = LeaseHolderName();
  lo.lead = [p = d.get()] { return p->reconciler_->Start(); };
  lo.follow = [p = d.get()] { p->reconciler_->Stop(); };
  d->leadership_ = std::make_unique<Leadership>(d->store_.get(), std::move(lo));
  Leadership* leadership = d->leadership_.get();
  // A SQLite file has one daemon, whose lease nothing can take: its calls
  // need no check (and a stalled daemon's launches stay as they were).
  if (IsPostgresUri(options.store.path)) {
    options.reconciler.lease_held = [leadership] { return leadership->LeaseHeld(); };
    options.reconciler.epoch = [leadership] { return leadership->epoch(); };
    options.reconciler.deposed = [leadership] { leadership->Deposed(); };
  }
  d->reconciler_ = std::make_unique<Reconciler>(d->store_.get(), d->backend_.get(), &d->metrics_,
                                                std::move(options.reconciler));
  Reconciler* reconciler = d->reconciler_.get();
  options.api.role = [leadership] { return leadership->leading() ? "leader" : "follower"; };
  d->api_ = std::make_unique<ApiServer>(d->store_.get(), reconciler, &d->metrics_, catalog,
                                        options.api);
  MERIDIAN_RETURN_IF_ERROR(d->api_->Bind());
  MERIDIAN_RETURN_IF_ERROR(d->leadership_->Start());
  d->sampler_->Start();
  d->http_ = std::thread([p = d.get()] { p->api_->Serve(); });
  return d;
}

Daemon::~Daemon() { Stop(); }

void Daemon::Wait() {
  std::unique_lock<std::mutex> l(mu_);
  cv_.wait(l, [&] { return stopped_; });
}

void Daemon::Stop() {
  std::lock_guard<std::mutex> l(mu_);
  if (stopped_) return;
  if (api_) api_->Stop();
  if (http_.joinable()) http_.join();
  if (sampler_) sampler_->Stop();
  if (leadership_) leadership_->Stop();  // stops the loop if it leads
  if (reconciler_) reconciler_->Stop();
  stopped_ = true;
  cv_.notify_all();
}

}  // namespace meridian::control
