#include "sched/plugins/migrate.h"

#include <limits>

#include "estimate/defaults.h"
#include "estimate/pricing.h"
#include "sched/registry.h"

namespace meridian::sched {

namespace {

using estimate::Fixed;

std::string Usd(Money m) { return "$" + m.ToString(); }
std::string Kg(int64_t grams) { return Fixed(static_cast<double>(grams) / 1000.0, 1) + " kg CO2"; }

// How much worse `there` is than `stay`, as a fraction of `stay` (negative:
// better); any rise over nothing is infinitely worse.
double WorseBy(double there, double stay) {
  if (stay > 0) return there / stay - 1;
  return there > stay ? std::numeric_limits<double>::infinity() : 0;
}

std::string Percent(double fraction) { return Fixed(fraction * 100, 1) + "%"; }

}  // namespace

Result<std::unique_ptr<Plugin>> Migrate::Create(PluginArgs& args) {
  Options o;
  o.min_saving = args.Dollars("min_saving_usd", o.min_saving);
  o.min_relative_saving = args.Number("min_relative_saving", o.min_relative_saving, 0, 1);
  o.hysteresis = args.Number("hysteresis", o.hysteresis, 0, 10);
  o.min_checkpoints_between = static_cast<int>(
      args.Integer("min_checkpoints_between", o.min_checkpoints_between, 0, 1000));
  o.usd_per_kg_co2 = args.Number("usd_per_kg_co2", o.usd_per_kg_co2, 0, 100);
  o.transfer_gbit_s = args.Number("transfer_gbit_s", o.transfer_gbit_s, 0.001, 100000);
  o.max_wait_s = args.Duration("max_wait", o.max_wait_s);
  o.max_worse = args.Number("max_worse", o.max_worse, 0, 100);
  return FinishPlugin<Migrate>(args, o);
}

Money Migrate::CarbonUsd(int64_t grams) const {
  return Money::FromDollars(static_cast<double>(grams) / 1000.0 * options_.usd_per_kg_co2);
}

std::optional<std::string> Migrate::Hold(const RunningJob& r, UnixSeconds now) const {
  if (!r.job->preemptible) return "not preemptible: it is never stopped to move";
  if (!r.last_move) return std::nullopt;
  const int64_t interval_s = estimate::CheckpointOf(r.job->spec->checkpoint).interval_s;
  const int64_t quiet_s = interval_s * options_.min_checkpoints_between;
  if (now - *r.last_move >= quiet_s) return std::nullopt;
  return "moved at " + FormatRfc3339(*r.last_move) + "; no move again within " +
         std::to_string(options_.min_checkpoints_between) + " checkpoints (" +
         std::to_string(quiet_s / 60) + " min, min_checkpoints_between)";
}

Migrate::Tally Migrate::TallyOf(const MoveQuote& q) const {
  const bool carbon = q.stay.grams_known && q.move.grams_known;
  Tally t;
  t.stay = q.stay.usd + (carbon ? CarbonUsd(q.stay.grams) : Money());
  t.there = q.move.usd + (carbon ? CarbonUsd(q.move.grams) : Money());
  t.move_cost = q.costs.egress_usd + q.costs.overhead_usd +
                (carbon ? CarbonUsd(q.costs.overhead_grams) : Money());
  return t;
}

std::string Migrate::Refusal(const MoveQuote& q, const Tally& t) const {
  if (q.deadline) {
    const UnixSeconds latest = *q.deadline - q.deadline_margin_s;
    if (q.move.finish > latest && q.move.finish > q.stay.finish) {
      return "it would finish at " + FormatRfc3339(q.move.finish) + ", less than " +
             std::to_string(q.deadline_margin_s / 60) +
             " min (one reclaim's loss) before the deadline " + FormatRfc3339(*q.deadline) +
             "; staying finishes at " + FormatRfc3339(q.stay.finish);
    }
  }
  if (q.costs.wait_hours * 3600.0 > static_cast<double>(options_.max_wait_s)) {
    return "the new place starts in " + Fixed(q.costs.wait_hours * 60, 0) +
           " min, beyond max_wait (" + std::to_string(options_.max_wait_s / 60) + " min)";
  }
  const Money bar = t.move_cost.Times(1 + options_.hysteresis);
  if (t.gross() <= bar) {
    return "it saves " + Usd(t.gross()) + ", not more than the move's cost " + Usd(t.move_cost) +
           " x (1 + hysteresis " + Fixed(options_.hysteresis, 2) + ") = " + Usd(bar);
  }
  if (t.net() < options_.min_saving) {
    return "it saves " + Usd(t.net()) + " net, below min_saving_usd " + Usd(options_.min_saving);
  }
  const Money relative = t.stay.Times(options_.min_relative_saving);
  if (t.net() < relative) {
    return "it saves " + Usd(t.net()) + " net of staying's " + Usd(t.stay) +
           ", below min_relative_saving " + Fixed(options_.min_relative_saving * 100, 1) +
           "% (" + Usd(relative) + ")";
  }
  return WorseRefusal(q);
}

std::string Migrate::WorseRefusal(const MoveQuote& q) const {
  const Money usd_there = q.move.usd + q.costs.egress_usd + q.costs.overhead_usd;
  const double usd_worse = WorseBy(usd_there.dollars(), q.stay.usd.dollars());
  if (usd_worse > options_.max_worse) {
    return "it would cost " + Usd(usd_there) + " with the move against staying's " +
           Usd(q.stay.usd) + ", " + Percent(usd_worse) + " more, beyond max_worse " +
           Percent(options_.max_worse);
  }
  if (!q.stay.grams_known || !q.move.grams_known) return "";
  const int64_t grams_there = q.move.grams + q.costs.overhead_grams;
  const double co2_worse =
      WorseBy(static_cast<double>(grams_there), static_cast<double>(q.stay.grams));
  if (co2_worse > options_.max_worse) {
    return "it would emit " + Kg(grams_there) + " with the move against staying's " +
           Kg(q.stay.grams) + ", " + Percent(co2_worse) + " more, beyond max_worse " +
           Percent(options_.max_worse);
  }
  return "";
}

MoveDecision Migrate::Judge(const MoveQuote& q) const {
  MoveDecision d;
  d.quote = q;
  const Tally t = TallyOf(q);
  const std::string why_not = Refusal(q, t);
  const std::string carbon =
      q.stay.grams_known && q.move.grams_known
          ? " at " + Fixed(options_.usd_per_kg_co2, 2) + " $/kg CO2"
          : " (carbon not weighed: no figure for one of the places)";
  if (!why_not.empty()) {
    d.verdict = MoveVerdict::kStay;
    d.reason = "stays on " + q.from + " " + AskedWhen(q.checkpoint, q.occasion) +
               " rather than move to " + q.to + ": " + why_not + carbon;
    return d;
  }
  d.verdict = MoveVerdict::kMove;
  // Grams only where both places have a figure (a CPU node has none).
  const bool grams = q.stay.grams_known && q.move.grams_known;
  d.reason = "moves from " + q.from + " to " + q.to + " " + AskedWhen(q.checkpoint, q.occasion) +
             ": saves " + Usd(q.stay.usd - q.move.usd) +
             (grams ? " and " + Kg(q.stay.grams - q.move.grams) : "") + ", costs " +
             Usd(q.costs.egress_usd) +
             " egress and " + Fixed(q.costs.overhead_hours() * 60, 0) + " min restart (" +
             Usd(q.costs.overhead_usd) + "): " + Usd(t.net()) + " net" + carbon;
  return d;
}

}  // namespace meridian::sched
