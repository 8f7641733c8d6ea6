#include "workload/configuration_json.hpp"

#include "iteragpu/error.hpp"

namespace iteragpu {

void write_measure_configuration(JsonWriter& json, const char* device_key,
                                 const MeasureConfiguration& configuration) {
  json.key("configuration").begin_object().key(device_key);
  json.text_or_null(configuration.device);
  for_each_configuration_member(configuration, [&json](const char* name, const auto& member) {
    json.key(name).value(member);
  });
  json.end_object();
}

MeasureConfiguration read_measure_configuration(const JsonObjectReader& json) {
  MeasureConfiguration configuration;
  json.read("device", configuration.device);
  for_each_configuration_member(configuration, [&json](const char* name, auto& member) {
    json.read(name, member);
  });
  return configuration;
}

}  // namespace iteragpu
