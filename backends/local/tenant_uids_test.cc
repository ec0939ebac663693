// Tenant uids: the isolation decision, the config's mapping checks, and the
// range's indexes kept in a file across reopenings (a restarted daemon).
#include "backends/local/tenant_uids.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace meridian::backends {
namespace {

namespace fs = std::filesystem;

std::string TempFile(const std::string& tag) {
  fs::path dir = fs::path(::testing::TempDir()) / ("meridian_uids_" + tag + "_" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return (dir / "tenant-uids").string();
}

TEST(TenantIsolationTest, OnlyARootDaemonIsolatesAndTheOthersSaySo) {
  IsolationDecision root = DecideIsolation(0);
  EXPECT_TRUE(root.isolate);
  EXPECT_EQ(root.warning, "");
  IsolationDecision user = DecideIsolation(1000);
  EXPECT_FALSE(user.isolate);
  EXPECT_NE(user.warning.find("tenants are not isolated on the local backend"), std::string::npos);
  EXPECT_NE(user.warning.find("uid 1000"), std::string::npos) << user.warning;
}

TEST(TenantIsolationTest, IdentityTextIsUidOrUidColonGid) {
  struct Case {
    std::string text;
    bool ok;
    uid_t uid;
    gid_t gid;
  } cases[] = {
      {"1500", true, 1500, 1500},       // gid defaults to the uid
      {"1500:1600", true, 1500, 1600},
      {"0", false, 0, 0},               // root
      {"1500:0", false, 0, 0},
      {"-5", false, 0, 0},
      {"4294967295", false, 0, 0},      // (uid_t)-1: "unchanged" to setuid
      {"4294967294", true, 4294967294u, 4294967294u},
      {"abc", false, 0, 0},
  };
  for (const Case& c : cases) {
    auto id = ParseTenantIdentity(c.text);
    ASSERT_EQ(id.ok(), c.ok) << c.text;
    if (c.ok) {
      EXPECT_EQ(id->uid, c.uid) << c.text;
      EXPECT_EQ(id->gid, c.gid) << c.text;
    }
  }
}

TEST(TenantIsolationTest, MappingChecksNameTheTenantAndTheReason) {
  TenantUidOptions o;
  o.base = 200000;
  o.count = 1000;
  o.mapped = {{"alice", {1500, 1500}}, {"bob", {1500, 1600}}};
  Status shared = CheckTenantUidOptions(o);
  EXPECT_FALSE(shared.ok());
  EXPECT_NE(shared.message().find("tenant_uids.tenants.bob"), std::string::npos) << shared.message();
  EXPECT_NE(shared.message().find("alice"), std::string::npos) << shared.message();

  o.mapped = {{"carol", {200500, 200500}}};  // 200000 <= 200500 < 200000 + 1000
  Status in_range = CheckTenantUidOptions(o);
  EXPECT_NE(in_range.message().find("lies in the range"), std::string::npos) << in_range.message();

  o.mapped.clear();
  o.base = 0;
  EXPECT_NE(CheckTenantUidOptions(o).message().find("tenant_uids.base"), std::string::npos);
  o.base = 4294967000u;
  o.count = 1000;  // 4294967000 + 999 = 4294967999 > 4294967294
  EXPECT_NE(CheckTenantUidOptions(o).message().find("tenant_uids.count"), std::string::npos);
}

TEST(TenantUidsTest, TenantsTakeTheNextIndexAndKeepItAcrossReopening) {
  const std::string path = TempFile("keep");
  TenantUidOptions o;
  o.base = 200000;
  o.count = 10;
  o.mapped = {{"ops", {1500, 1501}}};
  {
    auto u = TenantUids::Open(path, o);
    ASSERT_TRUE(u.ok()) << u.status().message();
    EXPECT_EQ(*u->For("team-a"), (TenantIdentity{200000, 200000}));  // index 0
    EXPECT_EQ(*u->For("team-b"), (TenantIdentity{200001, 200001}));  // index 1
    EXPECT_EQ(*u->For("team-a"), (TenantIdentity{200000, 200000}));
    EXPECT_EQ(*u->For("ops"), (TenantIdentity{1500, 1501}));  // the mapping, not the range
  }
  struct stat st {};
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  std::ifstream in(path);
  std::string text((std::istreambuf_iterator<char>(in)), {});
  EXPECT_EQ(text, "team-a 0\nteam-b 1\n");
  // A restarted daemon: team-b keeps 200001 though team-c asks first.
  auto again = TenantUids::Open(path, o);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again->For("team-c"), (TenantIdentity{200002, 200002}));
  EXPECT_EQ(*again->For("team-b"), (TenantIdentity{200001, 200001}));
}

TEST(TenantUidsTest, AFullRangeAndABadFileAreErrors) {
  const std::string path = TempFile("full");
  TenantUidOptions o;
  o.count = 1;
  auto u = TenantUids::Open(path, o);
  ASSERT_TRUE(u.ok());
  EXPECT_TRUE(u->For("a").ok());
  auto full = u->For("b");
  ASSERT_FALSE(full.ok());
  EXPECT_NE(full.status().message().find("used up"), std::string::npos) << full.status().message();
  EXPECT_FALSE(u->For("has space").ok());

  std::ofstream(path, std::ios::trunc) << "team-a x\n";
  auto bad = TenantUids::Open(path, o);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find(":1:"), std::string::npos) << bad.status().message();
}

}  // namespace
}  // namespace meridian::backends
