// Job specs the estimator's tests share.
#pragma once

#include "core/job.h"

namespace meridian::estimate::testing {

// Llama-3.1-8B's shape serving chat: 16 requests at once, 512 prompt tokens
// and 256 generated tokens each.
inline JobSpec Chat8B() {
  JobSpec j;
  j.kind = WorkloadKind::kRealtimeInference;
  j.model.params_b = 8;
  j.model.precision = Precision::kBf16;
  j.model.layers = 32;
  j.model.hidden = 4096;
  j.model.heads = 32;
  j.model.kv_heads = 8;
  j.model.seq_len = 8192;
  j.model.batch = 16;
  j.model.output_tokens = 256;
  j.latency.tokens_in = 512;
  j.latency.tokens_out = 256;
  return j;
}

}  // namespace meridian::estimate::testing
