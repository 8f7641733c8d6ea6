#include "mechanics/input_file.hpp"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>

namespace iteragpu {
namespace {

std::string kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISLNK(mode)) return "a symbolic link";
  return "not a regular file";
}

std::string size_text(std::uint64_t bytes) {
  if (bytes % (1ULL << 20) == 0) return std::to_string(bytes >> 20) + " MiB";
  return std::to_string(bytes) + " bytes";
}

}  // namespace

InputFile::InputFile(const std::string& path, const std::string& what, Links links)
    : path_(path), what_(what) {
  if (path.empty()) throw InputFileError("(empty name)", "no file name given (expected the " + what + ")");
  int flags = O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC;
  if (links == Links::kRefuse) flags |= O_NOFOLLOW;
  fd_ = ::open(path.c_str(), flags);
  if (fd_ < 0) {
    const int error = errno;
    if (error == ELOOP && links == Links::kRefuse)
      throw InputFileError(path, "is a symbolic link; the " + what + " must be a regular file");
    if (error == ENOENT) throw InputFileError(path, "does not exist (expected the " + what + ")");
    throw InputFileError(path, "cannot be opened: " + std::string(std::strerror(error)));
  }
  struct stat info {};
  if (fstat(fd_, &info) != 0) {
    const int error = errno;
    ::close(fd_);
    throw InputFileError(path, "cannot be examined: " + std::string(std::strerror(error)));
  }
  if (!S_ISREG(info.st_mode)) {
    ::close(fd_);
    throw InputFileError(path, "is " + kind_of(info.st_mode) + ", not a regular file; expected the " + what);
  }
  size_ = static_cast<std::uint64_t>(info.st_size);
}

InputFile::~InputFile() {
  if (fd_ >= 0) ::close(fd_);
}

std::string InputFile::read_all(std::uint64_t max_bytes) const {
  if (size_ > max_bytes)
    throw InputFileError(path_, "is " + std::to_string(size_) + " bytes, more than the " +
                                    size_text(max_bytes) + " a " + what_ + " may have");
  std::string content;
  content.reserve(static_cast<std::size_t>(size_));
  char chunk[65536];
  for (;;) {
    const ssize_t got = ::read(fd_, chunk, sizeof chunk);
    if (got < 0) {
      if (errno == EINTR) continue;
      throw InputFileError(path_, "read error: " + std::string(std::strerror(errno)));
    }
    if (got == 0) break;
    if (content.size() + static_cast<std::size_t>(got) > max_bytes)  // it grew while read
      throw InputFileError(path_, "grew beyond the " + size_text(max_bytes) + " a " + what_ +
                                      " may have while it was read");
    content.append(chunk, static_cast<std::size_t>(got));
  }
  return content;
}

std::string InputFile::read_at(std::uint64_t offset, std::size_t length) const {
  std::string bytes(length, '\0');
  std::size_t done = 0;
  while (done < length) {
    const ssize_t got = ::pread(fd_, &bytes[done], length - done, static_cast<off_t>(offset + done));
    if (got < 0) {
      if (errno == EINTR) continue;
      throw InputFileError(path_, "read error: " + std::string(std::strerror(errno)));
    }
    if (got == 0)
      throw InputFileError(path_, "ends at byte " + std::to_string(offset + done) + "; expected " +
                                      std::to_string(length) + " bytes at offset " + std::to_string(offset));
    done += static_cast<std::size_t>(got);
  }
  return bytes;
}

std::string read_input_file(const std::string& path, const std::string& what, std::uint64_t max_bytes) {
  return InputFile(path, what).read_all(max_bytes);
}

}  // namespace iteragpu
