#include "atomic_output_file.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "iteragpu/error.hpp"

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

// Closes the descriptor and removes the temporary file unless release() was called.
class TemporaryFile {
 public:
  explicit TemporaryFile(const std::string& target) {
    static std::atomic<unsigned> counter{0};
    const std::string stem = directory_of(target) + "/." + file_name_of(target) + ".tmp-" +
                             std::to_string(getpid()) + "-";
    for (int attempt = 0; attempt < 100; ++attempt) {
      path_ = stem + std::to_string(counter++);
      // 0666 minus the umask, like any file the user creates; O_EXCL: never reuse a file.
      fd_ = open(path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
      if (fd_ >= 0 || errno != EEXIST) break;
    }
    if (fd_ < 0)
      throw ResourceUnavailable("cannot create a temporary file in " + directory_of(target) +
                                ": " + system_reason(errno));
  }
  ~TemporaryFile() {
    if (fd_ >= 0) close(fd_);
    if (!path_.empty()) unlink(path_.c_str());
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
  link_without_overwriting(temporary.path(), path);
  // The directory entry is made durable too; failing to flush it loses nothing already there.
  const int directory_fd = open(directory_of(path).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (directory_fd >= 0) {
    fsync(directory_fd);
    close(directory_fd);
  }
}  // ~TemporaryFile removes the temporary name (or, after a failure, the whole file)

void replace_atomically(const std::string& path, const std::string& content) {
  TemporaryFile temporary(path);
  temporary.write_all(content);
  if (rename(temporary.path().c_str(), path.c_str()) != 0)
    throw ResourceUnavailable("cannot replace " + path + ": " + system_reason(errno));
  const int directory_fd = open(directory_of(path).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (directory_fd >= 0) {
    fsync(directory_fd);
    close(directory_fd);
  }
}  // the temporary name is gone after the rename; ~TemporaryFile's unlink finds nothing

DirectoryLock::DirectoryLock(const std::string& path) {
  // The directory, not the file: the file is replaced by rename, so a lock on its inode
  // would not exclude a process that opened the new one.
  fd_ = open(directory_of(path).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
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
