// libFuzzer target for the safetensors header parser (libiteragpu/src/safetensors_header.cpp):
// the input is a whole file held in memory (8-byte length, JSON header, data), so the
// length checks, the UTF-8 and JSON checks, every entry's validation and the offset
// cross-check are all reached. A malformed input must end in InputFileError (a
// DataFileError), never in a crash, a hang, an overflow or another exception.
// Seeds: tests/fuzz/corpus/safetensors_header/.
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "iteragpu/error.hpp"
#include "estimate/safetensors_header.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    const iteragpu::SafetensorsHeader header = iteragpu::parse_safetensors_bytes(data, size, "fuzz-input");
    // What is accepted must be consistent: the tensors tile the data, shape × dtype = bytes.
    std::uint64_t covered = 0;
    for (const auto& tensor : header.tensors) {
      if (tensor.end < tensor.begin || tensor.begin != covered) std::abort();
      if (tensor.elements * tensor.bits / 8 != tensor.bytes()) std::abort();
      covered = tensor.end;
    }
    if (covered != header.data_bytes || 8 + header.header_bytes + header.data_bytes != size) std::abort();
  } catch (const iteragpu::DataFileError&) {
    // A refused input: the expected outcome for most of them.
  }
  return 0;
}
