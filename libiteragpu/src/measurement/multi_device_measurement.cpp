#include "iteragpu/multi_device_measurement.hpp"

#include <rapidjson/document.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <set>
#include <sstream>

#include "mechanics/input_file.hpp"
#include "mechanics/json_input.hpp"
#include "mechanics/atomic_output_file.hpp"
#include "mechanics/backend_loader.hpp"
#include "iteragpu/error.hpp"
#include "mechanics/json_output.hpp"
#include "measurement/measurement_json.hpp"
#include "mechanics/quantity_parser.hpp"

namespace iteragpu {
namespace {

constexpr const char* kSummarySchema = "iteragpu.measurement-summary";
constexpr int kSummarySchemaVersion = 1;
constexpr const char* kAllDevices = "all";

constexpr const char* kAcceptedSelection =
    "expected all, or cuda:N entries separated by commas, such as cuda:0,cuda:1";

// "all" → nullopt (every GPU, known only once the backend is asked); a list → its indices.
std::optional<std::vector<int>> parse_device_selection(const std::string& text) {
  if (text == kAllDevices) return std::nullopt;
  std::vector<int> indices;
  std::set<int> seen;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = text.find(',', start);
    const std::string entry = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (entry.empty())
      throw UsageError("device", "an empty entry in " + quoted_for_message(text) + "; " + kAcceptedSelection);
    if (entry == kAllDevices)
      throw UsageError("device", "all cannot be combined with other devices; " + std::string(kAcceptedSelection));
    const int index = parse_device_index(entry, "device");
    if (!seen.insert(index).second)
      throw UsageError("device", entry + " is listed twice; each GPU is measured once");
    indices.push_back(index);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return indices;
}

// The GPUs the backend sees; refuses when there are none (never a CPU fallback).
std::vector<GpuDevice> visible_gpus(Backend& backend) {
  StackReport stack;
  const BackendStatus status = backend.describe(-1, stack);  // -1: no device selected
  if (!status.ok())
    throw BackendUnavailable("the LibTorch backend could not describe the stack: " + status.message +
                             "; nothing was measured");
  if (!stack.gpu_runtime_available || stack.gpus.empty())
    throw DeviceUnavailable("no GPU available: LibTorch " + stack.torch_version +
                            " reports no usable GPU runtime; nothing was measured (there is no "
                            "CPU fallback)");
  return stack.gpus;
}

std::string visible_gpus_text(const std::vector<GpuDevice>& gpus) {
  if (gpus.size() == 1) return "1 GPU: cuda:" + std::to_string(gpus.front().index);
  return std::to_string(gpus.size()) + " GPUs: cuda:" + std::to_string(gpus.front().index) +
         " to cuda:" + std::to_string(gpus.back().index);
}

// Member `name` of `object`, which must exist and satisfy `is_kind`; DataFileError otherwise.
const rapidjson::Value& member(const rapidjson::Value& object, const char* name, const std::string& file,
                               bool (rapidjson::Value::*is_kind)() const) {
  if (!object.IsObject() || !object.HasMember(name) || !(object[name].*is_kind)())
    throw DataFileError(file + ": not a measurement file (missing or malformed \"" + std::string(name) + "\")");
  return object[name];
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const std::size_t middle = values.size() / 2;
  return values.size() % 2 == 1 ? values[middle] : (values[middle - 1] + values[middle]) / 2;
}

std::vector<std::string> summary_notes() {
  return {
      "Each device was measured by its own process; each result file holds that process's "
      "caching-allocator counters on that GPU only, and its own environment report.",
      "The devices were measured at the same time: they shared the host's CPU, memory and "
      "PCIe/NVLink links, so their host times can differ from a device measured alone.",
      "complete is false when a device failed or the run was interrupted; the result files "
      "listed are whole measurements all the same, and a failed device has no result file.",
      "figures are read back from each result file: warm_forward_host_seconds_median is the "
      "median host wall-clock time of the warm_forward rows (the mean of the middle two for "
      "an even count); model_load_allocated_bytes is allocated end minus baseline of "
      "model_load; peak_allocated_bytes_max is the largest peak_allocated_bytes over the "
      "phases.",
  };
}

}  // namespace

bool names_several_devices(const std::string& device) {
  return device == kAllDevices || device.find(',') != std::string::npos;
}

std::string per_device_result_path(const std::string& summary_path, int device_index) {
  const std::size_t slash = summary_path.find_last_of('/');
  const std::size_t name_start = slash == std::string::npos ? 0 : slash + 1;
  const std::size_t dot = summary_path.find_last_of('.');
  // A dot that starts the name (".json") is part of the stem, not an extension.
  const std::size_t stem_end = dot != std::string::npos && dot > name_start ? dot : summary_path.size();
  return summary_path.substr(0, stem_end) + "-cuda" + std::to_string(device_index) + ".json";
}

std::vector<DeviceTarget> plan_device_targets(const MeasureRequest& request,
                                              const std::shared_ptr<Backend>& backend) {
  SyntheticModel::from(request);
  const std::optional<std::vector<int>> listed = parse_device_selection(request.device);
  ensure_output_absent(request.output, "output");

  const std::vector<GpuDevice> gpus = visible_gpus(*backend_or_plugin(backend, request.backend_path));
  std::vector<int> indices;
  if (listed) {
    indices = *listed;
  } else {
    for (const GpuDevice& gpu : gpus) indices.push_back(gpu.index);
  }
  std::vector<DeviceTarget> targets;
  for (int index : indices) {
    const std::string device = "cuda:" + std::to_string(index);
    const bool present = std::any_of(gpus.begin(), gpus.end(),
                                     [index](const GpuDevice& gpu) { return gpu.index == index; });
    if (!present)
      throw DeviceUnavailable(device + " does not exist; this process sees " + visible_gpus_text(gpus) +
                              "; nothing was measured");
    targets.push_back({device, index, per_device_result_path(request.output, index)});
  }
  for (const DeviceTarget& target : targets) ensure_output_absent(target.result_file, "output");
  return targets;
}

DeviceResultFigures DeviceResultFigures::read(const std::string& result_file, const std::string& device) {
  const std::string text = read_input_file(result_file, "measurement", kMaxJsonDocumentBytes);
  rapidjson::Document doc;
  const std::string problem = parse_json(text, doc);
  if (!problem.empty()) throw DataFileError(result_file + ": " + problem);
  using V = rapidjson::Value;
  if (std::string(member(doc, "schema", result_file, &V::IsString).GetString()) != "iteragpu.measurement")
    throw DataFileError(result_file + ": not a measurement file (schema is not iteragpu.measurement)");

  const V& configuration = member(doc, "configuration", result_file, &V::IsObject);
  const V& environment = member(doc, "environment", result_file, &V::IsObject);
  const V& selected = member(environment, "selected_device", result_file, &V::IsObject);
  const std::string configured = member(configuration, "device", result_file, &V::IsString).GetString();
  const std::string measured = member(selected, "device", result_file, &V::IsString).GetString();
  if (configured != device || measured != device)
    throw DataFileError(result_file + ": measured " + measured + " (configured " + configured +
                        "), not " + device);

  DeviceResultFigures figures;
  const int selected_index = member(selected, "index", result_file, &V::IsInt).GetInt();
  for (const V& gpu : member(environment, "gpus", result_file, &V::IsArray).GetArray())
    if (member(gpu, "index", result_file, &V::IsInt).GetInt() == selected_index)
      figures.gpu_name = member(gpu, "name", result_file, &V::IsString).GetString();

  std::vector<double> warm_forward_seconds;
  bool model_load_seen = false;
  for (const V& row : member(doc, "phases", result_file, &V::IsArray).GetArray()) {
    const std::string phase = member(row, "phase", result_file, &V::IsString).GetString();
    figures.peak_allocated_bytes_max = std::max(
        figures.peak_allocated_bytes_max, member(row, "peak_allocated_bytes", result_file, &V::IsUint64).GetUint64());
    if (phase == "warm_forward")
      warm_forward_seconds.push_back(member(row, "host_seconds", result_file, &V::IsNumber).GetDouble());
    if (phase == "model_load") {
      const V& allocated = member(row, "allocated_bytes", result_file, &V::IsObject);
      figures.model_load_allocated_bytes =
          member(allocated, "end", result_file, &V::IsInt64).GetInt64() -
          member(allocated, "baseline", result_file, &V::IsInt64).GetInt64();
      model_load_seen = true;
    }
  }
  if (warm_forward_seconds.empty() || !model_load_seen)
    throw DataFileError(result_file + ": not a whole measurement (no model_load or warm_forward row)");
  figures.warm_forward_host_seconds_median = median(std::move(warm_forward_seconds));
  return figures;
}

bool MeasurementSummary::complete() const {
  return !interrupted && std::all_of(devices.begin(), devices.end(),
                                     [](const DeviceOutcome& outcome) { return outcome.ok(); });
}

int MeasurementSummary::exit_code() const {
  if (interrupted) return static_cast<int>(ExitCode::kInterrupted);
  for (const DeviceOutcome& outcome : devices)
    if (outcome.exit_code != 0) return outcome.exit_code;
  return complete() ? 0 : static_cast<int>(ExitCode::kInternalError);
}

std::string MeasurementSummary::to_json() const {
  const SyntheticModel model = SyntheticModel::from(request);
  JsonWriter json(kSummarySchema, kSummarySchemaVersion);
  json.key("complete").value(complete())
      .key("interrupted").value(interrupted)
      .key("exit_code").value(exit_code());
  write_measure_configuration(json, "devices", request, model);
  json.key("devices").begin_array();
  for (const DeviceOutcome& outcome : devices) {
    json.begin_object()
        .key("device").value(outcome.device)
        .key("status").value(outcome.ok() ? "ok" : "failed")
        .key("exit_code").value(outcome.exit_code)
        .key("result_file");
    if (outcome.result_file.empty()) {
      json.null();
    } else {
      json.value(outcome.result_file);
    }
    json.key("error");
    if (outcome.error.empty()) {
      json.null();
    } else {
      json.value(outcome.error);
    }
    json.key("figures");
    if (!outcome.figures) {
      json.null();
    } else {
      const DeviceResultFigures& figures = *outcome.figures;
      json.begin_object()
          .key("gpu_name").value(figures.gpu_name)
          .key("warm_forward_host_seconds_median").value(figures.warm_forward_host_seconds_median)
          .key("model_load_allocated_bytes").value(figures.model_load_allocated_bytes)
          .key("peak_allocated_bytes_max").value(figures.peak_allocated_bytes_max)
          .end_object();
    }
    json.end_object();
  }
  json.end_array();
  json.key("notes").value(summary_notes());
  return json.finish();
}

std::string MeasurementSummary::to_text() const {
  const SyntheticModel model = SyntheticModel::from(request);
  std::string text = "Measurement of " + std::to_string(devices.size()) +
                     (devices.size() == 1 ? " GPU" : " GPUs") +
                     " at the same time, one process each: batch " + std::to_string(model.batch) +
                     ", context " + std::to_string(model.context) + ", width " + std::to_string(model.width) +
                     ", hidden " + std::to_string(model.hidden) + ", dtype " + model.dtype + ", warmup " +
                     std::to_string(request.warmup) + ", repeats " + std::to_string(request.repeats) +
                     ", seed " + std::to_string(request.seed) + "\n\n";
  char line[1024];
  std::snprintf(line, sizeof line, "%-8s %-7s %4s  %-24s %14s %18s %18s  %s\n", "device", "status", "exit",
                "GPU", "warm fwd host s", "model_load alloc", "peak alloc max", "result file");
  text += line;
  std::string errors;
  int failed = 0;
  for (const DeviceOutcome& outcome : devices) {
    const std::string file = outcome.result_file.empty() ? "-" : outcome.result_file;
    if (outcome.figures) {
      const DeviceResultFigures& figures = *outcome.figures;
      std::snprintf(line, sizeof line, "%-8s %-7s %4d  %-24s %14.6f %18lld %18llu  %s\n", outcome.device.c_str(),
                    outcome.ok() ? "ok" : "failed", outcome.exit_code, figures.gpu_name.c_str(),
                    figures.warm_forward_host_seconds_median,
                    static_cast<long long>(figures.model_load_allocated_bytes),
                    static_cast<unsigned long long>(figures.peak_allocated_bytes_max), file.c_str());
    } else {
      std::snprintf(line, sizeof line, "%-8s %-7s %4d  %-24s %14s %18s %18s  %s\n", outcome.device.c_str(),
                    outcome.ok() ? "ok" : "failed", outcome.exit_code, "-", "-", "-", "-", file.c_str());
    }
    text += line;
    if (!outcome.ok()) ++failed;
    if (!outcome.error.empty()) errors += "  " + outcome.device + ": " + outcome.error + "\n";
  }
  if (!errors.empty()) text += "\nErrors:\n" + errors;
  text += "\nComplete: ";
  if (complete()) {
    text += "yes, every device was measured.\n";
  } else {
    text += "no: " + std::to_string(failed) + " of " + std::to_string(devices.size()) + " devices failed" +
            (interrupted ? " (interrupted)" : "") +
            (failed < static_cast<int>(devices.size()) ? "; the others' result files are whole measurements.\n"
                                                       : ".\n");
  }
  text += "Times are host wall-clock per warm forward (median); bytes are each process's "
          "caching-allocator counters on its own GPU. The GPUs ran at the same time and shared "
          "the host.\n";
  return text;
}

void MeasurementSummary::publish() const { publish_exclusively(request.output, to_json()); }

}  // namespace iteragpu
