#pragma once
// Small safetensors files written by the tests themselves: 8-byte little-endian header
// length, the JSON header, then the data (zeros; only headers are ever read). Hand-written
// headers make the malformed cases.

#include <fcntl.h>
#include <unistd.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace iteragpu::testing {

struct TensorSpec {
  std::string name;
  std::string dtype;
  std::vector<std::uint64_t> shape;
};

inline unsigned test_dtype_bits(const std::string& dtype) {
  if (dtype == "F4") return 4;
  if (dtype.rfind("F6_", 0) == 0) return 6;
  if (dtype == "F16" || dtype == "BF16" || dtype == "I16" || dtype == "U16") return 16;
  if (dtype == "F32" || dtype == "I32" || dtype == "U32") return 32;
  if (dtype == "F64" || dtype == "I64" || dtype == "U64" || dtype == "C64") return 64;
  return 8;  // BOOL, U8, I8, F8_*
}

inline std::uint64_t tensor_bytes(const TensorSpec& tensor) {
  std::uint64_t elements = 1;
  for (std::uint64_t d : tensor.shape) elements *= d;
  return elements * test_dtype_bits(tensor.dtype) / 8;
}

// The header of `tensors` laid out back to back in this order; `data_bytes` gets their sum.
inline std::string safetensors_header(const std::vector<TensorSpec>& tensors, std::uint64_t& data_bytes,
                                      const std::string& metadata_json = "{\"format\":\"pt\"}") {
  std::string json = "{";
  if (!metadata_json.empty()) json += "\"__metadata__\":" + metadata_json;
  std::uint64_t offset = 0;
  for (const auto& tensor : tensors) {
    const std::uint64_t end = offset + tensor_bytes(tensor);
    if (json.size() > 1) json += ",";
    json += "\"" + tensor.name + "\":{\"dtype\":\"" + tensor.dtype + "\",\"shape\":[";
    for (std::size_t i = 0; i < tensor.shape.size(); ++i) json += (i ? "," : "") + std::to_string(tensor.shape[i]);
    json += "],\"data_offsets\":[" + std::to_string(offset) + "," + std::to_string(end) + "]}";
    offset = end;
  }
  data_bytes = offset;
  json += "}";
  while (json.size() % 8 != 0) json += ' ';  // the reference pads with spaces
  return json;
}

inline std::string le64(std::uint64_t value) {
  std::string bytes(8, '\0');
  for (int i = 0; i < 8; ++i) bytes[i] = static_cast<char>((value >> (8 * i)) & 0xff);
  return bytes;
}

// A whole file: length, `header` as given, `data_bytes` zero bytes.
inline std::string safetensors_bytes(const std::string& header, std::uint64_t data_bytes) {
  return le64(header.size()) + header + std::string(static_cast<std::size_t>(data_bytes), '\0');
}

inline void write_bytes(const std::string& path, const std::string& bytes) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw std::runtime_error("cannot create " + path);
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n <= 0) {
      ::close(fd);
      throw std::runtime_error("cannot write " + path);
    }
    done += static_cast<std::size_t>(n);
  }
  ::close(fd);
}

inline void write_safetensors(const std::string& path, const std::vector<TensorSpec>& tensors) {
  std::uint64_t data_bytes = 0;
  const std::string header = safetensors_header(tensors, data_bytes);
  write_bytes(path, safetensors_bytes(header, data_bytes));
}

// A header then a hole: a file of `data_bytes` data that occupies no disk (ftruncate).
inline void write_sparse_safetensors(const std::string& path, const std::vector<TensorSpec>& tensors) {
  std::uint64_t data_bytes = 0;
  const std::string header = safetensors_header(tensors, data_bytes);
  write_bytes(path, le64(header.size()) + header);
  if (::truncate(path.c_str(), static_cast<off_t>(8 + header.size() + data_bytes)) != 0)
    throw std::runtime_error("cannot extend " + path);
}

}  // namespace iteragpu::testing
