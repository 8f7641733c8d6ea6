#pragma once
// SHA-256 (FIPS 180-4), used to tie a results row to the exact measurement file and for the
// lab-kit manifest. Small enough to carry rather than add a crypto library dependency.

#include <cstddef>
#include <cstdint>
#include <string>

namespace iteragpu {

class InputFile;

class Sha256 {
 public:
  Sha256();
  void update(const void* data, std::size_t size);
  std::string hex_digest();  // 64 lower-case hex digits; finishes the hash

 private:
  void compress(const std::uint8_t* block);
  std::uint32_t state_[8];
  std::uint8_t buffer_[64];
  std::size_t buffered_ = 0;
  std::uint64_t total_bytes_ = 0;
};

std::string sha256_hex(const std::string& data);
// Opens the file as every reader does (input_file.hpp); InputFileError when it cannot.
std::string sha256_file_hex(const std::string& path);
std::string sha256_file_hex(const InputFile& file);

}  // namespace iteragpu
