#include "sim/cpu_model.h"

#include <algorithm>
#include <cmath>

namespace meridian::sim {

double CpuTimeFactor(const CpuProfile& p, double share, double vcpus) {
  if (!p.set() || share <= 0) return 1.0;
  const double f = std::clamp(p.input_bound_fraction, 0.0, 0.99);
  const double k = std::clamp(p.cpu_sensitivity < 0 ? 0.0 : p.cpu_sensitivity, 0.0, 1.0);
  const double c = std::max(vcpus, 0.25);
  const double loader = (1.0 - k) + k * share / c;
  return std::max(1.0 - f, loader);
}

int SensitiveVcpus(const CpuProfile& p, double share, double cap) {
  const double most = std::max(1.0, std::floor(cap * share));
  const double f = std::clamp(p.input_bound_fraction, 0.0, 0.99);
  const double k = std::clamp(p.cpu_sensitivity < 0 ? 0.0 : p.cpu_sensitivity, 0.0, 1.0);
  if (k <= f) return static_cast<int>(k == 0 ? 1.0 : most);  // cores never catch up: all it may have
  // (1 - k) + k x share / c = 1 - f  =>  c = k x share / (k - f)
  const double c = std::ceil(k * share / (k - f) - 1e-9);
  return static_cast<int>(std::clamp(c, 1.0, most));
}

}  // namespace meridian::sim
