// A measurement read back from its JSON document: what a worker sends its runner, what
// `compare` and Python's Measurement.read() open. The document must validate against the
// measurement schema in full first; what the schema cannot say (the model follows from the
// configuration) is checked here. Whatever to_json() writes comes back: read(x).to_json()
// is x, byte for byte.

#include <rapidjson/document.h>

#include "iteragpu/error.hpp"
#include "iteragpu/phase_measurer.hpp"
#include "measurement/measurement_json.hpp"
#include "mechanics/input_file.hpp"
#include "mechanics/json_input.hpp"
#include "mechanics/json_output.hpp"

namespace iteragpu {
namespace {

using Value = rapidjson::Value;

// Typed access to members the schema has already vouched for; a DataFileError naming the
// source and the member all the same, should a document slip past it.
class Fields {
 public:
  explicit Fields(std::string source) : source_(std::move(source)) {}

  [[noreturn]] void fail(const std::string& what) const { throw DataFileError(source_ + ": " + what); }

  const Value& at(const Value& object, const char* name) const {
    if (!object.IsObject()) fail(std::string("expected an object holding \"") + name + "\"");
    const auto found = object.FindMember(name);
    if (found == object.MemberEnd()) fail(std::string("missing \"") + name + "\"");
    return found->value;
  }
  std::string text(const Value& object, const char* name) const {
    const Value& value = at(object, name);
    if (!value.IsString()) fail(std::string("\"") + name + "\" is not a string");
    return std::string(value.GetString(), value.GetStringLength());
  }
  std::optional<std::string> optional_text(const Value& object, const char* name) const {
    return at(object, name).IsNull() ? std::nullopt : std::optional<std::string>(text(object, name));
  }
  std::int64_t int64(const Value& object, const char* name) const {
    const Value& value = at(object, name);
    if (!value.IsInt64()) fail(std::string("\"") + name + "\" is not an integer");
    return value.GetInt64();
  }
  std::uint64_t uint64(const Value& object, const char* name) const {
    const Value& value = at(object, name);
    if (!value.IsUint64()) fail(std::string("\"") + name + "\" is not a non-negative integer");
    return value.GetUint64();
  }
  std::optional<std::uint64_t> optional_uint64(const Value& object, const char* name) const {
    return at(object, name).IsNull() ? std::nullopt : std::optional<std::uint64_t>(uint64(object, name));
  }
  int integer(const Value& object, const char* name) const {
    const Value& value = at(object, name);
    if (!value.IsInt()) fail(std::string("\"") + name + "\" is not an integer");
    return value.GetInt();
  }
  double number(const Value& object, const char* name) const {
    const Value& value = at(object, name);
    if (!value.IsNumber()) fail(std::string("\"") + name + "\" is not a number");
    return value.GetDouble();
  }
  std::optional<double> optional_number(const Value& object, const char* name) const {
    return at(object, name).IsNull() ? std::nullopt : std::optional<double>(number(object, name));
  }
  bool boolean(const Value& object, const char* name) const {
    const Value& value = at(object, name);
    if (!value.IsBool()) fail(std::string("\"") + name + "\" is not true or false");
    return value.GetBool();
  }
  const Value& array(const Value& object, const char* name) const {
    const Value& value = at(object, name);
    if (!value.IsArray()) fail(std::string("\"") + name + "\" is not an array");
    return value;
  }
  std::vector<std::string> texts(const Value& object, const char* name) const {
    std::vector<std::string> result;
    for (const Value& item : array(object, name).GetArray()) {
      if (!item.IsString()) fail(std::string("\"") + name + "\" holds a value that is not a string");
      result.emplace_back(item.GetString(), item.GetStringLength());
    }
    return result;
  }
  // "9.0" → (9, 0)
  std::pair<int, int> compute_capability(const Value& object, const char* name) const {
    const std::string value = text(object, name);
    const std::size_t dot = value.find('.');
    try {
      if (dot != std::string::npos) return {std::stoi(value.substr(0, dot)), std::stoi(value.substr(dot + 1))};
    } catch (const std::exception&) {
    }
    fail(std::string("\"") + name + "\" is not a compute capability such as 9.0");
  }

