#pragma once
// What this process has read so far, as the kernel counts it: the tests and the benchmark
// show that a checkpoint estimate reads headers, not the data.

#include <cstdint>
#include <fstream>
#include <optional>
#include <string>

namespace iteragpu::testing {

// Bytes read through read/pread so far (/proc/self/io rchar); none where the kernel does not
// say.
inline std::optional<std::uint64_t> bytes_read_so_far() {
  std::ifstream io("/proc/self/io");
  std::string key;
  std::uint64_t value = 0;
  while (io >> key >> value)
    if (key == "rchar:") return value;
  return std::nullopt;
}

}  // namespace iteragpu::testing
