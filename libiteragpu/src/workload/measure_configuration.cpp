// A measurement request parsed once, at the edge: whole numbers in range, then checked by
// the workload (synthetic_model.cpp: the bounds that keep every size computation far from
// overflow); anything within them that does not fit on the GPU is the device's
// out-of-memory answer. And the configuration's one JSON form (configuration_json.hpp),
// written and read back here only.

#include "iteragpu/measure_configuration.hpp"

#include <limits>
#include <string>
#include <utility>
#include <variant>

#include "iteragpu/error.hpp"
#include "iteragpu/synthetic_model.hpp"
#include "mechanics/quantity_parser.hpp"
#include "workload/configuration_json.hpp"
#include "workload/decoder_workload.hpp"
#include "workload/workload.hpp"
#include "estimate/model_files.hpp"

namespace iteragpu {

MeasureConfiguration MeasureConfiguration::parse(const MeasureRequest& request) {
  // Which workload, and the options only another one has.
  if (request.model && request.model->empty())
    throw UsageError("model", "empty value; expected a checkpoint folder (config.json and safetensors weights)");
  const bool checkpoint = request.model.has_value();
  if (checkpoint)
    for (const auto& [name, value] : {std::pair{"width", &request.width}, std::pair{"hidden", &request.hidden}})
      if (value->has_value())
        throw UsageError(name, "is a size of the synthetic MLP; with --model the checkpoint's config.json gives the "
                               "model's sizes");
  MeasureConfiguration asked;  // which workload (by its model, or an option of its own)
  asked.model = request.model.value_or("");
  for (const auto& [name, text] : request.workload_options) asked.workload_options.set(name, text);
  const WorkloadKind& kind = workload_kind_of(asked);
  for (const auto& given : request.workload_options) require_declared_by(kind, given.first);
  if (!checkpoint && request.timeout)
    throw UsageError("timeout", "needs --model naming a Hub id (org/name): it bounds each HTTP request");
  if (request.hidden && request.hidden->empty())  // empty would read as the default
    throw UsageError("hidden", "empty value; expected a whole number (leave --hidden out for 4 x width)");
  if (request.dtype && request.dtype->empty())
    throw UsageError("dtype", "empty value; expected float32, float16 or bfloat16 (leave --dtype out for " +
                                  std::string(checkpoint ? "the checkpoint's own" : "float32") + ")");

  MeasureConfiguration configuration;
  configuration.device = request.device;
  configuration.batch = parse_whole_number(request.batch, "batch", 1, kMaxModelDimension);
  configuration.context = parse_whole_number(request.context, "context", 1, kMaxModelDimension);
  configuration.width = parse_whole_number(request.width.value_or("64"), "width", 1, kMaxModelDimension);
  configuration.hidden = request.hidden ? parse_whole_number(*request.hidden, "hidden", 1, kMaxModelDimension) : 0;
  configuration.dtype = request.dtype.value_or("");
  if (kind.rows_instead_of_repeats)
    for (const auto& [name, value] : {std::pair{"warmup", &request.warmup}, std::pair{"repeats", &request.repeats}})
      if (value->has_value())
        throw UsageError(name, std::string("has no use in a ") + kind.name + " run: " + kind.rows_instead_of_repeats +
                                   "; leave --" + name + " out");
  // Left out, they keep MeasureConfiguration's defaults.
  if (request.warmup)
    configuration.warmup = static_cast<int>(parse_whole_number(*request.warmup, "warmup", 0, kMaxForwardCount));
  if (request.repeats)
    configuration.repeats = static_cast<int>(parse_whole_number(*request.repeats, "repeats", 1, kMaxForwardCount));
  configuration.seed = parse_whole_number_up_to_uint64(request.seed, "seed");
  configuration.output = request.output;
  configuration.backend_path = request.backend_path;
  configuration.model = request.model.value_or("");
  for (const WorkloadOption& option : kind.options) {
    const auto given = request.workload_options.find(option.name);
    configuration.workload_options.set(
        option.name, option.check(given != request.workload_options.end() ? given->second : option.default_text));
  }
  for (const WorkloadOption& option : kind.options)
    if (option.only_when_option && request.workload_options.count(option.name) &&
        configuration.workload_options.text(option.only_when_option) != option.only_when_value)
      throw UsageError(option.name, option.elsewhere);
  if (request.timeout) configuration.hub_timeout_ms = parse_hub_timeout_ms(*request.timeout, "timeout");
  return configuration.checked();
}

MeasureConfiguration MeasureConfiguration::checked() const {
  MeasureConfiguration configuration = *this;
  const WorkloadKind& kind = workload_kind_of(configuration);
  configuration.workload_options = completed_options(kind, workload_options);
  if (!model.empty() && !configuration.model_files)
    configuration.model_files = open_model_files(model, "model", HubAccess{hub_timeout_ms});
  kind.resolve(configuration);
  return configuration;
}

ModelOrigin MeasureConfiguration::model_origin() const {
  if (model_files) return model_files->origin();
  ModelOrigin origin;
  origin.given = origin.location = model;
  return origin;
}

void write_measure_configuration(JsonWriter& json, const char* device_key,
                                 const MeasureConfiguration& configuration) {
  json.key("configuration").begin_object().key(device_key);
  json.text_or_null(configuration.device);
  for_each_configuration_member(configuration, [&json](const char* name, const auto& member) {
    json.key(name).value(member);
  });
  if (!configuration.model.empty()) json.key("model").value(configuration.model);
  // The workload's own options, as it declares them (none for the synthetic MLP).
  const WorkloadKind& kind = workload_kind_of(configuration);
  const WorkloadOptions options = completed_options(kind, configuration.workload_options);
  for (const WorkloadOption& option : kind.options) {
    json.key(option.keyword);
    if (option.type == WorkloadOption::Type::kSwitch)
      json.value(options.whole_number(option.name) != 0);
    else
      std::visit([&json](const auto& value) { json.value(value); }, *options.find(option.name));
  }
  const ModelOrigin origin = configuration.model_origin();
  if (origin.is_hub_id()) write_model_source(json, origin);
  json.end_object();
}

MeasureConfiguration read_measure_configuration(const JsonObjectReader& json) {
  MeasureConfiguration configuration;
  json.read("device", configuration.device);
  for_each_configuration_member(configuration, [&json](const char* name, auto& member) {
    json.read(name, member);
  });
  if (json.has("model")) json.read("model", configuration.model);
  // The workload's own options, read as it declares them (a missing one is a DataFileError, but
  // a missing switch is off: files written before it existed); checked, as the rest, by the
  // workload. Which workload may depend on them: a first look.
  const auto read_option = [&json](const WorkloadOption& option, WorkloadOptions& into) {
    if (option.type == WorkloadOption::Type::kWholeNumber)
      into.set(option.name, json.int64(option.keyword));
    else if (option.type == WorkloadOption::Type::kSwitch)
      into.set(option.name, std::int64_t{json.has(option.keyword) && json.flag(option.keyword) ? 1 : 0});
    else
      into.set(option.name, json.text(option.keyword));
  };
  MeasureConfiguration asked = configuration;
  for (const WorkloadOption& option : declared_workload_options())
    if (json.has(option.keyword)) read_option(option, asked.workload_options);
  for (const WorkloadOption& option : workload_kind_of(asked).options) read_option(option, configuration.workload_options);
  // model_source (a Hub id's commit) is a record of where the files were read: the worker
  // finds them again from the model as given.
  return configuration;
}

}  // namespace iteragpu
