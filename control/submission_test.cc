// ParseSubmission: request bodies that are not a job spec are 400-class errors
// (kInvalidArgument) that say why, never an exception out of the handler.
#include "control/submission.h"

#include <gtest/gtest.h>

namespace meridian::control {
namespace {

// Issue 24 (fuzzing): a JSON number beyond a double (1e999) made the second,
// throwing parse (for the message) throw out_of_range, which was not caught:
// the fuzz target aborted, and the daemon answered 500. It is a malformed body.
TEST(ParseSubmission, Issue24NumberBeyondADoubleIsMalformedJson) {
  for (const char* body : {R"({"name": "x", "kind": "training", "budget_usd": 1e999})",
                           "8409677777777e77777777777777"}) {
    Result<Submission> s = ParseSubmission(body, BodyFormat::kJson, "t");
    ASSERT_FALSE(s.ok()) << body;
    EXPECT_EQ(s.status().code(), StatusCode::kInvalidArgument) << body;
    EXPECT_EQ(s.status().message().rfind("request: malformed JSON: ", 0), 0u) << s.status().message();
    EXPECT_NE(s.status().message().find("number overflow"), std::string::npos) << s.status().message();
  }
}

// Issue 24 (fuzzing): a YAML body "," held the request's thread forever
// (yaml-cpp 0.7's LoadAll); it is malformed YAML at line 1, column 1.
TEST(ParseSubmission, Issue24ALoneCommaIsMalformedYaml) {
  Result<Submission> s = ParseSubmission(",", BodyFormat::kYaml, "t");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.status().message(), "request:1:1: malformed YAML: \",\" cannot begin a value here");
}

}  // namespace
}  // namespace meridian::control
