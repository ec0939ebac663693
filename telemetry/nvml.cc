#include "telemetry/nvml.h"

#include <dlfcn.h>

#include <algorithm>

namespace meridian::telemetry {

namespace {

// The NVML ABI as nvml.h (CUDA 12) declares it: only the types and calls used.
using nvmlReturn_t = int;
using nvmlDevice_t = struct nvmlDevice_st*;
constexpr nvmlReturn_t kNvmlSuccess = 0;
constexpr unsigned kClockSm = 1, kClockMem = 2;
constexpr unsigned kMigEnabled = 1;
struct nvmlUtilization_t {
  unsigned gpu, memory;
};
struct nvmlMemory_t {
  unsigned long long total, free, used;
};
struct nvmlProcessInfo_t {  // _v2/_v3 layout
  unsigned pid;
  unsigned long long usedGpuMemory;
  unsigned gpuInstanceId, computeInstanceId;
};
struct nvmlProcessUtilizationSample_t {
  unsigned pid;
  unsigned long long timeStamp;
  unsigned smUtil, memUtil, encUtil, decUtil;
};
constexpr unsigned long long kNotAvailable = ~0ull;

}  // namespace

struct Nvml::Api {
  nvmlReturn_t (*init)();
  nvmlReturn_t (*shutdown)();
  nvmlReturn_t (*count)(unsigned*);
  nvmlReturn_t (*handle_by_index)(unsigned, nvmlDevice_t*);
  nvmlReturn_t (*uuid)(nvmlDevice_t, char*, unsigned);
  nvmlReturn_t (*utilization)(nvmlDevice_t, nvmlUtilization_t*);
  nvmlReturn_t (*memory)(nvmlDevice_t, nvmlMemory_t*);
  nvmlReturn_t (*power)(nvmlDevice_t, unsigned*);  // milliwatts
  nvmlReturn_t (*clock)(nvmlDevice_t, unsigned, unsigned*);
  // Optional: absent from old drivers.
  nvmlReturn_t (*mig_mode)(nvmlDevice_t, unsigned*, unsigned*) = nullptr;
  nvmlReturn_t (*max_mig)(nvmlDevice_t, unsigned*) = nullptr;
  nvmlReturn_t (*mig_by_index)(nvmlDevice_t, unsigned, nvmlDevice_t*) = nullptr;
  nvmlReturn_t (*gi_id)(nvmlDevice_t, unsigned*) = nullptr;
  nvmlReturn_t (*processes)(nvmlDevice_t, unsigned*, nvmlProcessInfo_t*) = nullptr;
  nvmlReturn_t (*process_util)(nvmlDevice_t, nvmlProcessUtilizationSample_t*, unsigned*,
                               unsigned long long) = nullptr;
};

namespace {

template <typename F>
bool Resolve(void* lib, const char* name, F* fn) {
  *fn = reinterpret_cast<F>(dlsym(lib, name));
  return *fn != nullptr;
}

void FillDevice(const Nvml::Api& a, nvmlDevice_t d, GpuReading* r) {
  char uuid[96] = {0};
  if (a.uuid(d, uuid, sizeof uuid) == kNvmlSuccess) r->uuid = uuid;
  nvmlUtilization_t u{};
  if (a.utilization(d, &u) == kNvmlSuccess) {
    r->sm_util_pct = u.gpu;
    r->mem_bw_util_pct = u.memory;
  }
  nvmlMemory_t m{};
  if (a.memory(d, &m) == kNvmlSuccess) {
    r->mem_used_mib = static_cast<double>(m.used) / (1 << 20);
    r->mem_total_mib = static_cast<double>(m.total) / (1 << 20);
  }
  unsigned v = 0;
  if (a.power(d, &v) == kNvmlSuccess) r->power_w = v / 1000.0;
  if (a.clock(d, kClockSm, &v) == kNvmlSuccess) r->sm_clock_mhz = v;
  if (a.clock(d, kClockMem, &v) == kNvmlSuccess) r->mem_clock_mhz = v;
}

// The job's processes' memory on `d` and (on whole GPUs) their SM share.
void FillProcesses(const Nvml::Api& a, nvmlDevice_t d, const std::vector<pid_t>& pids,
                   GpuReading* r) {
  if (pids.empty()) return;
  auto mine = [&](unsigned pid) {
    return std::find(pids.begin(), pids.end(), static_cast<pid_t>(pid)) != pids.end();
  };
  if (a.processes != nullptr) {
    nvmlProcessInfo_t info[64];
    unsigned n = 64;
    if (a.processes(d, &n, info) == kNvmlSuccess) {
      double mib = 0;
      for (unsigned i = 0; i < n; ++i) {
        if (mine(info[i].pid) && info[i].usedGpuMemory != kNotAvailable) {
          mib += static_cast<double>(info[i].usedGpuMemory) / (1 << 20);
        }
      }
      r->job_mem_used_mib = mib;
    }
  }
  if (a.process_util != nullptr && r->mig_gi < 0) {
    nvmlProcessUtilizationSample_t s[64];
    unsigned n = 64;
    if (a.process_util(d, s, &n, 0) == kNvmlSuccess) {
      double sm = 0;
      for (unsigned i = 0; i < n; ++i) {
        if (mine(s[i].pid)) sm += s[i].smUtil;
      }
      r->job_sm_util_pct = std::min(100.0, sm);
    }
  }
}

}  // namespace

Result<std::unique_ptr<Nvml>> Nvml::Load(const std::string& library) {
  void* lib = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    const char* e = dlerror();
    return Status::NotFound("NVML: cannot load " + library + " (" + (e ? e : "no reason") +
                            "): no NVIDIA driver here; GPU figures are not sampled");
  }
  auto api = std::make_unique<Api>();
  const char* missing = nullptr;
  auto need = [&](const char* name, auto* fn) {
    if (!missing && !Resolve(lib, name, fn)) missing = name;
  };
  need("nvmlInit_v2", &api->init);
  need("nvmlShutdown", &api->shutdown);
  need("nvmlDeviceGetCount_v2", &api->count);
  need("nvmlDeviceGetHandleByIndex_v2", &api->handle_by_index);
  need("nvmlDeviceGetUUID", &api->uuid);
  need("nvmlDeviceGetUtilizationRates", &api->utilization);
  need("nvmlDeviceGetMemoryInfo", &api->memory);
  need("nvmlDeviceGetPowerUsage", &api->power);
  need("nvmlDeviceGetClockInfo", &api->clock);
  if (missing) {
    dlclose(lib);
    return Status::NotFound(std::string("NVML: ") + library + " lacks " + missing +
                            "; GPU figures are not sampled");
  }
  (void)Resolve(lib, "nvmlDeviceGetMigMode", &api->mig_mode);
  (void)Resolve(lib, "nvmlDeviceGetMaxMigDeviceCount", &api->max_mig);
  (void)Resolve(lib, "nvmlDeviceGetMigDeviceHandleByIndex", &api->mig_by_index);
  (void)Resolve(lib, "nvmlDeviceGetGpuInstanceId", &api->gi_id);
  if (!Resolve(lib, "nvmlDeviceGetComputeRunningProcesses_v3", &api->processes)) {
    (void)Resolve(lib, "nvmlDeviceGetComputeRunningProcesses_v2", &api->processes);
  }
  (void)Resolve(lib, "nvmlDeviceGetProcessUtilization", &api->process_util);
  if (nvmlReturn_t rc = api->init(); rc != kNvmlSuccess) {
    dlclose(lib);
    return Status::NotFound("NVML: nvmlInit failed (error " + std::to_string(rc) +
                            "); GPU figures are not sampled");
  }
  std::unique_ptr<Nvml> n(new Nvml());
  n->handle_ = lib;
  n->api_ = std::move(api);
  return n;
}

