// deadline_urgency (QueueSort, after fair share): the job whose latest start
// comes first goes first. Latest start = deadline - run hours on the fastest
// allowed model that fits (QueuedJob::demands; none fits: the deadline itself).
// Jobs without a deadline go after every job with one, and tie among
// themselves (falling to submission order).
//
// Arguments:
//   step: 0   latest starts are compared in steps of this duration ("15m");
//             0 compares them to the second
#pragma once

#include <optional>

#include "sched/plugin.h"
#include "sched/plugin_args.h"

namespace meridian::sched {

class DeadlineUrgency final : public Plugin, public QueueSortPlugin {
 public:
  static constexpr std::string_view kName = "deadline_urgency";
  static Result<std::unique_ptr<Plugin>> Create(PluginArgs& args);
  explicit DeadlineUrgency(int64_t step_s) : step_s_(step_s) {}

  std::string_view name() const override { return kName; }
  std::weak_ordering Compare(const Snapshot& snap, const QueuedJob& a,
                             const QueuedJob& b) const override;

  // The stepped latest start; a job without a deadline after every one.
  bool HasSortKey() const override { return true; }
  double SortKey(const Snapshot& snap, const QueuedJob& job) const override;
  bool SortKeyIsStatic() const override { return true; }  // from the deadline and run hours

  // deadline - fastest run; nullopt without a deadline.
  static std::optional<UnixSeconds> LatestStart(const QueuedJob& job);

 private:
  int64_t step_s_;
};

}  // namespace meridian::sched
