#include "core/units.h"

#include <cstdio>

namespace meridian {

std::string Money::ToString() const {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.2f", dollars());
  return buf;
}

}  // namespace meridian
