// What the SQLite and PostgreSQL stores share about connections: writes in
// committed transactions through one connection, grouped by a writer thread
// (group commit), and a pool of read connections.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

#include "core/status.h"

namespace meridian::control {

// Runs writes in committed transactions. Grouped, a writer thread takes every
// write queued while the last batch committed (up to `max_batch`) into one
// transaction: one commit, one fsync, for many callers. Ungrouped (the
// baseline), each write is its own transaction. A batch that fails is run
// again write by write, so only the failing write reports the error.
//
// `run_batch` runs the writes it is given in one transaction on the store's
// write connection, and rolls the transaction back when one fails.
template <class Conn>
class GroupCommit {
 public:
  using WriteFn = std::function<Status(Conn&)>;
  using RunBatchFn = std::function<Status(const std::vector<WriteFn*>&)>;

  GroupCommit(bool grouped, int max_batch, RunBatchFn run_batch)
      : max_batch_(max_batch < 1 ? 1 : static_cast<size_t>(max_batch)),
        run_batch_(std::move(run_batch)) {
    if (grouped) writer_ = std::thread([this] { WriterLoop(); });
  }

  // Writes queued before this still commit.
  ~GroupCommit() {
    {
      std::lock_guard<std::mutex> l(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    if (writer_.joinable()) writer_.join();
  }

  GroupCommit(const GroupCommit&) = delete;
  GroupCommit& operator=(const GroupCommit&) = delete;

  // Runs `fn` in a committed transaction; its status, or the commit's.
  Status Write(WriteFn fn) {
    Op op{std::move(fn), {}};
    auto done = op.done.get_future();
    if (!writer_.joinable()) {
      std::lock_guard<std::mutex> l(direct_mu_);
      RunBatchOrEach({&op});
      return done.get();
    }
    {
      std::lock_guard<std::mutex> l(mu_);
      queue_.push_back(&op);
    }
    cv_.notify_one();
    return done.get();
  }

  // Runs `fn` (a Result<T> of the write connection) in a committed
  // transaction: its value once committed, else the error.
  template <class F>
  auto WriteValue(F fn) -> decltype(fn(std::declval<Conn&>())) {
    std::optional<decltype(fn(std::declval<Conn&>()))> out;
    Status st = Write([&](Conn& db) -> Status {
      out.emplace(fn(db));  // a batch run again write by write runs it again
      return out->ok() ? Status::Ok() : out->status();
    });
    if (!st.ok()) return st;
    return std::move(*out);
  }

 private:
  struct Op {
    WriteFn fn;
    std::promise<Status> done;
  };

  void WriterLoop() {
    std::vector<Op*> batch;
    for (;;) {
      {
        std::unique_lock<std::mutex> l(mu_);
        cv_.wait(l, [&] { return stop_ || !queue_.empty(); });
        if (queue_.empty() && stop_) return;
        while (!queue_.empty() && batch.size() < max_batch_) {
          batch.push_back(queue_.front());
          queue_.pop_front();
        }
      }
      RunBatchOrEach(batch);
      batch.clear();
    }
  }

  void RunBatchOrEach(const std::vector<Op*>& batch) {
    Status st = Run(batch);
    if (st.ok()) {
      for (Op* op : batch) op->done.set_value(Status::Ok());
      return;
    }
    if (batch.size() == 1) {
      batch[0]->done.set_value(st);
      return;
    }
    for (Op* op : batch) op->done.set_value(Run({op}));
  }

  Status Run(const std::vector<Op*>& batch) {
    std::vector<WriteFn*> fns;
    fns.reserve(batch.size());
    for (Op* op : batch) fns.push_back(&op->fn);
    return run_batch_(fns);
  }

  const size_t max_batch_;
  const RunBatchFn run_batch_;
  std::mutex direct_mu_;  // ungrouped: one write at a time

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Op*> queue_;
  bool stop_ = false;
  std::thread writer_;  // last: started once the rest is built
};

// Read connections, lent one at a time: Lease() waits for a free one, and the
// lease gives it back when it goes out of scope (after `on_return`, e.g. to
// end a read transaction so the next lease sees new commits).
template <class Conn>
class ReaderPool {
 public:
  explicit ReaderPool(std::function<void(Conn&)> on_return = nullptr)
      : on_return_(std::move(on_return)) {}

  void Add(std::unique_ptr<Conn> conn) {
    std::lock_guard<std::mutex> l(mu_);
    free_.push_back(std::move(conn));
    cv_.notify_one();
  }

  class Lease {
   public:
    Lease(ReaderPool* pool, std::unique_ptr<Conn> conn) : pool_(pool), conn_(std::move(conn)) {}
    Lease(Lease&& o) noexcept : pool_(o.pool_), conn_(std::move(o.conn_)) {}
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    ~Lease() {
      if (!conn_) return;
      if (pool_->on_return_) pool_->on_return_(*conn_);
      pool_->Add(std::move(conn_));
    }
    Conn* operator->() { return conn_.get(); }
    Conn& operator*() { return *conn_; }
    Conn* get() { return conn_.get(); }

   private:
    ReaderPool* pool_;
    std::unique_ptr<Conn> conn_;
  };

  Lease Take() {
    std::unique_lock<std::mutex> l(mu_);
    cv_.wait(l, [&] { return !free_.empty(); });
    auto conn = std::move(free_.back());
    free_.pop_back();
    return Lease(this, std::move(conn));
  }

 private:
  const std::function<void(Conn&)> on_return_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::unique_ptr<Conn>> free_;
};

}  // namespace meridian::control
