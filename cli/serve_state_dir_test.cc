// The default state directory of `serve` on PostgreSQL: one per database,
// the same for every spelling of its URI, never outside its base whatever
// the URI names, and made with the daemon's modes.
#include "cli/serve_state_dir.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace meridian::cli {
namespace {

namespace fs = std::filesystem;

// libpq's environment defaults, cleared so each test says what it uses.
class PgStateDir : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* v : {"PGHOST", "PGHOSTADDR", "PGPORT", "PGDATABASE", "PGUSER", "PGSERVICE",
                          "PGSERVICEFILE"}) {
      unsetenv(v);
    }
  }
  // A non-root user with a home and no other settings.
  static StateHome Ann() {
    StateHome h;
    h.euid = 1000;
    h.home = "/home/ann";
    return h;
  }
  static std::string Dir(const std::string& uri, const StateHome& h = Ann()) {
    auto d = DefaultPgStateDir(uri, h);
    EXPECT_TRUE(d.ok()) << uri << ": " << d.status().message();
    return d.ok() ? *d : "";
  }
};

// Written out by hand: database "meridian", server db.internal, port 5432
// (given or libpq's default), under ~/.local/state/meridian/postgresql.
TEST_F(PgStateDir, SpellingsOfOneDatabaseGiveOneDirectory) {
  const std::string want = "/home/ann/.local/state/meridian/postgresql/meridian@db.internal:5432";
  for (const char* uri : {
           "postgresql://meridian@db.internal:5432/meridian",
           "postgres://meridian@DB.Internal/meridian",                    // scheme, case, default port
           "postgresql://someone-else@db.internal:05432/meridian",        // the user is not the database
           "postgresql:///meridian?host=db.internal&port=5432",           // host and port as parameters
           "postgresql://db.internal/%6Deridian",                         // percent-encoded
           "postgresql://db.internal/other?dbname=meridian",              // dbname overrides the path
           "postgresql://meridian:secret@db.internal/meridian?sslmode=require&application_name=x",
           "postgresql://meridian@db.internal:5432",                      // no database: the user's name
       }) {
    EXPECT_EQ(Dir(uri), want) << uri;
  }
  // Several hosts in any order, a missing port being 5432.
  const std::string two = "/home/ann/.local/state/meridian/postgresql/meridian@db-a:5432,db-b:5433";
  EXPECT_EQ(Dir("postgresql://db-b:5433,db-a/meridian"), two);
  EXPECT_EQ(Dir("postgresql://db-a:5432,db-b:5433/meridian"), two);
  EXPECT_EQ(Dir("postgresql:///meridian?host=db-b,db-a&port=5433,5432"), two);
}

// A socket directory is one directory however it is reached: through a
// symbolic link or with a trailing slash. No host at all is libpq's default
// socket directory.
TEST_F(PgStateDir, SocketDirectoriesAreResolved) {
  char tmpl[] = "/tmp/meridian-sockXXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const std::string root = tmpl;
  fs::create_directories(root + "/real");
  fs::create_directory_symlink(root + "/real", root + "/link");
  // mkdtemp's name is letters, digits and "-": only "/" needs encoding.
  std::string encoded = root + "/real";
  for (size_t at = 0; (at = encoded.find('/', at)) != std::string::npos; at += 3) {
    encoded.replace(at, 1, "%2F");
  }
  const std::string want = "/home/ann/.local/state/meridian/postgresql/m@" + encoded + ":5432";
  EXPECT_EQ(Dir("postgresql:///m?host=" + root + "/real"), want);
  EXPECT_EQ(Dir("postgresql:///m?host=" + root + "/link/"), want);
  EXPECT_EQ(Dir("postgresql://" + encoded + "/m"), want);  // the host percent-encoded
  EXPECT_EQ(Dir("postgresql:///m"), Dir("postgresql:///m?host=/var/run/postgresql"));
  fs::remove_all(root);
}

TEST_F(PgStateDir, DifferentDatabasesGetDifferentDirectories) {
  const std::string a = Dir("postgresql://db.internal/a");
  EXPECT_NE(a, Dir("postgresql://db.internal/b"));           // another database on the server
  EXPECT_NE(a, Dir("postgresql://db.internal:5433/a"));      // another server on the host
  EXPECT_NE(a, Dir("postgresql://db2.internal/a"));          // another host
  EXPECT_NE(a, Dir("postgresql://db.internal,db2.internal/a"));
  // The encoding cannot be forged: a database whose name holds "@" and the
  // server's spelling is not that server's database.
  EXPECT_NE(Dir("postgresql://h/a@h:5432"), Dir("postgresql://h/a"));
  EXPECT_EQ(Dir("postgresql://h/a@h:5432"),
            "/home/ann/.local/state/meridian/postgresql/a%40h%3A5432@h:5432");
}

// Whatever a URI names, the directory is one entry of BASE/postgresql.
TEST_F(PgStateDir, HostileNamesCannotLeaveTheBase) {
  const fs::path base = "/home/ann/.local/state/meridian/postgresql";
  for (const char* uri : {"postgresql://h/..", "postgresql://h/.", "postgresql://h/%2E%2E%2F%2E%2E%2Fetc",
                          "postgresql://h/%2F", "postgresql://h/a%2F..%2F..%2F..%2Froot",
                          "postgresql:///x?host=..%2F..&dbname=..",
                          "postgresql://h/?dbname=../../../../etc/passwd"}) {
    const fs::path d = Dir(uri);
    EXPECT_EQ(d.parent_path(), base) << uri << " -> " << d;
    EXPECT_EQ(d.lexically_normal(), d) << uri;
    const std::string name = d.filename().string();
    EXPECT_EQ(name.find('/'), std::string::npos) << uri;
    EXPECT_NE(name, "..");
    EXPECT_NE(name, ".");
  }
  // "%2E%2E%2F%2E%2E%2Fetc" decodes to "../../etc": dots kept, "/" as %2F.
  EXPECT_EQ(Dir("postgresql://h/%2E%2E%2F%2E%2E%2Fetc"), base.string() + "/..%2F..%2Fetc@h:5432");
}

