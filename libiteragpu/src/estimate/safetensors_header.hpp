#pragma once
// The header of a safetensors file, read and validated without touching the tensor data.
//
// Layout: 8 bytes little-endian unsigned header length N, N bytes of UTF-8 JSON (an object:
// tensor name → {"dtype", "shape", "data_offsets": [begin, end]}, plus an optional
// "__metadata__" object of strings), then the data; offsets are relative to the byte after
// the header. Validation follows the reference implementation (huggingface/safetensors):
// N at most 100,000,000; every tensor's shape × dtype equals its data size; the tensors fill
// the data exactly, with no overlap, no gap and no trailing byte. Every failure is an
// InputFileError "PATH: reason" naming the tensor where there is one.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "mechanics/input_file.hpp"

namespace iteragpu {

// The reference implementation's limit on N (MAX_HEADER_SIZE).
inline constexpr std::uint64_t kSafetensorsMaxHeaderBytes = 100'000'000;
inline constexpr std::uint64_t kSafetensorsLengthBytes = 8;

struct SafetensorsTensor {
  std::string name;
  std::string dtype;          // as written: "BF16"
  unsigned bits = 0;          // per element: 4 (F4), 6 (F6_*), 8, 16, 32, 64
  std::vector<std::uint64_t> shape;
  std::uint64_t elements = 0;  // product of shape (1 for a scalar)
  std::uint64_t begin = 0;     // data_offsets, relative to the first data byte
  std::uint64_t end = 0;
  std::uint64_t bytes() const { return end - begin; }
};

struct SafetensorsHeader {
  std::uint64_t header_bytes = 0;  // N
  std::uint64_t data_bytes = 0;    // file size − 8 − N, every byte covered by one tensor
  std::vector<SafetensorsTensor> tensors;  // in data order (begin, then end)
  std::vector<std::pair<std::string, std::string>> metadata;  // "__metadata__", as written
};

// Bits per element of a safetensors dtype; 0 when the format does not define it.
unsigned safetensors_dtype_bits(const std::string& dtype);
// "BOOL, F4, F6_E2M3, ...": every dtype accepted, for messages and documentation.
const std::string& safetensors_dtypes_accepted();

// N from the file's first 8 bytes, checked against the limit and the file size.
std::uint64_t safetensors_header_length(std::string_view first_eight, std::uint64_t file_size,
                                        const std::string& path);
// Validates the N header bytes of a file of `file_size` bytes (the in-memory parser).
SafetensorsHeader parse_safetensors_header(std::string_view header, std::uint64_t file_size,
                                           const std::string& path);
// The whole check on a file held in memory: length, header, offsets (the fuzz target's entry).
SafetensorsHeader parse_safetensors_bytes(const std::uint8_t* bytes, std::size_t size,
                                          const std::string& path);
// Reads the length and the header of an open file with pread; never the data.
SafetensorsHeader read_safetensors_header(const InputFile& file);

// A tensor name as a message shows it: quoted, control bytes escaped, long names shortened.
std::string quoted_tensor_name(const std::string& name);

}  // namespace iteragpu
