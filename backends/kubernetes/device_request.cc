#include "backends/kubernetes/device_request.h"

#include <cmath>
#include <set>

namespace meridian::backends::k8s {

namespace {

std::string Attr(const std::string& name) {
  return std::string("device.attributes[\"") + kNvidiaDomain + "\"]." + name;
}

// RE2 (CEL's matches()): `word` as a whole word of the product name, in any
// case, where words are separated by spaces or '-'.
std::string WordSelector(const std::string& word, bool present) {
  std::string e = Attr("productName") + ".matches(\"(?i)(^|[ -])" + word + "([ -]|$)\")";
  return present ? e : "!" + e;
}

// "H100-PCIE-80GB" -> family "H100", form "PCIE"; "A100-80GB" -> "A100", "".
struct ModelWords {
  std::string family;
  std::string form;
};

ModelWords WordsOf(const std::string& name) {
  ModelWords w;
  size_t dash = name.find('-');
  w.family = name.substr(0, dash);
  if (dash == std::string::npos) return w;
  std::string rest = name.substr(dash + 1);
  size_t last = rest.rfind('-');
  std::string tail = last == std::string::npos ? rest : rest.substr(last + 1);
  bool memory = tail.size() > 2 && tail.ends_with("GB");
  if (last != std::string::npos) {
    w.form = rest.substr(0, last);
  } else if (!memory) {
    w.form = rest;
  }
  return w;
}

// Forms other catalog models of the same family carry ("PCIE", "NVL"): a
// model without a form (the SXM part) must not match those.
std::set<std::string> SiblingForms(const catalog::Catalog& catalog, const ModelWords& w) {
  std::set<std::string> forms;
  for (const catalog::GpuModel& g : catalog.gpus()) {
    ModelWords o = WordsOf(g.name);
    if (o.family == w.family && !o.form.empty() && o.form != w.form) forms.insert(o.form);
  }
  return forms;
}

std::string MemorySelectors(double vram_gib) {
  const int64_t mib = std::llround(vram_gib * 1024);
  const int64_t lo = mib * 9 / 10, hi = mib * 11 / 10;
  const std::string mem = std::string("device.capacity[\"") + kNvidiaDomain + "\"].memory";
  return mem + ".compareTo(quantity(\"" + std::to_string(lo) + "Mi\")) >= 0 && " + mem +
         ".compareTo(quantity(\"" + std::to_string(hi) + "Mi\")) <= 0";
}

// "12.4" -> "12.4.0": the driver publishes versions as semantic versions.
std::string Semver(const std::string& dotted) {
  int dots = 0;
  for (char c : dotted) dots += c == '.';
  std::string v = dotted;
  for (; dots < 2; ++dots) v += ".0";
  return v;
}

}  // namespace

Result<DeviceRequest> DeviceRequestFor(const catalog::Catalog& catalog, const std::string& model,
                                       const std::string& mig_profile, int count,
                                       const DriverPin& driver) {
  const catalog::GpuModel* gpu = catalog.FindGpu(model);
  if (gpu == nullptr) return Status::Invalid("GPU model \"" + model + "\" is not in the catalog");
  if (gpu->vendor != "nvidia") {
    return Status::Invalid("GPU model \"" + model + "\" is a " + gpu->vendor +
                           " GPU; the kubernetes backend selects devices of NVIDIA's DRA driver "
                           "only");
  }
  if (count < 1) return Status::Invalid("device count " + std::to_string(count) + " is below 1");
  DeviceRequest r;
  r.count = count;
  ModelWords words = WordsOf(model);
  if (mig_profile.empty()) {
    r.device_class = kGpuDeviceClass;
  } else {
    bool known = false;
    for (const auto& p : gpu->mig_profiles) known = known || p.name == mig_profile;
    if (!known) {
      return Status::Invalid("MIG profile \"" + mig_profile + "\" is not a profile of " + model);
    }
    r.device_class = kMigDeviceClass;
    r.selectors.push_back(Attr("profile") + " == \"" + mig_profile + "\"");
  }
  r.selectors.push_back(WordSelector(words.family, true));
  if (!words.form.empty()) r.selectors.push_back(WordSelector(words.form, true));
  for (const std::string& f : SiblingForms(catalog, words)) {
    r.selectors.push_back(WordSelector(f, false));
  }
  // A MIG device's memory capacity is the instance's, not the GPU's.
  if (mig_profile.empty()) r.selectors.push_back(MemorySelectors(gpu->vram_gib));
  if (!driver.version.empty()) {
    r.selectors.push_back(Attr("driverVersion") + ".compareTo(semver(\"" +
                          Semver(driver.version) + "\")) == 0");
  }
  if (!driver.cuda.empty()) {
    r.selectors.push_back(Attr("cudaDriverVersion") + ".compareTo(semver(\"" +
                          Semver(driver.cuda) + "\")) == 0");
  }
  return r;
}

DeviceRequest DeviceRequestForMigUuids(const std::vector<std::string>& uuids) {
  DeviceRequest r;
  r.device_class = kMigDeviceClass;
  r.count = static_cast<int>(uuids.size());
  std::string list;
  for (const std::string& u : uuids) list += (list.empty() ? "\"" : ", \"") + u + "\"";
  r.selectors.push_back(Attr("uuid") + " in [" + list + "]");
  return r;
}

}  // namespace meridian::backends::k8s
