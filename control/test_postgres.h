// For the store tests: a real PostgreSQL server from Debian's `postgresql`
// package, started once per test binary (initdb into a temporary directory,
// pg_ctl start listening only on a unix socket in that directory), and a
// fresh database on it per test. As root, initdb and pg_ctl run as the
// `postgres` user (PostgreSQL refuses root), owning the directory.
//
// Never skipped: when the server cannot start, NewDatabase returns an error
// with the reason and the test fails with it.
//
// NewDurableDatabase is the same on a second server with PostgreSQL's
// durability settings as shipped (fsync on, synchronous_commit on): a commit
// returns once its WAL is flushed to disk. For benchmarks of durable writes.
#pragma once

#include <pwd.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>

#include "control/pg.h"
#include "core/status.h"

namespace meridian::control::testing {

class TestPostgres {
 public:
  // A new, empty database on the shared server (fsync off); its URI.
  static Result<std::string> NewDatabase() {
    static std::once_flag once;
    static std::unique_ptr<TestPostgres> server;
    static Status started;
    std::call_once(once, [] {
      server.reset(new TestPostgres());
      started = server->Start(/*durable=*/false);
    });
    if (!started.ok()) return started;
    return server->CreateDatabase();
  }

  // A new, empty database on the shared durable server (fsync on); its URI.
  static Result<std::string> NewDurableDatabase() {
    static std::once_flag once;
    static std::unique_ptr<TestPostgres> server;
    static Status started;
    std::call_once(once, [] {
      server.reset(new TestPostgres());
      started = server->Start(/*durable=*/true);
    });
    if (!started.ok()) return started;
    return server->CreateDatabase();
  }

  ~TestPostgres() {
    if (!dir_.empty()) {
      (void)Run(Bin("pg_ctl") + " -D " + dir_ + "/data -m immediate -w stop");
      std::filesystem::remove_all(dir_);
    }
  }

  // The directory of initdb, pg_ctl and pgbench: pg_config's, else Debian's 15.
  static std::string BinDir() {
    std::string dir;
    if (FILE* p = popen("pg_config --bindir 2>/dev/null", "r")) {
      char buf[512];
      if (fgets(buf, sizeof buf, p)) dir = buf;
      pclose(p);
    }
    while (!dir.empty() && (dir.back() == '\n' || dir.back() == ' ')) dir.pop_back();
    if (!dir.empty() && std::filesystem::exists(dir + "/initdb")) return dir;
    return "/usr/lib/postgresql/15/bin";
  }

 private:
  TestPostgres() = default;

  std::string Bin(const std::string& name) const { return bin_ + "/" + name; }

  // Runs `cmd` (as postgres when root), its output appended to setup.log.
  Status Run(const std::string& cmd) const {
    const std::string as = geteuid() == 0 ? "runuser -u postgres -- " : "";
    const std::string full = as + cmd + " >>" + dir_ + "/setup.log 2>&1";
    if (std::system(full.c_str()) == 0) return Status::Ok();
    std::ifstream log(dir_ + "/setup.log");
    std::stringstream text;
    text << log.rdbuf();
    return Status::Internal("test PostgreSQL: `" + full + "` failed:\n" + text.str());
  }

  Status Start(bool durable) {
    bin_ = BinDir();
    if (!std::filesystem::exists(Bin("initdb"))) {
      return Status::Internal("test PostgreSQL: no initdb in " + bin_ +
                              " (tools/install-deps installs Debian's postgresql)");
    }
    std::string tmpl = (std::filesystem::temp_directory_path() / "meridian-pg-XXXXXX").string();
    if (mkdtemp(tmpl.data()) == nullptr) return Status::Internal("test PostgreSQL: mkdtemp failed");
    dir_ = tmpl;
    if (geteuid() == 0) {
      const passwd* pw = getpwnam("postgres");
      if (pw == nullptr) {
        return Status::Internal("test PostgreSQL: running as root, and there is no postgres user "
                                "to run the server as (Debian's postgresql package makes one)");
      }
      if (chown(dir_.c_str(), pw->pw_uid, pw->pw_gid) != 0) {
        return Status::Internal("test PostgreSQL: cannot chown " + dir_ + " to postgres");
      }
    }
    // trust: only this directory's socket reaches the server. Unless durable,
    // fsync off (-F): a test's database need not survive a power cut.
    MERIDIAN_RETURN_IF_ERROR(Run(Bin("initdb") + " -D " + dir_ +
                                 "/data -U postgres -A trust -E UTF8 --no-sync"));
    const std::string fsync = durable ? "" : " -F";
    return Run(Bin("pg_ctl") + " -D " + dir_ + "/data -l " + dir_ + "/server.log -w -t 60 -o \"-k " +
               dir_ + " -c listen_addresses='' -p 5432" + fsync + "\" start");
  }

  std::string Uri(const std::string& db) const {
    return "postgresql://postgres@/" + db + "?host=" + dir_ + "&port=5432";
  }

  Result<std::string> CreateDatabase() {
    std::lock_guard<std::mutex> l(mu_);
    auto admin = PgConn::Open(Uri("postgres"));
    if (!admin.ok()) return admin.status();
    const std::string name = "test_" + std::to_string(++databases_);
    MERIDIAN_RETURN_IF_ERROR((*admin)->Exec("CREATE DATABASE " + name));
    return Uri(name);
  }

  std::string bin_, dir_;
  std::mutex mu_;
  int databases_ = 0;
};

}  // namespace meridian::control::testing
