// The body of POST /v1/nodes, decoded: a node registered through the API
// (docs/api.md, "Nodes"). Pure: no store, no clock.
#pragma once

#include <string_view>

#include "catalog/catalog.h"
#include "control/store.h"
#include "core/status.h"

namespace meridian::control {

// The node a registration body describes: {"name", "gpu_model", "gpus",
// "vcpus", "ram_gib"}, JSON, UTF-8. The result is ready, registered, its
// heartbeat not set. Errors (kInvalidArgument) read like a submission's:
// "request: gpus: 17 is more than 16 per node", the field second
// (FieldOfMessage finds it).
Result<NodeRow> DecodeNodeRegistration(std::string_view body, const catalog::Catalog& catalog);

}  // namespace meridian::control
