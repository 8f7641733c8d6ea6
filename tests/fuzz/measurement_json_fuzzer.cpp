// A measurement file as `results add` reads it: the bounded JSON parser, then validation
// against the shipped measurement schema.
#include <string>

#include "iteragpu/error.hpp"
#include "mechanics/json_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  rapidjson::Document document;
  if (!iteragpu::parse_json(text, document).empty()) return 0;
  try {
    (void)iteragpu::schema_violation_of(document, "measurement.schema.json");
  } catch (const iteragpu::Error&) {
  }
  return 0;
}
