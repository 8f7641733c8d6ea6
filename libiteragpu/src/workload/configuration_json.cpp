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
  if (!configuration.model.empty())  // the decoder workload's members; none for the synthetic MLP
    json.key("model").value(configuration.model).key("new_tokens").value(configuration.new_tokens);
  json.end_object();
}

MeasureConfiguration read_measure_configuration(const JsonObjectReader& json) {
  MeasureConfiguration configuration;
  json.read("device", configuration.device);
  for_each_configuration_member(configuration, [&json](const char* name, auto& member) {
    json.read(name, member);
  });
  if (json.has("model")) json.read("model", configuration.model).read("new_tokens", configuration.new_tokens);
  return configuration;
}

}  // namespace iteragpu