// A name past 200 bytes is cut and told apart by a hash of the whole.
TEST_F(PgStateDir, LongNamesAreCutAndStayDistinct) {
  const std::string longname(300, 'x');
  const std::string a = fs::path(Dir("postgresql://h/" + longname + "a")).filename();
  const std::string b = fs::path(Dir("postgresql://h/" + longname + "b")).filename();
  EXPECT_LE(a.size(), 200u);
  EXPECT_EQ(a.size(), 150u + 1 + 16);
  EXPECT_EQ(a.substr(0, 150), std::string(150, 'x'));
  EXPECT_NE(a, b);
  // "~" marks a cut name: a short name holding one is written %7E.
  EXPECT_EQ(fs::path(Dir("postgresql://h/a~b")).filename(), "a%7Eb@h:5432");
}

TEST_F(PgStateDir, TheBaseFollowsTheEnvironment) {
  const std::string name = "/postgresql/m@h:5432";
  StateHome root;
  root.euid = 0;
  root.home = "/root";
  EXPECT_EQ(Dir("postgresql://h/m", root), "/var/lib/meridian" + name);
  StateHome sd = root;
  sd.state_directory = "/srv/meridian:/srv/other";  // systemd's StateDirectory=, first path
  EXPECT_EQ(Dir("postgresql://h/m", sd), "/srv/meridian" + name);
  StateHome xdg = Ann();
  xdg.xdg_state_home = "/data/ann/state";
  EXPECT_EQ(Dir("postgresql://h/m", xdg), "/data/ann/state/meridian" + name);
  xdg.xdg_state_home = "relative/state";  // the XDG spec: ignored
  EXPECT_EQ(Dir("postgresql://h/m", xdg), "/home/ann/.local/state/meridian" + name);
  StateHome nobody;
  nobody.euid = 1000;
  auto none = DefaultPgStateDir("postgresql://h/m", nobody);
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.status().message().find("--state-dir: required"), std::string::npos);
}

TEST_F(PgStateDir, LibpqEnvironmentDefaultsCount) {
  setenv("PGPORT", "6543", 1);
  setenv("PGHOST", "envhost", 1);
  setenv("PGDATABASE", "envdb", 1);
  EXPECT_EQ(Dir("postgresql://"), "/home/ann/.local/state/meridian/postgresql/envdb@envhost:6543");
  EXPECT_EQ(Dir("postgresql://h:5432/m"), "/home/ann/.local/state/meridian/postgresql/m@h:5432");
}

// A service names its database in pg_service.conf, not in the URI.
TEST_F(PgStateDir, AServiceNeedsAStateDir) {
  auto d = DefaultPgStateDir("postgresql:///m?service=prod", Ann());
  ASSERT_FALSE(d.ok());
  EXPECT_NE(d.status().message().find("--state-dir: required when the database is named by a "
                                      "service (\"prod\""),
            std::string::npos)
      << d.status().message();
  auto bad = DefaultPgStateDir("postgresql://h/m?nosuchoption=1", Ann());
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("nosuchoption"), std::string::npos) << bad.status().message();
}

TEST(MakeStateDir, CreatesTheMissingDirectoriesWithTheModeGiven) {
  char tmpl[] = "/tmp/meridian-stateXXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const std::string root = tmpl;
  const mode_t old = umask(077);  // serve's
  for (mode_t mode : {mode_t{0700}, mode_t{0711}}) {
    const std::string top = root + "/m" + std::to_string(mode);
    const std::string dir = top + "/postgresql/db@h:5432";
    ASSERT_TRUE(MakeStateDir(dir, mode).ok());
    for (const std::string& p : {top, top + "/postgresql", dir}) {
      struct stat st {};
      ASSERT_EQ(stat(p.c_str(), &st), 0) << p;
      EXPECT_EQ(st.st_mode & 07777, mode) << p;
    }
    EXPECT_TRUE(MakeStateDir(dir, mode).ok()) << "an existing one is used";
  }
  umask(old);
  // A symbolic link or a file where the directory goes is refused, named.
  fs::create_directories(root + "/elsewhere");
  fs::create_directory_symlink(root + "/elsewhere", root + "/link");
  Status st = MakeStateDir(root + "/link", 0700);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find(root + "/link: the state directory is not a directory"),
            std::string::npos)
      << st.message();
  std::ofstream(root + "/file") << "x";
  EXPECT_FALSE(MakeStateDir(root + "/file", 0700).ok());
  // One another uid owns (only root can make one to test with).
  if (geteuid() == 0) {
    fs::create_directories(root + "/theirs");
    ASSERT_EQ(chown((root + "/theirs").c_str(), 12345, 12345), 0);
    st = MakeStateDir(root + "/theirs", 0700);
    ASSERT_FALSE(st.ok());
    EXPECT_NE(st.message().find("belongs to uid 12345"), std::string::npos) << st.message();
  }
  fs::remove_all(root);
}

}  // namespace
}  // namespace meridian::cli
