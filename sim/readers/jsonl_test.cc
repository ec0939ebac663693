// The JSONL reader: the issue's example line, job-spec keys, shape sharing,
// and errors that name the line, the field and the value.
#include <gtest/gtest.h>

#include "sim/readers/test_files.h"
#include "sim/trace.h"

namespace meridian::sim {
namespace {

Result<Trace> Read(const std::string& text) {
  return ReadTrace(ScratchFile(text), TraceFormat::kJsonl);
}

std::string ErrorOf(const std::string& text) {
  Result<Trace> t = Read(text);
  EXPECT_FALSE(t.ok());
  if (t.ok()) return "";
  EXPECT_EQ(t.status().code(), StatusCode::kInvalidArgument);
  return t.status().message();
}

TEST(Jsonl, ReadsTheCommonKeys) {
  Result<Trace> t = Read(
      R"({"name": "j1", "submit_s": 0, "duration_s": 3600, "gpus": 8, "gpu_model": "V100-32GB", )"
      R"("tenant": "a", "kind": "training", "deadline_s": 86400, "preemptible": true})"
      "\n");
  ASSERT_TRUE(t.ok()) << t.status().message();
  ASSERT_EQ(t->jobs.size(), 1u);
  const TraceJob& j = t->jobs[0];
  EXPECT_EQ(j.name, "j1");
  EXPECT_EQ(j.submit_s, 0);
  EXPECT_EQ(j.duration_s, 3600);
  EXPECT_EQ(j.deadline_s, 86400);
  const JobSpec& s = *t->specs[j.spec];
  EXPECT_EQ(s.resources.gpus, 8);
  EXPECT_EQ(s.resources.gpu_models, std::vector<std::string>{"V100-32GB"});
  EXPECT_EQ(s.tenant, "a");
  EXPECT_EQ(s.kind, WorkloadKind::kTraining);
  EXPECT_EQ(s.deadline.after_submit_s, 86400);
  EXPECT_TRUE(s.preemptible);
}

// A recorded run time belongs to a model: recorded_on, else the pinned
// gpu_model; gpu_models lists the models the job may use.
TEST(Jsonl, RecordedOnAndGpuModels) {
  Result<Trace> t = Read(
      R"({"name": "a", "duration_s": 60, "gpus": 1, "gpu_model": "T4"})" "\n"
      R"({"name": "b", "duration_s": 60, "gpus": 1, "gpu_models": ["T4", "L4"], "recorded_on": "T4"})" "\n"
      R"({"name": "c", "duration_s": 60, "gpus": 1, "gpu_models": ["T4", "L4"]})" "\n");
  ASSERT_TRUE(t.ok()) << t.status().message();
  ASSERT_EQ(t->jobs.size(), 3u);
  const JobSpec& a = *t->specs[t->jobs[0].spec];
  const JobSpec& b = *t->specs[t->jobs[1].spec];
  const JobSpec& c = *t->specs[t->jobs[2].spec];
  EXPECT_EQ(a.work.recorded_on, "T4");
  EXPECT_EQ(b.work.recorded_on, "T4");
  EXPECT_EQ(b.resources.gpu_models, (std::vector<std::string>{"T4", "L4"}));
  EXPECT_EQ(c.work.recorded_on, "");  // no model recorded: the time runs anywhere
}

TEST(Jsonl, AnyJobSpecKeyAndDefaults) {
  Result<Trace> t = Read(
      "# a comment, then a blank line\n\n"
      R"({"name": "ft", "submit_s": 60, "kind": "fine-tuning", "model": {"params_b": 7}, )"
      R"("work": {"tokens": 1e9}, "resources": {"gpus": 2, "vram_gib": 40}, )"
      R"("checkpoint": {"interval": "30m"}, "residency": ["eu"], "priority": "high"})"
      "\n"
      R"({"submit_s": 5, "gpus": 1, "gpu_fraction": 0.25})"
      "\n");
  ASSERT_TRUE(t.ok()) << t.status().message();
  ASSERT_EQ(t->jobs.size(), 2u);
  // Sorted by submission: the unnamed line 4 first, named after its line.
  EXPECT_EQ(t->jobs[0].name, "line-4");
  EXPECT_EQ(t->jobs[0].duration_s, -1);
  EXPECT_FLOAT_EQ(t->jobs[0].gpu_fraction, 0.25f);
  const JobSpec& shared = *t->specs[t->jobs[0].spec];
  EXPECT_TRUE(shared.resources.mig);
  EXPECT_EQ(shared.kind, WorkloadKind::kTraining);
  const JobSpec& ft = *t->specs[t->jobs[1].spec];
  EXPECT_EQ(ft.kind, WorkloadKind::kFineTuning);
  EXPECT_DOUBLE_EQ(*ft.model.params_b, 7.0);
  EXPECT_EQ(ft.work.form, Work::Form::kTokens);
  EXPECT_EQ(ft.resources.gpus, 2);
  EXPECT_EQ(ft.checkpoint.interval_s, 1800);
  EXPECT_EQ(ft.residency, std::vector<std::string>{"eu"});
  EXPECT_EQ(ft.priority, Priority::kHigh);
}

TEST(Jsonl, IdenticalShapesShareOneSpec) {
  std::string text;
  for (int i = 0; i < 100; ++i) {
    text += R"({"name": "a)" + std::to_string(i) + R"(", "submit_s": )" + std::to_string(i) +
            R"(, "duration_s": )" + std::to_string(10 + i) + R"(, "gpus": )" +
            std::to_string(i % 2 == 0 ? 1 : 4) + R"(, "tenant": "t", "kind": "training"})" + "\n";
  }
  text += R"({"name": "b", "submit_s": 0, "gpus": 1, "tenant": "other", "kind": "training"})" "\n";
  Result<Trace> t = Read(text);
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(t->jobs.size(), 101u);
  EXPECT_EQ(t->specs.size(), 3u);  // 1 GPU, 4 GPUs, and the other tenant
  EXPECT_NE(t->jobs[0].spec, t->jobs[1].spec);  // "a0" and "b" both at 0
}

// Table: a line and the parts its error must name.
struct BadLine {
  std::string line;
  std::vector<std::string> expected;
};

TEST(Jsonl, ErrorsNameLineFieldValueAndReason) {
  const std::vector<BadLine> cases = {
      {R"({"name": "j1", "submit_s": 0,)", {":2: is not valid JSON", "column"}},
      // Issue 24 (fuzzing): a number beyond a double threw past the reader (abort).
      {R"({"name": "j1", "duration_s": 1e999})",
       {":2: is not valid JSON: number overflow parsing '1e999'"}},
      {R"({"name": "j1", "submit_s": "soon"})",
       {":2: submit_s: \"soon\" must be a number of seconds from the start of the trace"}},
      {R"({"name": "j1", "duration_s": -5})", {":2: duration_s: -5 must be >= 0"}},
      {R"({"name": "j1", "gpus": 1.5})", {":2: gpus: 1.5 must be \"auto\" or a whole number"}},
      {R"({"name": "j1", "submt_s": 3})", {":2: submt_s: is not a trace or job-spec key",
                                           "did you mean submit_s"}},
      {R"({"name": "j1", "gpu_model": "V100"})", {":2: gpu_model:", "V100-16GB"}},
      {R"({"name": "j1", "kind": "trainig"})", {":2: kind: \"trainig\" is not a workload kind"}},
      {R"({"name": "j1", "preemptible": "maybe"})", {":2: preemptible: \"maybe\" must be true or false"}},
      {R"({"name": "j0"})", {":2: name: \"j0\" is already used by line 1"}},
      {R"([1, 2])", {":2: [1,2] is not a JSON object"}},
      {R"({"name": "j1", "model": {"params_b": -1}})", {":2: ", "model.params_b", "-1"}},
      {R"({"name": "j1", "gpus": 2, "resources": {"gpus": 4}})",
       {":2: gpus: is given as well as resources.gpus"}},
      {R"({"name": "j1", "gpu_fraction": 1.5})", {":2: gpu_fraction: 1.5 must be a fraction"}},
      {R"({"name": "j1", "recorded_on": "V100"})", {":2: recorded_on:", "V100-16GB"}},
      {R"({"name": "j1", "recorded_on": 7})", {":2: recorded_on: 7 must be the GPU model"}},
      {R"({"name": "j1", "gpu_models": []})", {":2: gpu_models: [] must be a non-empty list"}},
      {R"({"name": "j1", "gpu_models": ["T4", "H100"]})", {":2: gpu_models[1]:", "H100-80GB"}},
      {R"({"name": "j1", "gpu_model": "T4", "gpu_models": ["T4"]})",
       {":2: gpu_models: is given as well as gpu_model"}},
      {R"({"name": "j1", "gpu_models": ["T4"], "resources": {"gpu_models": ["T4"]}})",
       {":2: gpu_models: is given as well as resources.gpu_models"}},
  };
  for (const BadLine& c : cases) {
    const std::string message = ErrorOf("{\"name\": \"j0\"}\n" + c.line + "\n");
    for (const std::string& part : c.expected) {
      EXPECT_NE(message.find(part), std::string::npos)
          << "line: " << c.line << "\nmessage: " << message << "\nmissing: " << part;
    }
  }
}

TEST(Jsonl, ReportsEveryBadLineUpToALimit) {
  std::string text;
  for (int i = 0; i < 30; ++i) text += R"({"name": "j)" + std::to_string(i) + R"(", "gpus": -1})" "\n";
  const std::string message = ErrorOf(text);
  EXPECT_NE(message.find(":1: gpus: -1"), std::string::npos);
  EXPECT_NE(message.find(":20: gpus: -1"), std::string::npos);
  EXPECT_EQ(message.find(":21: gpus"), std::string::npos);
  EXPECT_NE(message.find("10 more problems not shown"), std::string::npos) << message;
}

TEST(Jsonl, EmptyAndMissingFiles) {
  EXPECT_NE(ErrorOf("\n# nothing\n").find("the trace has no jobs"), std::string::npos);
  Result<Trace> missing = ReadTrace("no/such/file.jsonl", TraceFormat::kJsonl);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
}

TEST(Jsonl, ParseTraceFormat) {
  EXPECT_EQ(*ParseTraceFormat("openb"), TraceFormat::kOpenb);
  EXPECT_EQ(*ParseTraceFormat("dlrm"), TraceFormat::kDlrm);
  EXPECT_EQ(*ParseTraceFormat("jsonl"), TraceFormat::kJsonl);
  Result<TraceFormat> bad = ParseTraceFormat("csv");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("\"csv\""), std::string::npos);
}

}  // namespace
}  // namespace meridian::sim
