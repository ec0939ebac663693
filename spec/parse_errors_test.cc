// Every kind of bad input gives an error naming the position, the field path,
// the value and the reason.
#include <gtest/gtest.h>

#include "spec/spec.h"

namespace meridian::spec {
namespace {

struct BadCase {
  const char* what;
  std::string yaml;
  std::vector<std::string> want;  // substrings of the error message
};

// A valid job with `extra` lines appended.
std::string Job(const std::string& extra) { return "name: x\nkind: training\n" + extra + "\n"; }

std::vector<BadCase> BadCases() {
  return {
      // Malformed YAML: file, line and column (1-based).
      {"malformed yaml", "name: x\nkind: [training\n", {"bad.yaml:3:1: malformed YAML"}},
      {"bad indentation", "name: x\n  kind: training\n", {"bad.yaml:2:7: malformed YAML"}},
      {"empty file", "", {"bad.yaml: is empty"}},
      {"two documents", "name: a\nkind: training\n---\nname: b\n", {"second YAML document"}},
      // Issue 24 (fuzzing): yaml-cpp 0.7's LoadAll never returned on a "," where a
      // value begins; the comma is at line 1, column 1 (and line 2, column 1).
      {"issue 24: a lone comma", ",", {"bad.yaml:1:1: malformed YAML: \",\" cannot begin a value here"}},
      {"issue 24: a comma after a document", "[1]\n,", {"bad.yaml:2:1: malformed YAML: \",\""}},
      {"top level list", "- name: x\n", {"bad.yaml:1:1: a list at the top level"}},
      // Required keys.
      {"no name", "kind: training\n", {"bad.yaml:1:1: name: is required"}},
      {"no kind", "name: x\n", {"kind: is required", "llm-training", "scientific"}},
      {"bad name", "name: \"my job!\"\nkind: training\n",
       {"bad.yaml:1:7: name: \"my job!\" must be 1-63 letters"}},
      // Unknown keys at every level, with the nearest known key.
      {"unknown top key", Job("preemptable: true"),
       {"bad.yaml:3:1: preemptable: unknown key \"preemptable\"; did you mean `preemptible`?"}},
      {"unknown nested key", Job("resources: {gpu: 8}"),
       {"resources.gpu: unknown key \"gpu\"; did you mean `gpus`?"}},
      {"unknown model key", Job("model: {param_b: 7}"), {"model.param_b", "`params_b`"}},
      {"unknown key, far from all", Job("checkpoint: {zzzzzzzz: 1}"),
       {"checkpoint.zzzzzzzz", "known keys here: interval, restart_overhead or size_gb"}},
      {"repeated key", Job("budget_usd: 5\nbudget_usd: 6"), {"budget_usd: is given twice"}},
      // Wrong types.
      {"list where a map belongs", Job("resources: [8]"),
       {"bad.yaml:3:12: resources: a list where a map of keys belongs"}},
      {"map where a list belongs", Job("resources: {gpu_models: {a: b}}"),
       {"resources.gpu_models: a map where a list belongs"}},
      {"text for a number", Job("budget_usd: abc"),
       {"bad.yaml:3:13: budget_usd: \"abc\" is not a number; must be a number > 0"}},
      {"list for a number", Job("model: {params_b: [7]}"),
       {"model.params_b: a list where a number > 0 belongs"}},
      {"fraction of a gpu", Job("resources: {gpus: 1.5}"),
       {"resources.gpus: \"1.5\" must be \"auto\" or a whole number >= 0"}},
      {"negative gpus", Job("resources: {gpus: -2}"),
       {"bad.yaml:3:19: resources.gpus: \"-2\" must be \"auto\" or a whole number >= 0"}},
      {"text gpus", Job("resources: {gpus: many}"), {"resources.gpus: \"many\" must be \"auto\""}},
      {"fraction of layers", Job("model: {layers: 1.5}"),
       {"model.layers: \"1.5\" must be a whole number >= 1"}},
      {"zero heads", Job("model: {heads: 0}"), {"model.heads: \"0\" must be a whole number >= 1"}},
      {"not a bool", Job("preemptible: maybe"), {"preemptible: \"maybe\" must be true or false"}},
      {"map for a string", Job("working_dir: {a: 1}"),
       {"working_dir: a map where a single value (text) belongs"}},
      {"nested list in command", Job("command: [python3, [a]]"),
       {"command[1]: a list where a single value"}},
      {"empty command", Job("command: []"), {"command: is empty"}},
      {"bad env name", Job("env: {1BAD: x}"), {"env.1BAD: \"1BAD\" is not an environment variable"}},
      {"loader env", Job("env: {LD_PRELOAD: /tmp/x.so}"),
       {"env.LD_PRELOAD: \"LD_PRELOAD\": variables starting with LD_ steer the dynamic loader"}},
      {"list for labels", Job("labels: [a]"), {"labels: a list where a map of names to values"}},
      {"bad driver version", Job("driver: {cuda: latest}"),
       {"driver.cuda: \"latest\" is not a version"}},
      // Out of range and unknown words.
      {"negative budget", Job("budget_usd: -5"),
       {"budget_usd: \"-5\" is out of range; must be a number > 0"}},
      {"zero params", Job("model: {params_b: 0}"),
       {"model.params_b: \"0\" is out of range; must be a number > 0"}},
      {"negative params", Job("model: {params_b: -7}"), {"model.params_b: \"-7\" is out of range"}},
      {"hex number", Job("data: {region: a:b, size_gb: 0x10}"),
       {"data.size_gb: \"0x10\" is not a number"}},
      {"infinite tokens", Job("work: {tokens: .inf}"), {"work.tokens: \".inf\" is not a number"}},
      {"unknown precision", Job("model: {precision: fp4}"),
       {"model.precision: \"fp4\" is not a precision; use fp64, fp32, tf32, fp16, bf16, fp8 or int8"}},
      {"unknown kind", "name: x\nkind: trainig\n",
       {"bad.yaml:2:7: kind: \"trainig\" is not a workload kind; use llm-training, training, "
        "fine-tuning, batch-inference, realtime-inference, data-science, rendering or scientific"}},
      {"unknown priority", Job("priority: urgent"),
       {"priority: \"urgent\" is not a priority; use critical, high, normal or low"}},
      {"kv_heads above heads", Job("model: {heads: 8, kv_heads: 16}"),
       {"model.kv_heads: \"16\" must be <= heads (8)"}},
      {"zero slowdown", Job("resources: {cpu_fallback: {slowdown: 0}}"),
       {"resources.cpu_fallback.slowdown: \"0\" is out of range"}},
      {"cpu_fallback without slowdown", Job("resources: {cpu_fallback: {}}"),
       {"resources.cpu_fallback.slowdown: is required"}},
      {"negative slo", Job("latency: {slo_ms: -1}"), {"latency.slo_ms: \"-1\" is out of range"}},
      {"zero rps", Job("latency: {rps: 0}"), {"latency.rps: \"0\" is out of range"}},
      {"hourly rps of 3 hours", Job("latency: {rps_by_hour: [1, 2, 3]}"),
       {"latency.rps_by_hour: a list of 3 numbers where 24 belong (requests per second in each "
        "UTC hour, 0-23)"}},
      {"negative hourly rps", Job("latency: {rps_by_hour: [1, -2]}"),
       {"latency.rps_by_hour[1]: \"-2\" is out of range"}},
      {"flat and hourly rps",
       Job("latency: {rps: 5, rps_by_hour: [5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, "
           "5, 5, 5, 5, 5, 5]}"),
       {"latency: gives rps and rps_by_hour at once; give rps for a flat load or rps_by_hour for "
        "one figure per UTC hour"}},
      {"zero tokens_in", Job("latency: {tokens_in: 0}"),
       {"latency.tokens_in: \"0\" must be a whole number >= 1"}},
      {"fractional tokens_out", Job("latency: {tokens_out: 2.5}"),
       {"latency.tokens_out: \"2.5\" must be a whole number >= 1"}},
      {"data size without region", Job("data: {size_gb: 10}"), {"data.region: is required"}},
      {"negative checkpoint size", Job("checkpoint: {size_gb: -5}"),
       {"bad.yaml:3:23: checkpoint.size_gb: \"-5\" is out of range; must be a number >= 0"}},
      {"checkpoint size as text", Job("checkpoint: {size_gb: big}"),
       {"checkpoint.size_gb: \"big\" is not a number; must be a number >= 0"}},
      // Durations and times.
      {"unknown duration unit", Job("deadline: 10x"),
       {"bad.yaml:3:11: deadline: \"10x\" has an unknown unit", "RFC 3339"}},
      {"negative duration", Job("checkpoint: {interval: -5m}"),
       {"checkpoint.interval: \"-5m\" is negative"}},
      {"negative deadline", Job("deadline: -5m"), {"deadline: \"-5m\" is negative"}},
      {"zero deadline", Job("deadline: 0h"), {"deadline: \"0h\" must be longer than zero"}},
      {"zero interval", Job("checkpoint: {interval: 0s}"),
       {"checkpoint.interval: \"0s\" must be longer than zero"}},
      {"bad grace period", Job("grace_period: soon"), {"grace_period: \"soon\" has an unknown unit"}},
      {"bad service duration", Job("work: {duration: 30 days}"), {"work.duration: \"30 days\""}},
      {"bad time", Job("deadline: 2026-13-01T00:00:00Z"),
       {"deadline: \"2026-13-01T00:00:00Z\" is not an RFC 3339 time"}},
      {"list deadline", Job("deadline: [1h]"), {"deadline: a list where a duration (72h)"}},
      // Work forms.
      {"two work forms", Job("work: {tokens: 1e9, flops: 1e20}"),
       {"bad.yaml:3:7: work: gives tokens and flops at once; give exactly one of tokens, flops, "
        "gpu_hours (with on) or duration"}},
      {"empty work", Job("work: {}"), {"work: states no amount of work"}},
      {"gpu_hours without on", Job("work: {gpu_hours: 10}"), {"work.on: is required with gpu_hours"}},
      {"on without gpu_hours", Job("work: {tokens: 1, on: L4}"),
       {"work.on: belongs only with gpu_hours, not with tokens"}},
      {"zero tokens", Job("work: {tokens: 0}"), {"work.tokens: \"0\" is out of range"}},
      {"zero intensity", Job("work: {flops: 1e18, arithmetic_intensity: 0}"),
       {"work.arithmetic_intensity: \"0\" is out of range"}},
      {"intensity with tokens", Job("work: {tokens: 1e9, arithmetic_intensity: 2}"),
       {"work.arithmetic_intensity: belongs only with flops, not with tokens"}},
      {"zero global batch", Job("work: {tokens: 1e9, global_batch_tokens: 0}"),
       {"bad.yaml:3:42: work.global_batch_tokens: \"0\" is out of range; must be a number > 0"}},
      {"negative global batch", Job("work: {tokens: 1e9, global_batch_tokens: -4e6}"),
       {"work.global_batch_tokens: \"-4e6\" is out of range"}},
      {"global batch with duration", Job("work: {duration: 2h, global_batch_tokens: 4e6}"),
       {"bad.yaml:3:43: work.global_batch_tokens: \"4e6\" belongs only with tokens, flops or "
        "gpu_hours, not with duration"}},
      {"global batch of a kind that does not train",
       "name: x\nkind: batch-inference\nwork: {tokens: 1e9, global_batch_tokens: 4e6}\n",
       {"bad.yaml:3:42: work.global_batch_tokens: \"4e6\" belongs only with a kind that trains "
        "(llm-training, training, fine-tuning), not with batch-inference"}},
      // Lists of jobs.
      {"empty jobs list", "jobs: []\n", {"bad.yaml:1:7: jobs: is empty; list at least one job"}},
      {"jobs not a list", "jobs: {name: x}\n", {"jobs: a map where a list belongs"}},
      {"key beside jobs", "jobs: [{name: x, kind: training}]\ntenant: a\n",
       {"bad.yaml:2:1: tenant: cannot sit beside jobs:"}},
      {"duplicate job names",
       "jobs:\n  - {name: a, kind: training}\n  - {name: b, kind: training}\n"
       "  - {name: a, kind: training}\n",
       {"bad.yaml:4:12: jobs[2].name: \"a\" is already used by jobs[0]"}},
      {"error inside a listed job", "jobs:\n  - {name: a, kind: training}\n"
                                    "  - {name: b, kind: training, resources: {gpus: -2}}\n",
       {"bad.yaml:3:49: jobs[1].resources.gpus: \"-2\" must be \"auto\""}},
      {"listed job not a map", "jobs:\n  - a\n", {"bad.yaml:2:5: jobs[0]: \"a\" where a map"}},
  };
}

TEST(ParseJobSpecs, EveryBadInputNamesFieldValueAndReason) {
  for (const BadCase& c : BadCases()) {
    auto specs = ParseJobSpecs(c.yaml, "bad.yaml");
    ASSERT_FALSE(specs.ok()) << c.what;
    EXPECT_EQ(specs.status().code(), StatusCode::kInvalidArgument) << c.what;
    for (const std::string& want : c.want) {
      EXPECT_NE(specs.status().message().find(want), std::string::npos)
          << c.what << "\n  want: " << want << "\n  got:  " << specs.status().message();
    }
  }
}

TEST(ParseJobSpecs, ReportsEveryProblemOnItsOwnLine) {
  auto specs = ParseJobSpecs("name: x\nkind: nope\nbudget_usd: -1\npriorty: high\n", "f.yaml");
  ASSERT_FALSE(specs.ok());
  EXPECT_EQ(specs.status().message(),
            "f.yaml:2:7: kind: \"nope\" is not a workload kind; use llm-training, training, "
            "fine-tuning, batch-inference, realtime-inference, data-science, rendering or "
            "scientific\n"
            "f.yaml:3:13: budget_usd: \"-1\" is out of range; must be a number > 0\n"
            "f.yaml:4:1: priorty: unknown key \"priorty\"; did you mean `priority`?");
}

}  // namespace
}  // namespace meridian::spec
