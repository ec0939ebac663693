// What each key of a valid spec parses to, and what is left empty.
#include "spec/spec.h"

#include <gtest/gtest.h>

namespace meridian::spec {
namespace {

JobSpec ParseOne(const std::string& yaml) {
  auto specs = ParseJobSpecs(yaml, "t.yaml");
  EXPECT_TRUE(specs.ok()) << specs.status().message();
  if (!specs.ok() || specs->size() != 1) return JobSpec{};
  return specs->front();
}

constexpr const char* kFull = R"(
name: llama-70b-sft
tenant: research
kind: fine-tuning
model: {params_b: 70, precision: bf16, layers: 80, hidden: 8192, heads: 64, kv_heads: 8,
        seq_len: 4096, micro_batch: 2, batch: 32, output_tokens: 128}
work: {tokens: 2.0e9}
resources: {gpus: auto, gpu_models: [H100-80GB, H200-141GB], vram_gib: 30, vcpus: 16,
            ram_gib: 128, mig: false, cpu_fallback: {slowdown: 8}}
deadline: 72h
budget_usd: 5000
priority: high
preemptible: true
checkpoint: {interval: 30m, restart_overhead: 5m, size_gb: 120}
data: {region: gcp:us-central1, size_gb: 500}
residency: [eu, aws:us-east-1]
latency: {slo_ms: 50, users: [gcp:europe-west4, aws:eu-central-1]}
driver: {version: "550.54.15", cuda: "12.4"}
command: [python3, train.py, --resume]
env: {HF_HOME: /cache, WORKERS: 8}
working_dir: /workspace
image: nvcr.io/nvidia/pytorch:24.05-py3
grace_period: 90s
labels: {team: llm, cost-center: "42"}
)";

TEST(ParseJobSpecs, EveryFieldOfAFullSpec) {
  JobSpec j = ParseOne(kFull);
  EXPECT_EQ(j.name, "llama-70b-sft");
  EXPECT_EQ(j.tenant, "research");
  EXPECT_EQ(j.kind, WorkloadKind::kFineTuning);
  EXPECT_EQ(j.model.params_b, 70);
  EXPECT_EQ(j.model.precision, Precision::kBf16);
  EXPECT_EQ(j.model.layers, 80);
  EXPECT_EQ(j.model.hidden, 8192);
  EXPECT_EQ(j.model.heads, 64);
  EXPECT_EQ(j.model.kv_heads, 8);
  EXPECT_EQ(j.model.seq_len, 4096);
  EXPECT_EQ(j.model.micro_batch, 2);
  EXPECT_EQ(j.model.batch, 32);
  EXPECT_EQ(j.model.output_tokens, 128);
  EXPECT_EQ(j.work.form, Work::Form::kTokens);
  EXPECT_EQ(j.work.tokens, 2.0e9);
  EXPECT_EQ(j.resources.gpus, std::nullopt);  // auto
  EXPECT_EQ(j.resources.gpu_models, (std::vector<std::string>{"H100-80GB", "H200-141GB"}));
  EXPECT_EQ(j.resources.vram_gib, 30);
  EXPECT_EQ(j.resources.vcpus, 16);
  EXPECT_EQ(j.resources.ram_gib, 128);
  EXPECT_FALSE(j.resources.mig);
  ASSERT_TRUE(j.resources.cpu_fallback);
  EXPECT_EQ(j.resources.cpu_fallback->slowdown, 8);
  EXPECT_EQ(j.deadline.after_submit_s, 72 * 3600);
  EXPECT_EQ(j.deadline.at, std::nullopt);
  EXPECT_EQ(j.budget, Money::FromMicros(5'000'000'000));
  EXPECT_EQ(j.priority, Priority::kHigh);
  EXPECT_TRUE(j.preemptible);
  EXPECT_EQ(j.checkpoint.interval_s, 1800);
  EXPECT_EQ(j.checkpoint.restart_overhead_s, 300);
  EXPECT_EQ(j.checkpoint.size_gb, 120);
  EXPECT_EQ(j.data.region, "gcp:us-central1");
  EXPECT_EQ(j.data.size_gb, 500);
  EXPECT_EQ(j.residency, (std::vector<std::string>{"eu", "aws:us-east-1"}));
  EXPECT_EQ(j.latency.slo_ms, 50);
  EXPECT_EQ(j.latency.users, (std::vector<std::string>{"gcp:europe-west4", "aws:eu-central-1"}));
  EXPECT_EQ(j.driver.version, "550.54.15");
  EXPECT_EQ(j.driver.cuda, "12.4");
  EXPECT_EQ(j.command, (std::vector<std::string>{"python3", "train.py", "--resume"}));
  EXPECT_EQ(j.env, (std::map<std::string, std::string>{{"HF_HOME", "/cache"}, {"WORKERS", "8"}}));
  EXPECT_EQ(j.working_dir, "/workspace");
  EXPECT_EQ(j.image, "nvcr.io/nvidia/pytorch:24.05-py3");
  EXPECT_EQ(j.grace_period_s, 90);
  EXPECT_EQ(j.labels,
            (std::map<std::string, std::string>{{"team", "llm"}, {"cost-center", "42"}}));
  EXPECT_EQ(j.origin.source, "t.yaml");
  EXPECT_EQ(j.origin.path, "");
}

TEST(ParseJobSpecs, DefaultsStayEmptyWhenLeftOut) {
  JobSpec j = ParseOne("name: x\nkind: rendering\n");
  EXPECT_EQ(j.tenant, "default");
  EXPECT_EQ(j.kind, WorkloadKind::kRendering);
  EXPECT_FALSE(j.model.params_b || j.model.precision || j.model.layers || j.model.hidden ||
               j.model.heads || j.model.kv_heads || j.model.seq_len || j.model.micro_batch ||
               j.model.batch || j.model.output_tokens);
  EXPECT_EQ(j.work.form, Work::Form::kNone);
  EXPECT_EQ(j.work.duration_s, std::nullopt);
  EXPECT_EQ(j.resources.gpus, std::nullopt);
  EXPECT_TRUE(j.resources.gpu_models.empty());
  EXPECT_FALSE(j.resources.vram_gib || j.resources.vcpus || j.resources.ram_gib ||
               j.resources.cpu_fallback);
  EXPECT_FALSE(j.resources.mig);
  EXPECT_FALSE(j.deadline.set());
  EXPECT_EQ(j.budget, std::nullopt);
  EXPECT_EQ(j.priority, Priority::kNormal);
  EXPECT_FALSE(j.preemptible);
  EXPECT_FALSE(j.checkpoint.interval_s || j.checkpoint.restart_overhead_s || j.checkpoint.size_gb);
  EXPECT_TRUE(j.data.region.empty());
  EXPECT_TRUE(j.residency.empty());
  EXPECT_FALSE(j.latency.slo_ms);
  EXPECT_FALSE(j.driver.set());
  EXPECT_TRUE(j.command.empty() && j.env.empty() && j.labels.empty() && j.working_dir.empty());
  EXPECT_EQ(j.grace_period_s, std::nullopt);
}

TEST(ParseJobSpecs, ServiceLoad) {
  JobSpec flat = ParseOne(
      "name: x\nkind: realtime-inference\nlatency: {slo_ms: 80, rps: 12.5, tokens_in: 512, "
      "tokens_out: 128}\n");
  EXPECT_EQ(flat.latency.rps, 12.5);
  EXPECT_EQ(flat.latency.tokens_in, 512);
  EXPECT_EQ(flat.latency.tokens_out, 128);
  EXPECT_TRUE(flat.latency.has_load());
  EXPECT_EQ(flat.latency.RpsAt(7), 12.5);  // flat: the same every hour
  EXPECT_EQ(flat.latency.PeakRps(), 12.5);

  // Hour h asks for h requests per second: peak 23 at 23:00 UTC.
  JobSpec hourly = ParseOne(
      "name: x\nkind: realtime-inference\nlatency: {rps_by_hour: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, "
      "10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23]}\n");
  ASSERT_EQ(hourly.latency.rps_by_hour.size(), 24u);
  EXPECT_EQ(hourly.latency.rps, std::nullopt);
  EXPECT_EQ(hourly.latency.RpsAt(0), 0);
  EXPECT_EQ(hourly.latency.RpsAt(17), 17);
  EXPECT_EQ(hourly.latency.PeakRps(), 23);

  JobSpec none = ParseOne("name: x\nkind: realtime-inference\n");
  EXPECT_FALSE(none.latency.has_load());
  EXPECT_EQ(none.latency.RpsAt(3), 0);
  EXPECT_FALSE(none.latency.tokens_in || none.latency.tokens_out);
}

TEST(ParseJobSpecs, NullValuesCountAsLeftOut) {
  JobSpec j = ParseOne("name: x\nkind: training\nbudget_usd:\ndeadline: ~\n");
  EXPECT_EQ(j.budget, std::nullopt);
  EXPECT_FALSE(j.deadline.set());
}

TEST(ParseJobSpecs, GpuCounts) {
  struct Case {
    const char* value;
    std::optional<int> want;
  } cases[] = {{"auto", std::nullopt}, {"0", 0}, {"1", 1}, {"8", 8}, {"\"16\"", 16}};
  for (const Case& c : cases) {
    JobSpec j = ParseOne(std::string("name: x\nkind: training\nresources: {gpus: ") + c.value +
                         "}\n");
    EXPECT_EQ(j.resources.gpus, c.want) << c.value;
  }
}

TEST(ParseJobSpecs, WorkForms) {
  struct Case {
    const char* work;
    Work::Form form;
    double amount;  // tokens, flops or gpu_hours
    std::optional<int64_t> duration_s;
  } cases[] = {
      {"{tokens: 1e11}", Work::Form::kTokens, 1e11, std::nullopt},
      {"{flops: 3.5e20}", Work::Form::kFlops, 3.5e20, std::nullopt},
      {"{gpu_hours: 120, on: H100-80GB}", Work::Form::kGpuHours, 120, std::nullopt},
      {"{duration: 30d}", Work::Form::kNone, 0, 30 * 86400},
  };
  for (const Case& c : cases) {
    JobSpec j = ParseOne(std::string("name: x\nkind: training\nwork: ") + c.work + "\n");
    EXPECT_EQ(j.work.form, c.form) << c.work;
    EXPECT_EQ(j.work.tokens + j.work.flops + j.work.gpu_hours, c.amount) << c.work;
    EXPECT_EQ(j.work.duration_s, c.duration_s) << c.work;
  }
  EXPECT_EQ(ParseOne("name: x\nkind: training\nwork: {gpu_hours: 1, on: L4}").work.on_gpu, "L4");
  JobSpec stencil =
      ParseOne("name: x\nkind: scientific\nwork: {flops: 1e18, arithmetic_intensity: 0.5}");
  EXPECT_EQ(stencil.work.form, Work::Form::kFlops);
  EXPECT_EQ(stencil.work.arithmetic_intensity, 0.5);
  EXPECT_EQ(ParseOne("name: x\nkind: scientific\nwork: {flops: 1e18}").work.arithmetic_intensity,
            std::nullopt);
  EXPECT_EQ(ParseOne("name: x\nkind: llm-training\nwork: {tokens: 1e12, global_batch_tokens: "
                     "16777216}")
                .work.global_batch_tokens,
            16777216.0);
  EXPECT_EQ(ParseOne("name: x\nkind: training\nwork: {tokens: 1e12}").work.global_batch_tokens,
            std::nullopt);
}

TEST(ParseJobSpecs, DeadlinesAndDurations) {
  struct Case {
    const char* deadline;
    std::optional<int64_t> after;
    std::optional<UnixSeconds> at;
  } cases[] = {
      {"72h", 72 * 3600, std::nullopt},
      {"90m", 5400, std::nullopt},
      {"14d", 14 * 86400, std::nullopt},
      {"1.5h", 5400, std::nullopt},
      {"3600", 3600, std::nullopt},
      // 2026-03-01T09:00:00Z = 1772355600
      {"2026-03-01T09:00:00Z", std::nullopt, 1772355600},
      {"2026-03-01T11:00:00+02:00", std::nullopt, 1772355600},
      {"\"2026-03-01T09:00:00.5Z\"", std::nullopt, 1772355600},
  };
  for (const Case& c : cases) {
    JobSpec j = ParseOne(std::string("name: x\nkind: training\ndeadline: ") + c.deadline + "\n");
    EXPECT_EQ(j.deadline.after_submit_s, c.after) << c.deadline;
    EXPECT_EQ(j.deadline.at, c.at) << c.deadline;
  }
  JobSpec j = ParseOne("name: x\nkind: training\ngrace_period: 0s\n");
  EXPECT_EQ(j.grace_period_s, 0);
}

TEST(ParseJobSpecs, BooleansAndPrecisions) {
  EXPECT_TRUE(ParseOne("name: x\nkind: training\npreemptible: yes\n").preemptible);
  EXPECT_FALSE(ParseOne("name: x\nkind: training\npreemptible: False\n").preemptible);
  EXPECT_TRUE(ParseOne("name: x\nkind: training\nresources: {mig: true}\n").resources.mig);
  struct Case {
    const char* word;
    Precision want;
  } cases[] = {{"fp64", Precision::kFp64}, {"fp32", Precision::kFp32}, {"tf32", Precision::kTf32},
               {"fp16", Precision::kFp16}, {"bf16", Precision::kBf16}, {"fp8", Precision::kFp8},
               {"int8", Precision::kInt8}};
  for (const Case& c : cases) {
    JobSpec j = ParseOne(std::string("name: x\nkind: scientific\nmodel: {precision: ") + c.word +
                         "}\n");
    EXPECT_EQ(j.model.precision, c.want) << c.word;
  }
}

TEST(ParseJobSpecs, JobsList) {
  auto specs = ParseJobSpecs(R"(
jobs:
  - name: a
    kind: llm-training
    work: {tokens: 1e9}
  - name: b
    kind: realtime-inference
    priority: critical
)",
                             "list.yaml");
  ASSERT_TRUE(specs.ok()) << specs.status().message();
  ASSERT_EQ(specs->size(), 2u);
  EXPECT_EQ((*specs)[0].name, "a");
  EXPECT_EQ((*specs)[0].origin.path, "jobs[0]");
  EXPECT_EQ((*specs)[1].name, "b");
  EXPECT_EQ((*specs)[1].kind, WorkloadKind::kRealtimeInference);
  EXPECT_EQ((*specs)[1].priority, Priority::kCritical);
  EXPECT_EQ((*specs)[1].origin.path, "jobs[1]");
  // Positions are recorded for later stages: line 7 col 5 is `- name: b`'s map.
  EXPECT_EQ(LocateField((*specs)[1], "priority"), "list.yaml:8:15: jobs[1].priority");
  EXPECT_EQ(LocateField((*specs)[1], "resources.gpus"), "list.yaml:6:5: jobs[1].resources.gpus");
}

TEST(LocateField, FallsBackToTheSourceOrNothing) {
  JobSpec built;
  EXPECT_EQ(LocateField(built, "deadline"), "deadline");
  built.origin.source = "x.yaml";
  EXPECT_EQ(LocateField(built, "deadline"), "x.yaml: deadline");
}

}  // namespace
}  // namespace meridian::spec
