// `meridian serve`'s first-start sign-in link: on an empty database it makes
// an admin token, keeps it in DB.signin (mode 0600) and prints the
// #token=... link only to a terminal (a real pseudo-terminal here), never to
// a log; a database that already has tenants, or a revoked token, gets none.
#include <gtest/gtest.h>
#include <httplib.h>
#include <pty.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <regex>
#include <sstream>
#include <string>
#include <thread>

namespace meridian::cli {
namespace {

namespace fs = std::filesystem;

std::string ReadFile(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

fs::path TempDir() {
  std::string t = (fs::temp_directory_path() / "meridian-signin-XXXXXX").string();
  if (mkdtemp(t.data()) == nullptr) return fs::path();
  // 0711: a root daemon refuses a state directory its tenants' uids cannot
  // pass through to their own (docs/backends.md, "Tenant isolation").
  fs::permissions(t, fs::perms::owner_all | fs::perms::group_exec | fs::perms::others_exec,
                  fs::perm_options::replace);
  return fs::path(t);
}

// `meridian serve` on a free port; its output goes to a pseudo-terminal
// (`tty`) or to the file `log`. Returns what it printed by the time `until`
// appeared (or 10 s passed); `while_up` runs on that output before the daemon
// is stopped.
std::string Serve(const fs::path& db, bool tty, const std::string& until, const fs::path& log,
                  const std::function<void(const std::string&)>& while_up = {}) {
  int master = -1;
  pid_t pid = tty ? forkpty(&master, nullptr, nullptr, nullptr) : fork();
  if (pid == 0) {
    if (!tty) {
      FILE* f = std::fopen(log.c_str(), "w");
      if (f) {
        dup2(fileno(f), 1);
        dup2(fileno(f), 2);
      }
    }
    execl(MERIDIAN_BINARY, MERIDIAN_BINARY, "serve", "--listen", "127.0.0.1:0", "--db", db.c_str(),
          static_cast<char*>(nullptr));
    _exit(127);
  }
  std::string out;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (out.find(until) == std::string::npos && std::chrono::steady_clock::now() < deadline) {
    if (tty) {
      fd_set fds;
      FD_ZERO(&fds);
      FD_SET(master, &fds);
      timeval tv{0, 100000};
      if (select(master + 1, &fds, nullptr, nullptr, &tv) > 0) {
        char buf[4096];
        const ssize_t n = read(master, buf, sizeof buf);
        if (n > 0) out.append(buf, static_cast<size_t>(n));
      }
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      out = ReadFile(log);
    }
  }
  if (while_up) while_up(out);
  kill(pid, SIGTERM);
  int status = 0;
  waitpid(pid, &status, 0);
  if (tty) close(master);
  return out;
}

TEST(ServeSignIn, FirstStartAtATerminalPrintsALinkThatSignsInAsAdmin) {
  const fs::path dir = TempDir();
  const fs::path db = dir / "m.db";
  const std::string out = Serve(db, true, "to sign in as admin", {});
  std::smatch m;
  ASSERT_TRUE(std::regex_search(out, m, std::regex(R"(open http://127\.0\.0\.1:(\d+)/#token=(mrd_[0-9a-f]+) )")))
      << out;
  const std::string token = m[2];
  EXPECT_EQ(ReadFile(dir / "m.db.signin"), token + "\n");
  struct stat st {};
  ASSERT_EQ(stat((dir / "m.db.signin").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);

  // A second start offers the same token, and the API takes it as an admin's
  // (registering a node is admin only).
  int status = 0;
  const std::string again = Serve(db, true, "to sign in as admin", {}, [&](const std::string& o) {
    std::smatch a;
    if (!std::regex_search(o, a, std::regex(R"(open http://127\.0\.0\.1:(\d+)/#token=(mrd_[0-9a-f]+) )"))) return;
    EXPECT_EQ(a[2], token);
    httplib::Client c("127.0.0.1", std::stoi(a[1]));
    auto r = c.Post("/v1/nodes", {{"Authorization", "Bearer " + token}},
                    R"({"name": "box", "gpu_model": "T4", "gpus": 1, "vcpus": 4, "ram_gib": 16})",
                    "application/json");
    status = r ? r->status : -1;
  });
  EXPECT_EQ(status, 201) << again;
  fs::remove_all(dir);
}

TEST(ServeSignIn, NotATerminalTheTokenStaysOutOfTheOutput) {
  const fs::path dir = TempDir();
  const fs::path db = dir / "m.db";
  const std::string out = Serve(db, false, "not printed because", dir / "serve.log");
  const std::string token = ReadFile(dir / "m.db.signin");
  ASSERT_FALSE(token.empty()) << out;
  EXPECT_EQ(out.find(token.substr(0, token.size() - 1)), std::string::npos) << out;
  EXPECT_NE(out.find((dir / "m.db.signin").string()), std::string::npos) << out;
  fs::remove_all(dir);
}

TEST(ServeSignIn, ADatabaseWithTenantsOrARevokedTokenGetsNoLink) {
  const fs::path dir = TempDir();
  const fs::path db = dir / "m.db";
  // A tenant's token before the first start: no admin token is made.
  ASSERT_EQ(std::system((std::string(MERIDIAN_BINARY) + " token create --db " + db.string() +
                         " --tenant alice > /dev/null").c_str()),
            0);
  const std::string out = Serve(db, true, "meridian token create", {});
  EXPECT_NE(out.find("sign in with a token from"), std::string::npos) << out;
  EXPECT_FALSE(fs::exists(dir / "m.db.signin"));

  // A first-start token that was revoked is not offered again.
  const fs::path db2 = dir / "n.db";
  Serve(db2, false, "not printed because", dir / "serve.log");
  const std::string token = ReadFile(dir / "n.db.signin");
  ASSERT_FALSE(token.empty());
  ASSERT_EQ(std::system((std::string(MERIDIAN_BINARY) + " token revoke --db " + db2.string() + " " +
                         token.substr(0, token.size() - 1))
                            .c_str()),
            0);
  const std::string after = Serve(db2, true, "meridian token create", {});
  EXPECT_EQ(after.find("#token=mrd_"), std::string::npos) << after;
  fs::remove_all(dir);
}

}  // namespace
}  // namespace meridian::cli
