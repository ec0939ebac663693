#include "backends/kubernetes/names.h"

#include <gtest/gtest.h>

namespace meridian::backends::k8s {
namespace {

TEST(Names, Dns1123Label) {
  EXPECT_EQ(CheckDns1123Label("llama-7b-pretrain"), "");
  EXPECT_EQ(CheckDns1123Label("0abc"), "");
  for (const char* bad : {"", "Llama", "a_b", "-a", "a-", "a.b"}) {
    EXPECT_NE(CheckDns1123Label(bad), "") << bad;
  }
  EXPECT_EQ(CheckDns1123Label(std::string(63, 'a')), "");
  EXPECT_NE(CheckDns1123Label(std::string(64, 'a')).find("64 characters"), std::string::npos);
}

TEST(Names, Dns1035LabelStartsWithALetter) {
  EXPECT_EQ(CheckDns1035Label("peers"), "");
  EXPECT_NE(CheckDns1035Label("0peers").find("start with a letter"), std::string::npos);
}

TEST(Names, Subdomain) {
  EXPECT_EQ(CheckDns1123Subdomain("meridian.dev"), "");
  EXPECT_NE(CheckDns1123Subdomain("a..b"), "");
  EXPECT_NE(CheckDns1123Subdomain("A.b"), "");
}

TEST(Names, LabelKeysAndValues) {
  EXPECT_EQ(CheckLabelKey("team"), "");
  EXPECT_EQ(CheckLabelKey("app.kubernetes.io/managed-by"), "");
  EXPECT_EQ(CheckLabelKey("cost_center.A"), "");
  EXPECT_NE(CheckLabelKey("/x"), "");
  EXPECT_NE(CheckLabelKey("Bad_Prefix/x").find("prefix"), std::string::npos);
  EXPECT_NE(CheckLabelKey("a b"), "");
  EXPECT_EQ(CheckLabelValue(""), "");
  EXPECT_EQ(CheckLabelValue("production"), "");
  EXPECT_EQ(CheckLabelValue("42"), "");
  EXPECT_NE(CheckLabelValue("has space"), "");
  EXPECT_NE(CheckLabelValue("-lead"), "");
  EXPECT_NE(CheckLabelValue(std::string(64, 'a')), "");
}

}  // namespace
}  // namespace meridian::backends::k8s
