// What a run costs and emits: the one formula `simulate` charges every run
// attempt by (sim/engine.cc) and `report savings` prices the recorded
// history by (sim/savings.h), so both read hours, prices and carbon alike. A
// fleet run's hourly rate is sched::FleetHourRate, the rate the price
// plugins weigh and `serve` bills.
#pragma once

#include <cstdint>

#include "core/ids.h"
#include "core/units.h"
#include "core/time.h"
#include "sim/hourly_carbon.h"

namespace meridian::catalog {
struct GpuModel;
}  // namespace meridian::catalog

namespace meridian::sched {
struct Cluster;
}  // namespace meridian::sched

namespace meridian::sim {

// The draw of `gpu_milli` thousandths of `gpu` (nullptr: a CPU node, 0 W).
double GpuWatts(const catalog::GpuModel* gpu, int64_t gpu_milli);

// Micro-dollars of a run at `rate` per hour over [a, b); 0 when b <= a.
int64_t RunCostMicros(Money rate, UnixSeconds a, UnixSeconds b);

// Grams of CO2 of a run drawing `watts` in region `r` over [a, b), on the
// market's hourly grid intensity.
int64_t RunCo2Grams(double watts, HourlyCarbon& carbon, RegionId r, UnixSeconds a, UnixSeconds b);

}  // namespace meridian::sim
