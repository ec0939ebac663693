// DecodeNodeRegistration: the body of POST /v1/nodes, what it makes of a
// valid one and the field each refusal names (the API's error.field).
#include "control/node_request.h"

#include <gtest/gtest.h>

#include "control/submission.h"

namespace meridian::control {
namespace {

const catalog::Catalog& Embedded() {
  static const auto c = catalog::Catalog::LoadEmbedded();
  return **c;
}

TEST(DecodeNodeRegistration, AValidBodyIsAReadyRegisteredNode) {
  auto n = DecodeNodeRegistration(
      R"({"name": "gpu-box-1", "gpu_model": "T4", "gpus": 2, "vcpus": 8, "ram_gib": 32.5})",
      Embedded());
  ASSERT_TRUE(n.ok()) << n.status().message();
  EXPECT_EQ(n->name, "gpu-box-1");
  EXPECT_EQ(n->gpu_model, "T4");
  EXPECT_EQ(n->gpus, 2);
  EXPECT_EQ(n->vcpus, 8);
  EXPECT_EQ(n->ram_gib, 32.5);
  EXPECT_EQ(n->state, NodeState::kReady);
  EXPECT_TRUE(n->registered);
}

TEST(DecodeNodeRegistration, EachRefusalNamesItsField) {
  struct Case {
    const char* body;
    std::string field;  // "" : the body as a whole
    std::string message;
  };
  const Case cases[] = {
      {"[1]", "", "request: the body must be a JSON object with name, gpu_model, gpus, vcpus, ram_gib"},
      {R"({"gpus": 0})", "name", "request: name: is required (a text)"},
      {R"({"name": "a b"})", "name",
       "request: name: \"a b\" must be 1-63 characters without / or spaces"},
      {R"({"name": "n", "gpus": -1})", "gpus",
       "request: gpus: -1 must be a whole number from 0 to 1024"},
      {R"({"name": "n", "vcpus": 2.5})", "vcpus",
       "request: vcpus: 2.5 must be a whole number from 0 to 1024"},
      {R"({"name": "n", "ram_gib": "32"})", "ram_gib", "request: ram_gib: \"32\" must be a number >= 0"},
      {R"({"name": "n", "gpus": 1})", "gpu_model", "request: gpu_model: is required when gpus > 0"},
      {R"({"name": "n", "gpu_model": "T4", "gpus": 17})", "gpus",
       "request: gpus: 17 is more than 16 per node"},
      {R"({"name": "n", "gpu_model": 4})", "gpu_model", "request: gpu_model: must be a text"},
  };
  for (const Case& c : cases) {
    auto n = DecodeNodeRegistration(c.body, Embedded());
    ASSERT_FALSE(n.ok()) << c.body;
    EXPECT_EQ(n.status().code(), StatusCode::kInvalidArgument) << c.body;
    EXPECT_EQ(n.status().message(), c.message) << c.body;
    EXPECT_EQ(FieldOfMessage(n.status().message()), c.field) << c.body;
  }
}

// A NUL byte ends the text for nlohmann's reader; JSON allows one only
// escaped, so a registration with one after the object is refused.
TEST(DecodeNodeRegistration, ANulByteAfterTheObjectIsMalformedJson) {
  const std::string body =
      R"({"name": "n1", "gpu_model": "T4", "gpus": 1, "vcpus": 8, "ram_gib": 32})" +
      std::string(1, '\0') + "junk";
  auto r = DecodeNodeRegistration(body, Embedded());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(),
            "request: malformed JSON: a NUL byte (0x00) at offset 71; JSON allows one only "
            "escaped, as \\u0000");
}

TEST(DecodeNodeRegistration, AnUnknownKeyIsNamedWithASuggestion) {
  auto n = DecodeNodeRegistration(R"({"name": "n", "gpu_modle": "T4"})", Embedded());
  ASSERT_FALSE(n.ok());
  EXPECT_EQ(FieldOfMessage(n.status().message()), "gpu_modle");
  EXPECT_NE(n.status().message().find("gpu_model"), std::string::npos) << n.status().message();
}

}  // namespace
}  // namespace meridian::control
