#include "mechanics/atomic_output_file.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "iteragpu/error.hpp"
#include "iteragpu/output_files.hpp"
#include "mechanics/interrupts_held.hpp"

namespace iteragpu {
namespace {

std::string directory_of(const std::string& path) {
  const auto slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

std::string file_name_of(const std::string& path) {
  const auto slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string system_reason(int error_number) { return std::strerror(error_number); }

// The temporary files this process has open, so that a signal handler can remove them
// (remove_live_temporary_files). Fixed slots of plain characters: nothing to allocate or
// lock in a handler.
constexpr int kTemporarySlots = 16;
struct TemporarySlot {
  std::atomic<bool> used{false};
  char path[PATH_MAX];
};
TemporarySlot temporary_slots[kTemporarySlots];

int register_temporary(const std::string& path) {
  if (path.size() >= PATH_MAX) return -1;
  for (int slot = 0; slot < kTemporarySlots; ++slot) {
    if (temporary_slots[slot].used.load()) continue;
    std::memcpy(temporary_slots[slot].path, path.c_str(), path.size() + 1);
    temporary_slots[slot].used.store(true);
    return slot;
  }
  return -1;  // more than 16 at once: still removed by the destructor or by a later writer
}

void unregister_temporary(int slot) {
  if (slot >= 0) temporary_slots[slot].used.store(false);
}

constexpr const char* kTemporaryMarker = ".tmp-";

// Temporary files of `target` left by writers that are gone (killed with SIGKILL, or a
// machine that stopped): ".<name>.tmp-<pid>-<n>" whose process no longer exists.
void remove_stale_temporaries(const std::string& target) {
  const std::string prefix = "." + file_name_of(target) + kTemporaryMarker;
  DIR* directory = opendir(directory_of(target).c_str());
  if (!directory) return;  // creating the temporary file will report the real problem
  while (const dirent* entry = readdir(directory)) {
    const std::string name = entry->d_name;
    if (name.compare(0, prefix.size(), prefix) != 0) continue;
    const std::string rest = name.substr(prefix.size());
    const auto dash = rest.find('-');
    if (dash == std::string::npos || dash == 0 || rest.find_first_not_of("0123456789-") != std::string::npos)
      continue;
    const long pid = std::strtol(rest.substr(0, dash).c_str(), nullptr, 10);
    if (pid > 0 && pid != static_cast<long>(getpid()) && kill(static_cast<pid_t>(pid), 0) != 0 &&
        errno == ESRCH)
      unlink((directory_of(target) + "/" + name).c_str());
  }
  closedir(directory);
}

std::atomic<bool> committed{false};
static_assert(std::atomic<bool>::is_always_lock_free);

// Closes the descriptor and removes the temporary file unless release() was called.
class TemporaryFile {
 public:
  explicit TemporaryFile(const std::string& target) {
    static std::atomic<unsigned> counter{0};
    remove_stale_temporaries(target);
    const std::string stem = directory_of(target) + "/." + file_name_of(target) + kTemporaryMarker +
                             std::to_string(getpid()) + "-";
    const InterruptsHeld held;  // created and registered for removal as one step
    int error_number = 0;
    for (int attempt = 0; attempt < 100; ++attempt) {
      path_ = stem + std::to_string(counter++);
      // 0666 minus the umask, like any file the user creates; O_EXCL: never reuse a file.
      fd_ = open(path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
      error_number = errno;
      if (fd_ >= 0 || error_number != EEXIST) break;
    }
    if (fd_ < 0)
      throw ResourceUnavailable("cannot create a temporary file in " + directory_of(target) +
                                ": " + system_reason(error_number));
    slot_ = register_temporary(path_);
  }
  ~TemporaryFile() {
    if (fd_ >= 0) close(fd_);
    if (!path_.empty()) unlink(path_.c_str());
    unregister_temporary(slot_);
  }

  // The permission bits of the file it will replace (before write_all).
  void set_mode(mode_t mode) {
    if (fchmod(fd_, mode & 07777) != 0) fail("cannot set the permissions of", errno);
  }
  TemporaryFile(const TemporaryFile&) = delete;
  TemporaryFile& operator=(const TemporaryFile&) = delete;

  void write_all(const std::string& content) {
    const char* data = content.data();
    std::size_t left = content.size();
    while (left > 0) {
      const ssize_t written = write(fd_, data, left);
      if (written < 0 && errno == EINTR) continue;
      if (written <= 0) fail("cannot write", errno);
      data += written;
      left -= static_cast<std::size_t>(written);
    }
    if (fsync(fd_) != 0) fail("cannot flush", errno);
    const int fd = fd_;
    fd_ = -1;
    if (close(fd) != 0) fail("cannot close", errno);
  }

  const std::string& path() const { return path_; }

 private:
  [[noreturn]] void fail(const char* what, int error_number) {
    throw ResourceUnavailable(std::string(what) + " the temporary file " + path_ + ": " +
                              system_reason(error_number));
  }
  std::string path_;
  int fd_ = -1;
  int slot_ = -1;
};

// Puts the complete temporary file at `target` without ever replacing an existing file.
void link_without_overwriting(const std::string& temporary, const std::string& target) {
  if (link(temporary.c_str(), target.c_str()) == 0) return;
  int error_number = errno;
  // Some file systems (FAT, some FUSE mounts) have no hard links; a rename that refuses to
  // replace is equally safe.
  if (error_number == EPERM || error_number == ENOTSUP || error_number == EOPNOTSUPP ||
      error_number == EMLINK) {
    if (renameat2(AT_FDCWD, temporary.c_str(), AT_FDCWD, target.c_str(), RENAME_NOREPLACE) == 0)
      return;
    error_number = errno;
  }
  if (error_number == EEXIST)
    throw OutputExists(target + " appeared while the result was being produced; it was left "
                                "untouched and no result was written");
  throw ResourceUnavailable("cannot create " + target + ": " + system_reason(error_number));
}

}  // namespace

void ensure_output_absent(const std::string& path, const std::string& field) {
  if (path.empty()) throw UsageError(field, "empty path; expected the name of a new file");
  struct stat info {};
  if (lstat(path.c_str(), &info) == 0)
    throw OutputExists(path + " already exists; results are never overwritten, choose a new file name");
  if (errno != ENOENT)
    throw ResourceUnavailable("cannot use " + path + " as output: " + system_reason(errno));
  const std::string directory = directory_of(path);
  if (stat(directory.c_str(), &info) != 0)
    throw ResourceUnavailable("the directory " + directory + " of " + path +
                              " is not usable: " + system_reason(errno));
  if (!S_ISDIR(info.st_mode))
    throw ResourceUnavailable(directory + " (the directory of " + path + ") is not a directory");
  if (access(directory.c_str(), W_OK | X_OK) != 0)
    throw ResourceUnavailable("cannot create files in " + directory + ": " + system_reason(errno));
}

void publish_exclusively(const std::string& path, const std::string& content) {
  if (path.empty()) throw UsageError("output", "empty path; expected the name of a new file");
  // No separate existence check here: link() itself refuses an existing name atomically.
  TemporaryFile temporary(path);
  temporary.write_all(content);
  {
    const InterruptsHeld held;  // the file in place and the commit recorded as one step
    link_without_overwriting(temporary.path(), path);
    committed.store(true);
  }
  // The directory entry is made durable too; failing to flush it loses nothing already there.
  const int directory_fd = open(directory_of(path).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (directory_fd >= 0) {
    fsync(directory_fd);
    close(directory_fd);
  }
}  // ~TemporaryFile removes the temporary name (or, after a failure, the whole file)

std::string resolved_existing_path(const std::string& path) {
  char resolved[PATH_MAX];
  if (realpath(path.c_str(), resolved)) return resolved;
  return path;  // not there yet (or a dangling link, reported when it is written)
}

void replace_atomically(const std::string& path, const std::string& content) {
  // Through a symbolic link, the file it points to is replaced and the link kept.
  const std::string target = resolved_existing_path(path);
  TemporaryFile temporary(target);
  struct stat existing {};
  if (stat(target.c_str(), &existing) == 0) temporary.set_mode(existing.st_mode);
  temporary.write_all(content);
  {
    const InterruptsHeld held;  // the file in place and the commit recorded as one step
    if (rename(temporary.path().c_str(), target.c_str()) != 0)
      throw ResourceUnavailable("cannot replace " + target + ": " + system_reason(errno));
    committed.store(true);
  }
  const int directory_fd = open(directory_of(target).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (directory_fd >= 0) {
    fsync(directory_fd);
    close(directory_fd);
  }
}  // the temporary name is gone after the rename; ~TemporaryFile's unlink finds nothing

bool output_committed() noexcept { return committed.load(); }

void note_output_committed() noexcept { committed.store(true); }

void remove_live_temporary_files() noexcept {
  for (TemporarySlot& slot : temporary_slots)
    if (slot.used.load()) unlink(slot.path);
}

DirectoryLock::DirectoryLock(const std::string& path) {
  // The directory, not the file: the file is replaced by rename, so a lock on its inode
  // would not exclude a process that opened the new one. The file's real directory, so that
  // writers reaching it through different symbolic links take turns too.
  fd_ = open(directory_of(resolved_existing_path(path)).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd_ < 0)
    throw ResourceUnavailable("cannot open the directory of " + path + ": " + system_reason(errno));
  while (flock(fd_, LOCK_EX) != 0) {
    if (errno == EINTR) continue;
    const int error_number = errno;
    close(fd_);
    throw ResourceUnavailable("cannot lock the directory of " + path + ": " + system_reason(error_number));
  }
}

DirectoryLock::~DirectoryLock() {
  if (fd_ >= 0) close(fd_);  // closing releases the lock
}

}  // namespace iteragpu
