#include "estimate/defaults.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>

namespace meridian::estimate {

Precision DefaultPrecision(WorkloadKind kind) {
  switch (kind) {
    case WorkloadKind::kDataScience:
    case WorkloadKind::kRendering: return Precision::kFp32;
    case WorkloadKind::kScientific: return Precision::kFp64;
    default: return Precision::kBf16;
  }
}

bool TrainsWeights(WorkloadKind kind) { return IsTraining(kind); }

bool IsInference(WorkloadKind kind) {
  return kind == WorkloadKind::kBatchInference || kind == WorkloadKind::kRealtimeInference;
}

ModelDims ShapeFromParams(double params) {
  ModelDims d;
  d.params = params;
  d.layers = std::max(1, static_cast<int>(std::lround(std::cbrt(params / 196608.0))));
  d.hidden = 128 * d.layers;
  d.heads = d.layers;  // head_dim 128
  d.kv_heads = d.heads;
  return d;
}

std::string Sci(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

std::string Fixed(double v, int digits) {
  // std::to_chars with a precision writes what printf("%.*f") writes in the C
  // locale ([charconv.to.chars]), without parsing a format: notes formatted
  // per option were a sixth of a plan's time (estimate_bench, BM_PlanExample).
  char buf[48];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::fixed, digits);
  if (ec == std::errc()) return std::string(buf, end);
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);  // longer than the buffer: truncated, as before
  return buf;
}

namespace {

void Note(ResolvedJob* r, std::string field, std::string value, std::string reason) {
  r->assumptions.push_back({std::move(field), std::move(value), std::move(reason)});
}

// Fills layers/hidden/heads/kv_heads from the spec or from ShapeFromParams.
ModelDims ResolveShape(const ModelShape& m, ResolvedJob* r) {
  ModelDims d = ShapeFromParams(*m.params_b * 1e9);
  const std::string why = "derived from params_b: params ~ 12 x layers x hidden^2, hidden = 128 x layers";
  if (m.layers) d.layers = *m.layers; else Note(r, "model.layers", std::to_string(d.layers), why);
  if (m.hidden) {
    d.hidden = *m.hidden;
  } else {
    Note(r, "model.hidden", std::to_string(d.hidden), why);
  }
  if (m.heads) {
    d.heads = *m.heads;
  } else {
    d.heads = std::max(1, d.hidden / 128);
    Note(r, "model.heads", std::to_string(d.heads), "hidden / 128 (head size 128)");
  }
  d.kv_heads = m.kv_heads.value_or(d.heads);
  if (!m.kv_heads && IsInference(r->spec.kind)) {
    Note(r, "model.kv_heads", std::to_string(d.kv_heads), "= heads (no grouped-query attention)");
  }
  return d;
}

void ResolveBatch(const ModelShape& m, WorkloadKind kind, ModelDims* d, ResolvedJob* r) {
  const bool infer = IsInference(kind);
  int seq = infer ? 4096 : 2048;
  d->seq_len = m.seq_len.value_or(seq);
  if (!m.seq_len) {
    Note(r, "model.seq_len", std::to_string(seq),
         infer ? "default inference context" : "default training sequence length");
  }
  if (TrainsWeights(kind)) {
    d->micro_batch = m.micro_batch.value_or(1);
    if (!m.micro_batch) Note(r, "model.micro_batch", "1", "default for training kinds");
    const std::optional<double> stated = r->spec.work.global_batch_tokens;
    d->global_batch_tokens = stated.value_or(kGlobalBatchTokens);
    if (!stated) {
      Note(r, "work.global_batch_tokens", Fixed(kGlobalBatchTokens, 0),
           "tokens per optimizer step across replicas (Llama 2's 4M-token batch)");
    }
  }
  if (infer) {
    int batch = kind == WorkloadKind::kRealtimeInference ? 8 : 32;
    d->batch = m.batch.value_or(batch);
    if (!m.batch) {
      Note(r, "model.batch", std::to_string(batch),
           "default concurrent sequences for " + std::string(ToString(kind)));
    }
    d->output_tokens = m.output_tokens.value_or(0);
  }
}

}  // namespace

double ForwardFlopsPerToken(const ModelDims& d, double context) {
  return 2 * d.params + 4.0 * d.layers * context * d.hidden;
}

double TrainingFlopsPerToken(const ModelDims& d, bool recompute) {
  return (recompute ? 4 : 3) * ForwardFlopsPerToken(d, d.seq_len);
}

double ElementwiseBytesPerToken(const ModelDims& d, bool recompute, double bytes_per_value) {
  const double values =
      (recompute ? 2 : 1) * kElementwiseValuesForward + kElementwiseValuesBackward;
  return values * d.layers * d.hidden * bytes_per_value;
}

ResolvedJob Resolve(const JobSpec& job) {
  ResolvedJob r;
  r.spec = job;
  r.precision = job.model.precision.value_or(DefaultPrecision(job.kind));
  if (!job.model.precision) {
    Note(&r, "model.precision", std::string(ToString(r.precision)),
         "default for " + std::string(ToString(job.kind)));
  }
  if (job.model.params_b && *job.model.params_b > 0) {
    ModelDims d = ResolveShape(job.model, &r);
    ResolveBatch(job.model, job.kind, &d, &r);
    r.dims = d;
  }
  if (TrainsWeights(job.kind) && r.dims) {
    Note(&r, "training.optimizer", "mixed-precision Adam, full fine-tuning",
         "16 B/param of state, sharded ZeRO-3 style over the GPUs");
  }
  if (job.work.form == Work::Form::kNone) {
    double h = job.work.duration_s ? static_cast<double>(*job.work.duration_s) / 3600.0
                                   : kDefaultServiceHours;
    if (!job.work.duration_s) {
      Note(&r, "work.duration", Fixed(h, 0) + "h",
           "no work stated: priced for one hour of running; see price_per_hour");
    }
  }
  if (job.preemptible) {
    if (!job.checkpoint.interval_s) {
      Note(&r, "checkpoint.interval", "30m", "default for preemptible jobs (bounds spot rework)");
    }
    if (!job.checkpoint.restart_overhead_s) {
      Note(&r, "checkpoint.restart_overhead", "5m", "default time to restart from a checkpoint");
    }
  }
  return r;
}

}  // namespace meridian::estimate
