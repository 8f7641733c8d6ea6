#pragma once
// What every fuzz target shares: the input as a file (an anonymous in-memory file, so the
// product's own readers run on it, the input mechanism included).

#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <string>

namespace iteragpu::fuzzing {

// An in-memory file holding `data`, reachable by path as long as the object lives.
class MemoryFile {
 public:
  MemoryFile(const std::uint8_t* data, std::size_t size) : fd_(memfd_create("iteragpu-fuzz", 0)) {
    std::size_t done = 0;
    while (fd_ >= 0 && done < size) {
      const ssize_t written = write(fd_, data + done, size - done);
      if (written <= 0) break;
      done += static_cast<std::size_t>(written);
    }
  }
  ~MemoryFile() {
    if (fd_ >= 0) close(fd_);
  }
  MemoryFile(const MemoryFile&) = delete;
  MemoryFile& operator=(const MemoryFile&) = delete;
  std::string path() const { return "/proc/self/fd/" + std::to_string(fd_); }

 private:
  int fd_;
};

}  // namespace iteragpu::fuzzing
