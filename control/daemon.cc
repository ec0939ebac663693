#include "control/daemon.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <mutex>

#include "control/pg.h"
#include "control/pg_lease.h"

namespace meridian::control {

namespace {

// The address other replicas reach this one's API at: `advertise` as
// given, with the API's port when it names none; else its listening host
// (the machine's name when it listens on every interface) and port.
std::string AdvertisedAddress(const std::string& advertise, const std::string& host, int port) {
  if (!advertise.empty()) {
    // A port is a ':' after the host: after the ']' of an IPv6 address.
    const size_t close = advertise.rfind(']');
    const bool has_port = advertise.find(':', close == std::string::npos ? 0 : close) != std::string::npos;
    return has_port ? advertise : advertise + ":" + std::to_string(port);
  }
  std::string h = host;
  if (h.empty() || h == "0.0.0.0" || h == "::") {
    char name[256] = {};
    h = gethostname(name, sizeof name - 1) == 0 ? name : "localhost";
  }
  return h + ":" + std::to_string(port);
}

// The leader's API address, read from the lease row: its holder is
// "<name>@<host:port>" (Daemon::Start). One connection, opened when first
// asked and shared by the API's threads.
class LeaderAddress {
 public:
  explicit LeaderAddress(std::string uri) : uri_(std::move(uri)) {}
  std::string Get() {
    std::lock_guard<std::mutex> l(mu_);
    if (!conn_) {
      auto c = PgConn::Open(uri_);
      if (!c.ok()) return "";
      conn_ = std::move(c).value();
    }
    auto holder = SelectPgLeaseHolder(*conn_);
    if (!holder.ok()) return "";
    const size_t at = holder->rfind('@');
    return at == std::string::npos ? "" : holder->substr(at + 1);
  }

 private:
  const std::string uri_;
  std::mutex mu_;
  std::unique_ptr<PgConn> conn_;
};

}  // namespace

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
  // Leadership is made once the API's port is known (its holder name carries
  // the address); these run only after that.
  Daemon* p = d.get();
  // A SQLite file has one daemon, whose lease nothing can take: its calls
  // need no check (and a stalled daemon's launches stay as they were).
  const bool replicated = IsPostgresUri(options.store.path);
  if (replicated) {
    options.reconciler.lease_held = [p] { return p->leadership_->LeaseHeld(); };
    options.reconciler.epoch = [p] { return p->leadership_->epoch(); };
    options.reconciler.deposed = [p] { p->leadership_->Deposed(); };
    auto leader = std::make_shared<LeaderAddress>(options.store.path);
    options.api.leader_address = [leader] { return leader->Get(); };
  }
  d->reconciler_ = std::make_unique<Reconciler>(d->store_.get(), d->backend_.get(), &d->metrics_,
                                                std::move(options.reconciler));
  Reconciler* reconciler = d->reconciler_.get();
  options.api.role = [p] { return p->leadership_->leading() ? "leader" : "follower"; };
  const std::string api_host = options.api.host;
  d->api_ = std::make_unique<ApiServer>(d->store_.get(), reconciler, &d->metrics_, catalog,
                                        options.api);
  MERIDIAN_RETURN_IF_ERROR(d->api_->Bind());
  LeadershipOptions lo;
  lo.lease_ms = options.lease_ms;
  lo.holder = LeaseHolderName() + "@" + AdvertisedAddress(options.advertise, api_host, d->api_->port());
  lo.lead = [p] { return p->reconciler_->Start(); };
  lo.follow = [p] { p->reconciler_->Stop(); };
  d->leadership_ = std::make_unique<Leadership>(d->store_.get(), std::move(lo));
  MERIDIAN_RETURN_IF_ERROR(d->leadership_->Start());
  d->sampler_->Start();
  d->http_ = std::thread([p = d.get()] { p->api_->Serve(); });
  return d;
}

Daemon::~Daemon() { Stop(); }

Result<std::unique_ptr<SqliteServeLock>> SqliteServeLock::Take(const std::string& path) {
  const std::string lock = path + "-serve.lock";
  const int fd = ::open(lock.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) {
    return Status::Invalid("--db: " + path + ": cannot open " + lock + ": " + std::strerror(errno));
  }
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    char pid[32] = {};
    const ssize_t n = ::pread(fd, pid, sizeof pid - 1, 0);
    ::close(fd);
    if (err != EWOULDBLOCK) {
      return Status::Invalid("--db: " + path + ": cannot lock " + lock + ": " + std::strerror(err));
    }
    std::string holder(pid, n > 0 ? static_cast<size_t>(n) : 0);
    while (!holder.empty() && (holder.back() == '\n' || holder.back() == '\0')) holder.pop_back();
    return Status::Invalid("--db: " + path + " is served by another meridian serve" +
                           (holder.empty() ? "" : " (pid " + holder + ")") +
                           "; one daemon writes a SQLite file (for replicas, use PostgreSQL: "
                           "--db postgresql://...)");
  }
  // The pid is a note for the message; the lock holds without it.
  const std::string pid = std::to_string(::getpid()) + "\n";
  if (::ftruncate(fd, 0) == 0) (void)!::pwrite(fd, pid.data(), pid.size(), 0);
  return std::unique_ptr<SqliteServeLock>(new SqliteServeLock(fd));
}

SqliteServeLock::~SqliteServeLock() { ::close(fd_); }

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
