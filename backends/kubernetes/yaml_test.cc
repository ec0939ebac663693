#include "backends/kubernetes/yaml.h"

#include <gtest/gtest.h>

namespace meridian::backends::k8s {
namespace {

using Json = nlohmann::ordered_json;

TEST(Yaml, KeysKeepTheirOrderAndNestingIndents) {
  Json doc = {{"kind", "Job"}, {"metadata", {{"name", "a"}, {"labels", {{"z", "1"}, {"a", "x"}}}}}};
  EXPECT_EQ(ToYaml(doc),
            "kind: Job\n"
            "metadata:\n"
            "  name: a\n"
            "  labels:\n"
            "    z: \"1\"\n"
            "    a: x\n");
}

TEST(Yaml, SequencesOfMapsAndScalars) {
  Json doc = {{"containers", Json::array({{{"name", "main"}, {"command", {"python3", "--port", "8000"}}}})},
              {"empty", Json::array()},
              {"none", Json::object()}};
  EXPECT_EQ(ToYaml(doc),
            "containers:\n"
            "- name: main\n"
            "  command:\n"
            "  - python3\n"
            "  - \"--port\"\n"
            "  - \"8000\"\n"
            "empty: []\n"
            "none: {}\n");
}

// Strings a YAML reader would take for another type are quoted.
TEST(Yaml, QuotesWhatYamlWouldMisread) {
  struct Case {
    std::string in, out;
  } cases[] = {
      {"true", "\"true\""},   {"No", "\"No\""},       {"null", "\"null\""},
      {"8000", "\"8000\""},   {"1.5", "\"1.5\""},     {"550.54.15", "\"550.54.15\""},
      {"", "\"\""},           {"a: b", "\"a: b\""},   {"s3://x/*.jsonl", "\"s3://x/*.jsonl\""},
      {"a\"b", "\"a\\\"b\""}, {"plain-word", "plain-word"}, {"nvidia.com/gpu", "nvidia.com/gpu"},
  };
  for (const Case& c : cases) EXPECT_EQ(ToYaml(Json(c.in)), c.out + "\n") << c.in;
  EXPECT_EQ(ToYaml(Json{{"count", 3}, {"b", false}}), "count: 3\nb: false\n");
}

TEST(Yaml, StreamSeparatesDocuments) {
  EXPECT_EQ(ToYamlStream({Json{{"a", 1}}, Json{{"b", 2}}}), "a: 1\n---\nb: 2\n");
}

}  // namespace
}  // namespace meridian::backends::k8s
