// The embedded catalog and a two-GPU launch request, shared by the
// Kubernetes backend's tests.
#pragma once

#include <memory>

#include "catalog/catalog.h"
#include "control/backend.h"

namespace meridian::backends::k8s::test_support {

inline std::shared_ptr<const catalog::Catalog> Cat() {
  static auto c = catalog::Catalog::LoadEmbedded().value();
  return c;
}

// Attempt 2 of j-00000042: python3 train.py on GPUs 0 and 1 of node k8s-0.
inline control::LaunchRequest Request() {
  control::LaunchRequest r;
  r.job_id = "j-00000042";
  r.attempt = 2;
  r.tenant = "research";
  r.argv = {"python3", "train.py"};
  r.gpus = {0, 1};
  r.node = "k8s-0";
  return r;
}

}  // namespace meridian::backends::k8s::test_support