 private:
  std::string source_;
};

void read_counters(const Fields& f, const Value& row, AllocatorCounters& baseline, AllocatorCounters& end) {
  const Value& allocated = f.at(row, "allocated_bytes");
  const Value& reserved = f.at(row, "reserved_bytes");
  baseline.allocated_bytes = f.uint64(allocated, "baseline");
  baseline.reserved_bytes = f.uint64(reserved, "baseline");
  end.allocated_bytes = f.uint64(allocated, "end");
  end.reserved_bytes = f.uint64(reserved, "end");
  end.peak_allocated_bytes = f.uint64(row, "peak_allocated_bytes");
  end.peak_reserved_bytes = f.uint64(row, "peak_reserved_bytes");
}

PhaseRow read_phase_row(const Fields& f, const Value& row) {
  PhaseRow result;
  result.phase = f.text(row, "phase");
  result.repeat = f.at(row, "repeat").IsNull() ? 0 : f.integer(row, "repeat");
  result.forwards = f.integer(row, "forwards");
  result.host_seconds = f.number(row, "host_seconds");
  result.gpu_event_seconds = f.optional_number(row, "gpu_event_seconds");
  read_counters(f, row, result.baseline, result.end);
  return result;
}

EnvironmentReport read_environment(const Fields& f, const Value& environment) {
  EnvironmentReport report;
  const Value& iteragpu = f.at(environment, "iteragpu");
  report.iteragpu_version = f.text(iteragpu, "version");
  report.iteragpu_build = f.text(iteragpu, "build");
  const Value& system = f.at(environment, "system");
  report.os_name = f.text(system, "os_name");
  report.os_distribution = f.optional_text(system, "os_distribution");
  report.kernel_release = f.text(system, "kernel_release");
  report.architecture = f.text(system, "architecture");
  report.libc = f.text(system, "libc");
  const Value& driver = f.at(system, "nvidia_kernel_driver");
  report.nvidia_driver_version = f.optional_text(driver, "version");
  report.nvidia_driver_source = f.optional_text(driver, "source").value_or("");
  const Value& backend = f.at(environment, "backend");
  report.backend_available = f.boolean(backend, "available");
  report.backend_path = f.optional_text(backend, "plugin_path").value_or("");
  report.backend_error = f.optional_text(backend, "error").value_or("");
  const Value& libtorch = f.at(environment, "libtorch");
  const Value& selected = f.at(environment, "selected_device");
  if (!libtorch.IsNull()) {
    StackReport stack;
    stack.torch_version = f.text(libtorch, "version");
    stack.cuda_build_version = f.optional_text(libtorch, "cuda_build_version");
    stack.hip_build_version = f.optional_text(libtorch, "hip_build_version");
    stack.cudnn_version = f.optional_text(libtorch, "cudnn_version");
    stack.gpu_runtime_available = f.boolean(libtorch, "gpu_runtime_available");
    // Which backend produced the figures; files written before it was recorded lack it.
    const auto identity = backend.FindMember("identity");
    if (identity != backend.MemberEnd() && identity->value.IsString()) stack.backend_identity = identity->value.GetString();
    for (const Value& gpu : f.array(environment, "gpus").GetArray()) {
      GpuDevice device;
      device.index = f.integer(gpu, "index");
      device.name = f.text(gpu, "name");
      std::tie(device.compute_capability_major, device.compute_capability_minor) =
          f.compute_capability(gpu, "compute_capability");
      device.total_memory_bytes = f.uint64(gpu, "total_memory_bytes");
      device.multiprocessors = f.integer(gpu, "multiprocessors");
      stack.gpus.push_back(device);
    }
    stack.selected_free_bytes = f.optional_uint64(selected, "runtime_free_bytes");
    stack.selected_total_bytes = f.optional_uint64(selected, "runtime_total_bytes");
    report.stack = stack;
  }
  report.selected_device = f.text(selected, "device");
  report.selected_index = f.integer(selected, "index");
  report.selected_present = f.boolean(selected, "present");
  return report;
}

MeasureConfiguration read_configuration(const Fields& f, const Value& configuration) {
  MeasureConfiguration result;
  result.device = f.text(configuration, "device");
  result.batch = f.int64(configuration, "batch");
  result.context = f.int64(configuration, "context");
  result.width = f.int64(configuration, "width");
  result.hidden = f.int64(configuration, "hidden");
  result.dtype = f.text(configuration, "dtype");
  result.warmup = f.integer(configuration, "warmup");
  result.repeats = f.integer(configuration, "repeats");
  result.seed = f.uint64(configuration, "seed");
  return result;
}

SpreadStatistics read_spread(const Fields& f, const Value& spread) {
  SpreadStatistics result;
  result.count = f.integer(spread, "count");
  result.median = f.number(spread, "median");
  result.iqr = f.number(spread, "iqr");
  result.min = f.number(spread, "min");
  result.max = f.number(spread, "max");
  result.mean = f.number(spread, "mean");
  result.stdev = f.number(spread, "stdev");
  result.cv = f.number(spread, "cv");
  return result;
}

TimingSummary read_timing(const Fields& f, const Value& timing) {
  TimingSummary result;
  result.warm_repeats = f.integer(timing, "warm_repeats");
  result.host_seconds = read_spread(f, f.at(timing, "host_seconds"));
  if (!f.at(timing, "gpu_event_seconds").IsNull())
    result.gpu_event_seconds = read_spread(f, f.at(timing, "gpu_event_seconds"));
  for (const Value& warning : f.array(timing, "warnings").GetArray())
    result.warnings.push_back({f.text(warning, "code"), f.text(warning, "clock"), f.text(warning, "message")});
  return result;
}

// The prediction section and the rows' "predicted" counters, as one MemoryPrediction.
std::optional<MemoryPrediction> read_prediction(const Fields& f, const Value& document, const Measurement& m) {
  const Value& section = f.at(document, "prediction");
  if (section.IsNull()) return std::nullopt;
  MemoryPrediction prediction;
  prediction.configuration = m.configuration;
  prediction.model = m.model;
  PredictionTarget& target = prediction.target;
  std::tie(target.compute_capability_major, target.compute_capability_minor) =
      f.compute_capability(section, "compute_capability");
  target.cublas_workspace_bytes = f.uint64(section, "cublas_workspace_bytes");
  target.cublaslt_workspace_bytes = f.uint64(section, "cublaslt_workspace_bytes");
  target.workspace_source = f.text(section, "workspace_source");
  if (m.environment.stack)
    for (const GpuDevice& gpu : m.environment.stack->gpus)
      if (gpu.index == m.environment.selected_index) target.gpu_name = gpu.name;
  prediction.cublaslt_used = f.boolean(section, "cublaslt_used");
  prediction.caveats = f.texts(section, "caveats");
  std::size_t index = 0;
  for (const Value& row : f.array(document, "phases").GetArray()) {
    const Value& predicted = f.at(row, "predicted");
    if (predicted.IsNull()) f.fail("phase row " + std::to_string(index + 1) + " has no prediction");
    const PhaseRow& measured = m.phases[index++];
    PhasePrediction predicted_row{measured.phase, measured.repeat, measured.forwards, {}, {}};
    read_counters(f, predicted, predicted_row.baseline, predicted_row.end);
    prediction.phases.push_back(predicted_row);
  }
  return prediction;
}

}  // namespace

Measurement Measurement::from_json(const std::string& text, const std::string& source) {
  rapidjson::Document document;
  const std::string problem = parse_json(text, document);
  if (!problem.empty()) throw DataFileError(source + ": " + problem);
  const Fields f(source);
  if (!document.IsObject() || !document.HasMember("schema") || !document["schema"].IsString() ||
      std::string(document["schema"].GetString()) != "iteragpu.measurement")
    f.fail("not a measurement (its \"schema\" is not \"iteragpu.measurement\")");
  const std::string violation = schema_violation_of(document, "measurement.schema.json");
  if (!violation.empty()) f.fail("not a valid measurement: " + violation);

  Measurement m;
  m.environment = read_environment(f, f.at(document, "environment"));
  m.configuration = read_configuration(f, f.at(document, "configuration"));
  try {
    m.model = SyntheticModel::from(m.configuration);
  } catch (const UsageError& error) {
    f.fail(std::string("its configuration is not one iteragpu measures: ") + error.what());
  }
  const Value& model = f.at(document, "synthetic_model");
  if (f.int64(model, "parameter_count") != m.model.parameter_count ||
      f.int64(model, "parameter_bytes") != m.model.parameter_bytes ||
      f.int64(model, "input_bytes") != m.model.input_bytes || f.text(model, "dtype") != m.model.dtype)
    f.fail("its synthetic_model does not follow from its configuration");
  for (const Value& row : f.array(document, "phases").GetArray()) m.phases.push_back(read_phase_row(f, row));
  m.prediction = read_prediction(f, document, m);
  m.timing = read_timing(f, f.at(document, "timing"));
  return m;
}

Measurement Measurement::read(const std::string& path) {
  std::string text;
  try {
    text = read_input_file(path, "measurement", kMaxJsonDocumentBytes);
  } catch (const InputFileError& error) {
    throw DataFileError(path + ": " + error.reason());
  }
  return from_json(text, path);
}

std::string phase_row_to_json(const PhaseRow& row) {
  JsonWriter json("iteragpu.phase-row", 1);
  write_phase_row_members(json, row);
  return json.finish();
}

PhaseRow phase_row_from_json(const std::string& text) {
  rapidjson::Document document;
  const std::string problem = parse_json(text, document);
  if (!problem.empty()) throw DataFileError("phase row: " + problem);
  return read_phase_row(Fields("phase row"), document);
}

}  // namespace iteragpu
