// A measurement document as `results add`, `compare`, the runner (from its workers) and
// Python's Measurement.read() take it: the bounded JSON parser, validation against the
// shipped measurement schema, then the reader; what it reads must write back to a document
// it reads again identically.
#include <cstdlib>
#include <string>

#include "iteragpu/error.hpp"
#include "iteragpu/phase_measurer.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const iteragpu::Measurement measurement = iteragpu::Measurement::from_json(text, "fuzz");
    const std::string written = measurement.to_json();
    if (iteragpu::Measurement::from_json(written, "fuzz").to_json() != written) std::abort();
  } catch (const iteragpu::Error&) {
  }
  return 0;
}
