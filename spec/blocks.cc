#include "spec/blocks.h"

#include <cctype>
#include <optional>
#include <vector>

#include "core/enums.h"
#include "core/time.h"

namespace meridian::spec {

namespace {

std::vector<std::string> PrecisionNames() {
  std::vector<std::string> names;
  for (Precision p : AllPrecisions()) names.emplace_back(ToString(p));
  return names;
}

bool LooksLikeTime(const std::string& s) {
  return s.size() >= 10 && std::isdigit(static_cast<unsigned char>(s[0])) && s[4] == '-' &&
         s[7] == '-';
}

}  // namespace

void ReadModel(SpecReader& r, const YAML::Node& node, const std::string& path, ModelShape& out) {
  static const std::vector<std::string> kKeys = {
      "params_b", "precision", "layers", "hidden",      "heads",        "kv_heads",
      "seq_len",  "micro_batch", "batch", "output_tokens"};
  ForEachKey(r, node, path, kKeys, [&](const std::string& key, const YAML::Node& v,
                                       const std::string& p) {
    if (key == "params_b") {
      out.params_b = r.Number(v, p, {0, true});
    } else if (key == "precision") {
      std::optional<std::string> s = r.String(v, p);
      if (!s) return;
      out.precision = ParsePrecision(*s);
      if (!out.precision) {
        r.Error(v, p, SpecReader::Show(v) + " is not a precision; use " +
                          JoinAlternatives(PrecisionNames()));
      }
    } else {
      std::optional<int> n = r.WholeNumber(v, p, 1);
      if (key == "layers") out.layers = n;
      if (key == "hidden") out.hidden = n;
      if (key == "heads") out.heads = n;
      if (key == "kv_heads") out.kv_heads = n;
      if (key == "seq_len") out.seq_len = n;
      if (key == "micro_batch") out.micro_batch = n;
      if (key == "batch") out.batch = n;
      if (key == "output_tokens") out.output_tokens = n;
    }
  });
  if (out.heads && out.kv_heads && *out.kv_heads > *out.heads) {
    r.Error(node, JoinPath(path, "kv_heads"),
            "\"" + std::to_string(*out.kv_heads) + "\" must be <= heads (" +
                std::to_string(*out.heads) + ")");
  }
}

void ReadWork(SpecReader& r, const YAML::Node& node, const std::string& path, Work& out) {
  static const std::vector<std::string> kKeys = {
      "tokens", "flops", "gpu_hours", "on", "duration", "arithmetic_intensity",
      "global_batch_tokens"};
  std::vector<std::string> forms;
  bool has_on = false;
  bool has_intensity = false;
  bool has_batch = false;
  bool is_map = ForEachKey(r, node, path, kKeys, [&](const std::string& key,
                                                     const YAML::Node& v, const std::string& p) {
    if (key == "arithmetic_intensity") {
      has_intensity = true;
      out.arithmetic_intensity = r.Number(v, p, {0, true});
      return;
    }
    if (key == "global_batch_tokens") {
      has_batch = true;
      out.global_batch_tokens = r.Number(v, p, {0, true});
      return;
    }
    if (key == "on") {
      has_on = true;
      if (std::optional<std::string> s = r.String(v, p)) out.on_gpu = *s;
      return;
    }
    forms.push_back(key);
    if (key == "duration") {
      out.duration_s = r.Duration(v, p, false);
      return;
    }
    std::optional<double> n = r.Number(v, p, {0, true});
    if (!n) return;
    if (key == "tokens") out.form = Work::Form::kTokens, out.tokens = *n;
    if (key == "flops") out.form = Work::Form::kFlops, out.flops = *n;
    if (key == "gpu_hours") out.form = Work::Form::kGpuHours, out.gpu_hours = *n;
  });
  if (!is_map) return;
  const std::string kForms = "give exactly one of tokens, flops, gpu_hours (with on) or duration";
  if (forms.empty()) {
    r.Error(node, path, "states no amount of work; " + kForms + ", or leave work out");
  } else if (forms.size() > 1) {
    std::string both;
    for (size_t i = 0; i < forms.size(); ++i) {
      both += (i == 0 ? "" : i + 1 == forms.size() ? " and " : ", ") + forms[i];
    }
    r.Error(node, path, "gives " + both + " at once; " + kForms);
  }
  bool gpu_hours = !forms.empty() && forms.size() == 1 && forms[0] == "gpu_hours";
  if (gpu_hours && !has_on) {
    r.Error(node, JoinPath(path, "on"),
            "is required with gpu_hours: the GPU model the hours were measured on");
  }
  if (has_on && forms.size() == 1 && !gpu_hours) {
    r.Error(node, JoinPath(path, "on"), "belongs only with gpu_hours, not with " + forms[0]);
  }
  if (has_intensity && forms.size() == 1 && forms[0] != "flops") {
    r.Error(node, JoinPath(path, "arithmetic_intensity"),
            "belongs only with flops, not with " + forms[0] +
                " (the roofline divides the stated FLOPs by it to count the bytes)");
  }
  if (has_batch && forms.size() == 1 && forms[0] == "duration") {
    const YAML::Node value = node["global_batch_tokens"];
    r.Error(value, JoinPath(path, "global_batch_tokens"),
            SpecReader::Show(value) +
                " belongs only with tokens, flops or gpu_hours, not with duration (a run of "
                "stated length takes no optimizer steps to size)");
  }
}

void ReadResources(SpecReader& r, const YAML::Node& node, const std::string& path,
                   Resources& out) {
  static const std::vector<std::string> kKeys = {"gpus",  "gpu_models", "vram_gib",    "vcpus",
                                                 "ram_gib", "mig",      "cpu_fallback"};
  ForEachKey(r, node, path, kKeys, [&](const std::string& key, const YAML::Node& v,
                                       const std::string& p) {
    if (key == "gpus") {
      r.Mark(v, p);
      if (v.IsScalar() && v.Scalar() == "auto") return;
      const std::string& t = v.IsScalar() ? v.Scalar() : "";
      bool digits = !t.empty() && t.size() < 7;
      for (char c : t) digits = digits && std::isdigit(static_cast<unsigned char>(c));
      if (!digits) {
        r.Error(v, p, SpecReader::Show(v) + " must be \"auto\" or a whole number >= 0");
        return;
      }
      out.gpus = std::stoi(t);
    } else if (key == "gpu_models") {
      out.gpu_models = r.StringList(v, p, "[H100-80GB, A100-80GB]");
    } else if (key == "vram_gib") {
      out.vram_gib = r.Number(v, p, {0, true});
    } else if (key == "vcpus") {
      out.vcpus = r.WholeNumber(v, p, 1);
    } else if (key == "ram_gib") {
      out.ram_gib = r.Number(v, p, {0, true});
    } else if (key == "mig") {
      out.mig = r.Bool(v, p).value_or(false);
    } else if (key == "cpu_fallback") {
      static const std::vector<std::string> kFallbackKeys = {"slowdown"};
      CpuFallback fallback;
      bool has_slowdown = false;
      bool is_map = ForEachKey(r, v, p, kFallbackKeys, [&](const std::string&,
                                                           const YAML::Node& s,
                                                           const std::string& sp) {
        has_slowdown = true;
        fallback.slowdown = r.Number(s, sp, {0, true}).value_or(0);
      });
      if (is_map && !has_slowdown) {
        r.Error(v, JoinPath(p, "slowdown"),
                "is required: how many times slower the job runs on CPU than on one GPU");
      }
      if (fallback.slowdown > 0) out.cpu_fallback = fallback;
    }
  });
}

void ReadDeadline(SpecReader& r, const YAML::Node& node, const std::string& path, Deadline& out) {
  r.Mark(node, path);
  if (!node.IsScalar()) {
    r.Error(node, path,
            SpecReader::Show(node) +
                " where a duration (72h) or an RFC 3339 time (2026-03-01T09:00:00Z) belongs");
    return;
  }
  const std::string& text = node.Scalar();
  if (LooksLikeTime(text)) {
    Result<UnixSeconds> at = ParseRfc3339(text);
    if (!at.ok()) {
      r.Error(node, path, at.status().message());
      return;
    }
    out.at = *at;
    return;
  }
  Result<int64_t> d = ParseDuration(text);
  if (!d.ok()) {
    r.Error(node, path,
            d.status().message() + "; a deadline is a duration from submission (72h) or an "
                                   "RFC 3339 time (2026-03-01T09:00:00Z)");
    return;
  }
  if (*d == 0) {
    r.Error(node, path, SpecReader::Show(node) + " must be longer than zero");
    return;
  }
  out.after_submit_s = *d;
}

void ReadCheckpoint(SpecReader& r, const YAML::Node& node, const std::string& path,
                    Checkpoint& out) {
  static const std::vector<std::string> kKeys = {"interval", "restart_overhead", "size_gb"};
  ForEachKey(r, node, path, kKeys, [&](const std::string& key, const YAML::Node& v,
                                       const std::string& p) {
    if (key == "interval") out.interval_s = r.Duration(v, p, false);
    if (key == "restart_overhead") out.restart_overhead_s = r.Duration(v, p, true);
    if (key == "size_gb") out.size_gb = r.Number(v, p, {0, false});
  });
}

void ReadData(SpecReader& r, const YAML::Node& node, const std::string& path, DataLocation& out) {
  static const std::vector<std::string> kKeys = {"region", "size_gb"};
  bool has_size = false;
  bool is_map = ForEachKey(r, node, path, kKeys, [&](const std::string& key,
                                                     const YAML::Node& v, const std::string& p) {
    if (key == "region") out.region = r.String(v, p).value_or("");
    if (key == "size_gb") {
      has_size = true;
      out.size_gb = r.Number(v, p, {0, false}).value_or(0);
    }
  });
  if (is_map && has_size && out.region.empty()) {
    r.Error(node, JoinPath(path, "region"),
            "is required with size_gb: the region id where the data lives (e.g. gcp:us-central1)");
  }
}

namespace {

// latency.rps_by_hour: 24 numbers >= 0, requests per second in each UTC hour.
std::vector<double> ReadHourlyRps(SpecReader& r, const YAML::Node& node, const std::string& path) {
  std::vector<double> out;
  if (!r.ExpectList(node, path, "[5, 5, 4, ..., 8] (24 numbers)")) return out;
  bool ok = true;
  for (size_t i = 0; i < node.size(); ++i) {
    std::optional<double> v = r.Number(node[i], IndexPath(path, i), {0, false});
    ok = ok && v.has_value();
    out.push_back(v.value_or(0));
  }
  if (ok && out.size() != 24) {
    r.Error(node, path, "a list of " + std::to_string(out.size()) +
                            " numbers where 24 belong (requests per second in each UTC hour, 0-23)");
  }
  return ok && out.size() == 24 ? out : std::vector<double>{};
}

}  // namespace

void ReadLatency(SpecReader& r, const YAML::Node& node, const std::string& path, Latency& out) {
  static const std::vector<std::string> kKeys = {"slo_ms",     "users",     "rps",
                                                 "rps_by_hour", "tokens_in", "tokens_out"};
  ForEachKey(r, node, path, kKeys, [&](const std::string& key, const YAML::Node& v,
                                       const std::string& p) {
    if (key == "slo_ms") out.slo_ms = r.Number(v, p, {0, true});
    if (key == "users") out.users = r.StringList(v, p, "[gcp:europe-west4, aws:eu-central-1]");
    if (key == "rps") out.rps = r.Number(v, p, {0, true});
    if (key == "rps_by_hour") out.rps_by_hour = ReadHourlyRps(r, v, p);
    if (key == "tokens_in") out.tokens_in = r.WholeNumber(v, p, 1);
    if (key == "tokens_out") out.tokens_out = r.WholeNumber(v, p, 1);
  });
  if (node.IsMap() && node["rps"] && node["rps_by_hour"]) {
    r.Error(node, path, "gives rps and rps_by_hour at once; give rps for a flat load or "
                        "rps_by_hour for one figure per UTC hour");
  }
}

void ReadDriver(SpecReader& r, const YAML::Node& node, const std::string& path, DriverPin& out) {
  static const std::vector<std::string> kKeys = {"version", "cuda"};
  ForEachKey(r, node, path, kKeys, [&](const std::string& key, const YAML::Node& v,
                                       const std::string& p) {
    std::optional<std::string> s = r.String(v, p);
    if (!s) return;
    bool ok = !s->empty() && std::isdigit(static_cast<unsigned char>((*s)[0]));
    for (char c : *s) ok = ok && (std::isdigit(static_cast<unsigned char>(c)) || c == '.');
    if (!ok) {
      r.Error(v, p, SpecReader::Show(v) + " is not a version; use dotted numbers (e.g. " +
                        (key == "cuda" ? "\"12.4\")" : "\"550.54.15\")"));
      return;
    }
    (key == "version" ? out.version : out.cuda) = *s;
  });
}

}  // namespace meridian::spec
