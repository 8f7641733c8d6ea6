// A measurement file as `results add` and `compare` read it: the bounded JSON parser,
// validation against the shipped measurement schema, then Measurement::from_json, whose
// every refusal must be a DataFileError and whose result must write back what it read.
#include <cstdlib>
#include <string>

#include "iteragpu/error.hpp"
#include "iteragpu/phase_measurer.hpp"
#include "mechanics/json_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  rapidjson::Document document;
  if (iteragpu::parse_json(text, document).empty()) {
    try {
      (void)iteragpu::schema_violation_of(document, "measurement.schema.json");
    } catch (const iteragpu::Error&) {
    }
  }
  try {
    const iteragpu::Measurement measurement = iteragpu::Measurement::from_json(text, "fuzz");
    const std::string written = measurement.to_json();
    if (iteragpu::Measurement::from_json(written, "fuzz").to_json() != written) std::abort();
  } catch (const iteragpu::DataFileError&) {
  }
  return 0;
}
