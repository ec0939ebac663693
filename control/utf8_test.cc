// FirstInvalidUtf8 against the UTF-8 definition (RFC 3629), and the field
// paths JsonFieldAt and NonUtf8Field name; offsets counted by hand.
#include "control/utf8.h"

#include <gtest/gtest.h>

namespace meridian::control {
namespace {

TEST(Utf8Test, FirstInvalidByteByTheRfc3629Rules) {
  struct Case {
    std::string text;
    std::optional<size_t> want;
  };
  const std::vector<Case> cases = {
      {"plain ascii", std::nullopt},
      {"caf\xc3\xa9", std::nullopt},              // U+00E9, two bytes
      {"\xe2\x82\xac", std::nullopt},             // U+20AC, three bytes
      {"\xf0\x9f\x98\x80", std::nullopt},         // U+1F600, four bytes
      {"ab\xff", 2},                              // 0xff never appears in UTF-8
      {"a\xc3", 1},                               // a lead byte cut off at the end
      {"a\xc3z", 1},                              // a lead byte without its continuation
      {"\x80", 0},                                // a continuation byte alone
      {"\xc0\xaf", 0},                            // overlong '/': 0x2f < 0x80
      {"\xe0\x80\xaf", 0},                        // overlong in three bytes: 0x2f < 0x800
      {"x\xed\xa0\x80", 1},                       // U+D800, a surrogate
      {"\xf4\x90\x80\x80", 0},                    // U+110000, above U+10FFFF
      {"ok\xf4\x8f\xbf\xbf!", std::nullopt},      // U+10FFFF, the last code point
  };
  for (const Case& c : cases) EXPECT_EQ(FirstInvalidUtf8(c.text), c.want) << c.text;
}

TEST(Utf8Test, JsonFieldAtNamesTheStringHoldingTheByte) {
  struct Case {
    std::string json;
    std::string want;
  };
  const std::vector<Case> cases = {
      {R"({"name": "bad)" "\xff" R"("})", "name"},
      {R"({"a": 1, "b": {"c": "x)" "\xff" R"("}})", "b.c"},
      {R"({"a": {"b": ["x", "y)" "\xff" R"("]}})", "a.b[1]"},
      {R"({"a": [{"k": "v"}, {"k": "w)" "\xff" R"("}]})", "a[1].k"},
      {R"({"s": "q\"uote", "t": ")" "\xff" R"("})", "t"},  // an escaped quote inside a string
      {R"({"o": {"k)" "\xff" R"(": 1}})", "o"},             // a key: its object
  };
  for (const Case& c : cases) {
    const auto at = FirstInvalidUtf8(c.json);
    ASSERT_TRUE(at) << c.json;
    EXPECT_EQ(JsonFieldAt(c.json, *at), c.want) << c.json;
  }
}

TEST(Utf8Test, NonUtf8FieldWalksKeysAndStrings) {
  nlohmann::json tree = {{"name", "ok"}, {"env", {{"A", "fine"}, {"B", "bad\xff"}}}};
  EXPECT_EQ(NonUtf8Field(tree), "env.B");
  nlohmann::json list = {{"command", {"python3", "\xfe"}}};
  EXPECT_EQ(NonUtf8Field(list), "command[1]");
  EXPECT_EQ(NonUtf8Field(nlohmann::json{{"name", "caf\xc3\xa9"}}), std::nullopt);
}

TEST(Utf8Test, CheckUtf8BodyNamesFieldByteAndOffset) {
  // {"name": "b  <- the 0xff is byte 11 (0-based): '{' '"' n a m e '"' ':' ' ' '"' 'b'.
  const Status st = CheckUtf8Body("{\"name\": \"b\xff\"}", true);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(st.message(),
            "request: name: invalid UTF-8 (byte 0xff at offset 11); the request must be UTF-8 text");
  EXPECT_TRUE(CheckUtf8Body("{\"name\": \"caf\xc3\xa9\"}", true).ok());
}

}  // namespace
}  // namespace meridian::control
