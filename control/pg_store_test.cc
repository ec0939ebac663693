// What only the PostgreSQL store does: the schema as numbered migrations,
// applied once however many processes open the database; job numbers from a
// sequence, so two stores on one database never give the same id; --db
// picking the store by its scheme; connection errors that never print a
// password. The assertions every store passes are in store_test.cc and
// retention_store_test.cc.
#include <set>
#include <thread>

#include <gtest/gtest.h>

#include "control/pg.h"
#include "control/pg_schema.h"
#include "control/store.h"
#include "control/store_test_kinds.h"
#include "control/test_postgres.h"

namespace meridian::control {
namespace {

std::string FirstText(const std::string& uri, const std::string& sql) {
  auto c = PgConn::Open(uri);
  if (!c.ok()) return c.status().message();
  auto r = (*c)->Query(sql);
  if (!r.ok()) return r.status().message();
  return r->size() > 0 ? r->Text(0, 0) : "no row";
}

NewJob Job(const std::string& name) {
  NewJob j;
  j.tenant = "t";
  j.name = name;
  j.kind = "training";
  j.priority = "normal";
  j.spec_json = "{}";
  j.submitted_at = 1796000000;
  return j;
}

TEST(PgStoreTest, TheDbValuePicksTheStoreByItsScheme) {
  EXPECT_TRUE(IsPostgresUri("postgresql://meridian@db.internal:5432/meridian"));
  EXPECT_TRUE(IsPostgresUri("postgres://db/meridian"));
  EXPECT_FALSE(IsPostgresUri("meridian.db"));
  EXPECT_FALSE(IsPostgresUri("/var/lib/postgresql.db"));
  EXPECT_FALSE(IsPostgresUri("postgresql:/missing-slash"));
}

TEST(PgStoreTest, OutputShowsAUrisPasswordAsStars) {
  struct Case {
    const char* uri;
    const char* shown;
  };
  for (const Case& c : std::vector<Case>{
           {"postgresql://meridian:pw@db:5432/m", "postgresql://meridian:***@db:5432/m"},
           {"postgresql://meridian@db:5432/m", "postgresql://meridian@db:5432/m"},  // no password
           {"postgresql://db:5432/m", "postgresql://db:5432/m"},                    // no user
           {"postgres://:pw@/m?host=/run/postgresql", "postgres://:***@/m?host=/run/postgresql"},
       }) {
    EXPECT_EQ(RedactedUri(c.uri), c.shown) << c.uri;
  }
}

TEST(PgStoreTest, MigrationsAreRecordedAndAppliedOnceWhenReopened) {
  auto uri = testing::TestPostgres::NewDatabase();
  ASSERT_TRUE(uri.ok()) << uri.status().message();
  const std::string want = std::to_string(std::size(kPgMigrations));  // one row per migration
  {
    auto store = testing::OpenStoreOn(*uri);
    ASSERT_NE(store, nullptr);
    ASSERT_TRUE(store->Submit(Job("a")).ok());
  }
  EXPECT_EQ(FirstText(*uri, "SELECT COUNT(*) FROM schema_version"), want);
  EXPECT_EQ(FirstText(*uri, "SELECT MAX(version) FROM schema_version"), want);
  auto again = testing::OpenStoreOn(*uri);  // a second start: nothing applied twice, the job kept
  ASSERT_NE(again, nullptr);
  EXPECT_EQ(FirstText(*uri, "SELECT COUNT(*) FROM schema_version"), want);
  EXPECT_EQ(again->GetJob("j-00000001")->name, "a");
}

TEST(PgStoreTest, TwoStoresOnOneDatabaseNeverGiveTheSameId) {
  auto uri = testing::TestPostgres::NewDatabase();
  ASSERT_TRUE(uri.ok()) << uri.status().message();
  auto a = testing::OpenStoreOn(*uri);
  auto b = testing::OpenStoreOn(*uri);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  // 4 threads, 2 per store, 25 submissions each: 100 jobs, 100 ids.
  std::vector<std::vector<std::string>> ids(4);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      Store* s = t % 2 == 0 ? a.get() : b.get();
      for (int i = 0; i < 25; ++i) {
        auto r = s->Submit(Job("j" + std::to_string(t) + "-" + std::to_string(i)));
        if (r.ok()) ids[t].push_back(r->job_id);
      }
    });
  }
  for (auto& th : threads) th.join();
  std::set<std::string> distinct;
  for (const auto& v : ids) distinct.insert(v.begin(), v.end());
  EXPECT_EQ(distinct.size(), 100u);
  EXPECT_EQ(FirstText(*uri, "SELECT COUNT(*) FROM jobs"), "100");
}

TEST(PgStoreTest, AServerThatIsNotThereIsAnErrorWithoutThePassword) {
  // A socket directory with no server in it.
  SqliteOptions o;
  o.path = "postgresql://meridian:s3cret@/meridian?host=/nonexistent-meridian-dir";
  auto s = OpenStore(o);
  ASSERT_FALSE(s.ok());
  const std::string m = s.status().message();
  EXPECT_NE(m.find("postgresql://meridian:***@/meridian"), std::string::npos) << m;
  EXPECT_NE(m.find("cannot connect"), std::string::npos) << m;
  EXPECT_EQ(m.find("s3cret"), std::string::npos) << m;
}

}  // namespace
}  // namespace meridian::control
