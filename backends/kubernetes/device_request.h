// The DRA device request for a placement's GPUs: which DeviceClass of
// NVIDIA's DRA driver (k8s-dra-driver-gpu) and which CEL selectors pick the
// catalog's GPU model or MIG profile out of the devices the driver publishes
// in its ResourceSlices.
//
// The driver publishes, under the attribute domain "gpu.nvidia.com"
// (cmd/gpu-kubelet-plugin/deviceinfo.go in NVIDIA/k8s-dra-driver-gpu):
//   whole GPUs (DeviceClass gpu.nvidia.com): type "gpu", uuid, productName,
//     brand, architecture, cudaComputeCapability, driverVersion,
//     cudaDriverVersion (versions), pcieBusID; capacity memory (bytes)
//   MIG devices (DeviceClass mig.nvidia.com): type "mig", profile
//     ("3g.40gb"), parentUUID, and the parent's productName, architecture,
//     driver versions; capacities memory, multiprocessors, engines
//
// A catalog model is matched by its product family and form factor as words
// of productName (the marketing names differ by form factor: "NVIDIA
// A100-SXM4-80GB", "NVIDIA A100 80GB PCIe"), and a whole GPU also by its
// memory capacity within 10% of the catalog's VRAM (A100-40GB vs A100-80GB).
// Pure functions.
#pragma once

#include <string>
#include <vector>

#include "catalog/catalog.h"
#include "core/job.h"
#include "core/status.h"

namespace meridian::backends::k8s {

inline constexpr char kNvidiaDomain[] = "gpu.nvidia.com";
inline constexpr char kGpuDeviceClass[] = "gpu.nvidia.com";
inline constexpr char kMigDeviceClass[] = "mig.nvidia.com";

struct DeviceRequest {
  std::string device_class;
  int count = 1;
  std::vector<std::string> selectors;  // CEL expressions; a device must pass all
};

// `count` whole GPUs of `model`, or (mig_profile non-empty) `count` MIG
// devices of that profile on GPUs of `model`; the driver pin, where the job
// states one, as exact versions. Errors (kInvalidArgument): a model the
// catalog lacks, a vendor other than NVIDIA, a profile the model lacks.
Result<DeviceRequest> DeviceRequestFor(const catalog::Catalog& catalog, const std::string& model,
                                       const std::string& mig_profile, int count,
                                       const DriverPin& driver);

// Exactly the MIG devices of these UUIDs ("MIG-..."), for an attempt the
// scheduler gave named instances.
DeviceRequest DeviceRequestForMigUuids(const std::vector<std::string>& uuids);

}  // namespace meridian::backends::k8s
