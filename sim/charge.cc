#include "sim/charge.h"

#include <cmath>

#include "catalog/catalog.h"
#include "sched/fleet.h"

namespace meridian::sim {

double GpuWatts(const catalog::GpuModel* gpu, int64_t gpu_milli) {
  return gpu ? gpu->power_w * static_cast<double>(gpu_milli) / 1000.0 : 0;
}

int64_t RunCostMicros(Money rate, UnixSeconds a, UnixSeconds b) {
  if (b <= a) return 0;
  return rate.Times(static_cast<double>(b - a) / 3600.0).micros();
}

int64_t RunCo2Grams(double watts, HourlyCarbon& carbon, RegionId r, UnixSeconds a, UnixSeconds b) {
  if (b <= a) return 0;
  return std::llround(watts / 1000.0 * carbon.GramHoursPerKwh(r, a, b));
}

}  // namespace meridian::sim
