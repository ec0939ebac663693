// Plans on the real embedded catalog (data/catalog): sanity, not exact figures,
// since prices change when the catalog is rebuilt.
#include <gtest/gtest.h>

#include <algorithm>

#include "estimate/plan.h"

namespace meridian::estimate {
namespace {

TEST(EmbeddedPlanTest, PreemptibleFineTune7B) {
  auto cat = catalog::Catalog::LoadEmbedded();
  ASSERT_TRUE(cat.ok()) << cat.status().ToString();
  JobSpec j;
  j.name = "ft-7b";
  j.kind = WorkloadKind::kFineTuning;
  j.model.params_b = 7;
  j.model.layers = 32;
  j.model.hidden = 4096;
  j.model.seq_len = 2048;
  j.work.form = Work::Form::kTokens;
  j.work.tokens = 2e9;
  j.preemptible = true;
  j.deadline.after_submit_s = 7 * 24 * 3600;
  Result<Plan> p = MakePlan(j, **cat, {FromCivil({2026, 3, 1, 0, 0, 0}), 0});
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  ASSERT_FALSE(p->options.empty());
  // A week of slack and a preemptible job: the cheapest way is spot or flex-start.
  const Option& best = p->options.front();
  EXPECT_TRUE(best.pricing == PricingModel::kSpot || best.pricing == PricingModel::kFlexStart)
      << ToString(best.pricing) << " " << best.offering.instance_type;
  EXPECT_TRUE(best.meets_deadline);
  for (const auto& o : p->options) {
    const catalog::GpuModel* gpu = (*cat)->FindGpu(o.gpu);
    ASSERT_NE(gpu, nullptr);
    EXPECT_LE(o.memory_per_gpu_gib, gpu->vram_gib * 0.9) << o.gpu;
    EXPECT_GE(o.gpus, o.gpus_used);
    EXPECT_EQ(o.cost, o.price_per_hour.Times(o.billed_hours) + o.egress_cost);
    EXPECT_GT(o.hours, 0);
    EXPECT_GT(o.co2.grams(), 0) << o.offering.region;
  }
  // bf16 (the kind's default) is not native on V100 or T4: neither is
  // rejected for precision; where they fit, they run the job at fp16.
  for (const char* gpu : {"V100-32GB", "T4"}) {
    for (const auto& r : p->rejected) {
      if (r.gpu == gpu) {
        EXPECT_EQ(r.reason.find("not supported natively"), std::string::npos) << r.reason;
      }
    }
    for (const auto& e : p->estimates) {
      if (e.gpu == gpu) {
        EXPECT_EQ(e.throughput.precision, Precision::kFp16) << gpu;
      }
    }
  }
  // 112 GB of state: a single 80 GB GPU cannot hold it, so H100s come in twos or more.
  for (const auto& e : p->estimates) {
    if (e.gpu == "H100-80GB") {
      EXPECT_GE(e.memory.gpus, 2);
    }
  }
}

// examples/fine-tuning.yaml: stored activations (85 GiB per GPU) never fit an
// H100-80GB; full recomputation does at 24 GPUs (43.5 + 6.1 + 1.0 = 50.5 GiB).
TEST(EmbeddedPlanTest, FineTune70BFitsH100WithRecomputation) {
  auto cat = catalog::Catalog::LoadEmbedded();
  ASSERT_TRUE(cat.ok()) << cat.status().ToString();
  JobSpec j;
  j.name = "llama-70b-sft";
  j.kind = WorkloadKind::kFineTuning;
  j.model.params_b = 70;
  j.model.precision = Precision::kBf16;
  j.model.layers = 80;
  j.model.hidden = 8192;
  j.model.heads = 64;
  j.model.kv_heads = 8;
  j.model.seq_len = 4096;
  j.work.form = Work::Form::kTokens;
  j.work.tokens = 2e9;
  j.resources.gpu_models = {"H100-80GB", "H200-141GB"};
  j.preemptible = true;
  Result<Plan> p = MakePlan(j, **cat, {FromCivil({2026, 3, 1, 0, 0, 0}), 0});
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  auto est = [&](const std::string& gpu) -> const GpuEstimate* {
    for (const auto& e : p->estimates) {
      if (e.gpu == gpu) return &e;
    }
    return nullptr;
  };
  ASSERT_NE(est("H100-80GB"), nullptr);
  EXPECT_EQ(est("H100-80GB")->memory.gpus, 24);
  EXPECT_EQ(est("H100-80GB")->memory.recompute, Recompute::kFull);
  EXPECT_TRUE(std::any_of(p->options.begin(), p->options.end(),
                          [](const Option& o) { return o.gpu == "H100-80GB"; }));
  // H200 holds stored activations at 32 GPUs (32.6 + 85.0 + 1.0 = 118.6 GiB of
  // 126.9): cheaper than recomputing at 16 (1 / 0.90 < 1.33 / 0.90).
  ASSERT_NE(est("H200-141GB"), nullptr);
  EXPECT_EQ(est("H200-141GB")->memory.gpus, 32);
  EXPECT_EQ(est("H200-141GB")->memory.recompute, Recompute::kNone);
  // No two options differ by zone alone.
  for (size_t i = 1; i < p->options.size(); ++i) {
    const Option& a = p->options[i - 1];
    const Option& b = p->options[i];
    EXPECT_FALSE(a.offering.region == b.offering.region &&
                 a.offering.instance_type == b.offering.instance_type && a.gpus == b.gpus &&
                 a.pricing == b.pricing && a.cost == b.cost && a.finish == b.finish &&
                 a.offering.zone != b.offering.zone)
        << a.offering.zone << " / " << b.offering.zone;
  }
}

}  // namespace
}  // namespace meridian::estimate