Nvml::~Nvml() {
  if (api_) api_->shutdown();
  if (handle_) dlclose(handle_);
}

int Nvml::device_count() const {
  unsigned n = 0;
  return api_->count(&n) == kNvmlSuccess ? static_cast<int>(n) : 0;
}

std::vector<GpuReading> Nvml::Read(const std::vector<pid_t>& job_pids) const {
  std::vector<GpuReading> out;
  const Api& a = *api_;
  const int count = device_count();
  for (int i = 0; i < count; ++i) {
    nvmlDevice_t d = nullptr;
    if (a.handle_by_index(static_cast<unsigned>(i), &d) != kNvmlSuccess) continue;
    GpuReading r;
    r.index = i;
    FillDevice(a, d, &r);
    FillProcesses(a, d, job_pids, &r);
    out.push_back(r);
    unsigned current = 0, pending = 0, max = 0;
    if (!a.mig_mode || !a.max_mig || !a.mig_by_index) continue;
    if (a.mig_mode(d, &current, &pending) != kNvmlSuccess || current != kMigEnabled) continue;
    if (a.max_mig(d, &max) != kNvmlSuccess) continue;
    for (unsigned m = 0; m < max; ++m) {
      nvmlDevice_t md = nullptr;
      if (a.mig_by_index(d, m, &md) != kNvmlSuccess) continue;  // an empty slot
      GpuReading mr;
      mr.index = i;
      unsigned gi = 0;
      mr.mig_gi = a.gi_id && a.gi_id(md, &gi) == kNvmlSuccess ? static_cast<int>(gi)
                                                              : static_cast<int>(m);
      FillDevice(a, md, &mr);
      FillProcesses(a, md, job_pids, &mr);
      out.push_back(mr);
    }
  }
  return out;
}

}  // namespace meridian::telemetry
