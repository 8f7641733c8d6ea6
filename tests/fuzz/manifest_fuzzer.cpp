// A lab kit's MANIFEST.json, through verify_lab_kit on a kit folder holding it.
#include <stdlib.h>
#include <sys/stat.h>

#include <fstream>
#include <string>

#include "iteragpu/error.hpp"
#include "iteragpu/lab_kit.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::string kit = [] {
    char pattern[] = "/tmp/iteragpu-fuzz-kit-XXXXXX";
    const char* made = mkdtemp(pattern);
    std::ofstream(std::string(made) + "/README.md") << "a member\n";
    return std::string(made);
  }();
  std::ofstream(kit + "/MANIFEST.json", std::ios::binary | std::ios::trunc)
      .write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  try {
    const auto report = iteragpu::verify_lab_kit(kit);
    (void)report.to_json();
  } catch (const iteragpu::Error&) {
  }
  return 0;
}
