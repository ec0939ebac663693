#include "control/dashboard.h"

namespace meridian::control {

const WebAsset* FindWebAsset(std::string_view path) {
  if (path == "/") path = "/index.html";
  for (const WebAsset& a : WebAssets()) {
    if (a.path == path) return &a;
  }
  return nullptr;
}

}  // namespace meridian::control
