#include "control/file_modes.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

namespace meridian::control {

namespace {

namespace fs = std::filesystem;

// Clears the bits of `path` beyond `allowed`. False with errno on failure.
bool Clear(const std::string& path, const struct stat& st, mode_t allowed,
           std::vector<std::string>* changed) {
  const mode_t mode = st.st_mode & 07777;
  if ((mode & ~allowed) == 0) return true;
  if (chmod(path.c_str(), mode & allowed) != 0) return false;
  changed->push_back(path);
  return true;
}

// A job's own directory: jobs/<id>/work or jobs/<id>/checkpoint.
bool JobsOwn(const fs::path& p) {
  const std::string leaf = p.filename().string();
  return (leaf == "work" || leaf == "checkpoint") &&
         p.parent_path().parent_path().filename() == "jobs";
}

Status Walk(const fs::path& dir, mode_t dir_mode, std::vector<std::string>* changed) {
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const fs::path p = it->path();
    struct stat st {};
    if (lstat(p.c_str(), &st) != 0) continue;  // gone meanwhile
    if (S_ISLNK(st.st_mode) || st.st_uid != geteuid()) continue;
    if (S_ISDIR(st.st_mode)) {
      const bool jobs_own = JobsOwn(p);
      if (!Clear(p.string(), st, jobs_own ? kDaemonDirMode : dir_mode, changed)) {
        return Status::Internal(p.string() + ": cannot tighten its mode: " + std::strerror(errno));
      }
      if (!jobs_own) MERIDIAN_RETURN_IF_ERROR(Walk(p, dir_mode, changed));
    } else if (S_ISREG(st.st_mode)) {
      if (!Clear(p.string(), st, kDaemonFileMode, changed)) {
        return Status::Internal(p.string() + ": cannot tighten its mode: " + std::strerror(errno));
      }
    }
  }
  if (ec) return Status::Internal(dir.string() + ": cannot list: " + ec.message());
  return Status::Ok();
}

}  // namespace

Result<std::vector<std::string>> TightenDaemonFiles(const TightenOptions& o) {
  std::vector<std::string> changed;
  if (!o.db.empty()) {
    for (const char* suffix : {"", "-wal", "-shm", "-journal", ".signin"}) {
      const std::string path = o.db + suffix;
      struct stat st {};
      if (lstat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
      if (!Clear(path, st, kDaemonFileMode, &changed)) {
        return Status::Internal(path + ": cannot tighten its mode: " + std::strerror(errno));
      }
    }
  }
  if (o.state_dir.empty()) return changed;
  struct stat st {};
  if (lstat(o.state_dir.c_str(), &st) != 0) return changed;
  if (!S_ISDIR(st.st_mode)) {
    return Status::Invalid("state_dir: \"" + o.state_dir + "\" is not a directory");
  }
  if (st.st_uid == geteuid() && !Clear(o.state_dir, st, o.dir_mode, &changed)) {
    return Status::Internal(o.state_dir + ": cannot tighten its mode: " + std::strerror(errno));
  }
  MERIDIAN_RETURN_IF_ERROR(Walk(o.state_dir, o.dir_mode, &changed));
  return changed;
}

}  // namespace meridian::control
