#include "iteragpu/measurement_runner.hpp"

#include <poll.h>

#include <cerrno>
#include <cstring>

#include <algorithm>
#include <cstdio>
#include <exception>
#include <memory>
#include <set>

#include "iteragpu/error.hpp"
#include "iteragpu/printable_text.hpp"
#include "protocol/phase_row_json.hpp"
#include "workload/configuration_json.hpp"
#include "workload/workload.hpp"
#include "runner/worker_process.hpp"
#include "workload/decoder_workload.hpp"
#include "runner/worker_protocol.hpp"
#include "mechanics/atomic_output_file.hpp"
#include "mechanics/backend_loader.hpp"
#include "mechanics/json_output.hpp"
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
    throw DeviceUnavailable("no GPU available: " + no_gpu_reason(stack) +
                            "; nothing was measured (there is no CPU fallback)");
  return stack.gpus;
}

std::string visible_gpus_text(const std::vector<GpuDevice>& gpus) {
  if (gpus.size() == 1) return "1 GPU: cuda:" + std::to_string(gpus.front().index);
  return std::to_string(gpus.size()) + " GPUs: cuda:" + std::to_string(gpus.front().index) +
         " to cuda:" + std::to_string(gpus.back().index);
}

std::vector<std::string> summary_notes() {
  return {
      "Each device was measured by its own worker process; each result file holds that process's "
      "caching-allocator counters on that GPU only, and its own environment report.",
      "The devices were measured at the same time: they shared the host's CPU, memory and "
      "PCIe/NVLink links, so their host times can differ from a device measured alone.",
      "complete is false when a device failed or the run was interrupted; the result files "
      "listed are whole measurements all the same, and a failed device has no result file.",
      "figures are taken from each worker's measurement (the document of its result file): "
      "warm_forward_host_seconds_median is the "
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

namespace {

// What a plan checks before any backend is asked: the device list and the summary path.
std::optional<std::vector<int>> checked_selection(const MeasureConfiguration& request) {
  const std::optional<std::vector<int>> listed = parse_device_selection(request.device);
  ensure_output_absent(request.output, "output");
  return listed;
}

}  // namespace

std::vector<DeviceTarget> plan_device_targets(const MeasureConfiguration& request,
                                              const std::shared_ptr<Backend>& backend) {
  const std::optional<std::vector<int>> listed = checked_selection(request);

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

DeviceResultFigures DeviceResultFigures::of(const Measurement& measurement, const std::string& device,
                                            const std::string& source) {
  const std::string& configured = measurement.configuration.device;
  const std::string& measured = measurement.environment.selected_device;
  if (configured != device || measured != device)
    throw DataFileError(source + ": measured " + measured + " (configured " + configured + "), not " + device);
  DeviceResultFigures figures;
  if (const GpuDevice* gpu = measurement.environment.selected_gpu()) figures.gpu_name = gpu->name;
  // The load row (model_load, or a checkpoint's weights_load) and warm rows (warm_forward, or
  // a checkpoint's warm sequences) are what the summary's figures come from.
  bool warm_forward_seen = false, model_load_seen = false;
  for (const PhaseRow& row : measurement.phases) {
    figures.peak_allocated_bytes_max = std::max(figures.peak_allocated_bytes_max, row.end.peak_allocated_bytes);
    warm_forward_seen = warm_forward_seen || measurement.timing.warm_repeats > 0;
    if (row.phase == "model_load" || row.phase == "weights_load") {
      figures.model_load_allocated_bytes = static_cast<std::int64_t>(row.end.allocated_bytes) -
                                           static_cast<std::int64_t>(row.baseline.allocated_bytes);
      model_load_seen = true;
    }
  }
  if (!warm_forward_seen || !model_load_seen)
    throw DataFileError(source + ": not a whole measurement (no model_load or warm_forward row)");
  figures.warm_forward_host_seconds_median = measurement.timing.host_seconds.median;
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
  JsonWriter json(kSummarySchema, kSummarySchemaVersion);
  json.key("complete").value(complete())
      .key("interrupted").value(interrupted)
      .key("exit_code").value(exit_code());
  write_measure_configuration(json, "devices", configuration);
  json.key("devices").begin_array();
  for (const DeviceOutcome& outcome : devices) {
    json.begin_object()
        .key("device").value(outcome.device)
        .key("status").value(outcome.ok() ? "ok" : "failed")
        .key("exit_code").value(outcome.exit_code)
        .key("result_file");
    json.text_or_null(outcome.result_file);
    json.key("error");
    json.text_or_null(outcome.error);
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
  const std::unique_ptr<const Workload> workload = workload_for(configuration);
  const std::string repetition = workload->repetition_text(configuration);
  std::string text = "Measurement of " + std::to_string(devices.size()) +
                     (devices.size() == 1 ? " GPU" : " GPUs") + " at the same time, one worker process each: " +
                     workload->shape_text() + (repetition.empty() ? "" : ", " + repetition) + ", seed " +
                     std::to_string(configuration.seed) + "\n\n";
  char line[1024];
  std::snprintf(line, sizeof line, "%-8s %-7s %4s  %-24s %16s %18s %18s  %s\n", "device", "status", "exit",
                "GPU", "warm fwd host ms", "model_load alloc", "peak alloc max", "result file");
  text += line;
  std::string errors;
  int failed = 0;
  for (const DeviceOutcome& outcome : devices) {
    const std::string file = outcome.result_file.empty() ? "-" : printable(outcome.result_file);
    if (outcome.figures) {
      const DeviceResultFigures& figures = *outcome.figures;
      std::snprintf(line, sizeof line, "%-8s %-7s %4d  %-24s %16.3f %18lld %18llu  %s\n", outcome.device.c_str(),
                    outcome.ok() ? "ok" : "failed", outcome.exit_code, printable(figures.gpu_name).c_str(),
                    figures.warm_forward_host_seconds_median * 1000,
                    static_cast<long long>(figures.model_load_allocated_bytes),
                    static_cast<unsigned long long>(figures.peak_allocated_bytes_max), file.c_str());
    } else {
      std::snprintf(line, sizeof line, "%-8s %-7s %4d  %-24s %16s %18s %18s  %s\n", outcome.device.c_str(),
                    outcome.ok() ? "ok" : "failed", outcome.exit_code, "-", "-", "-", "-", file.c_str());
    }
    text += line;
    if (!outcome.ok()) ++failed;
    if (!outcome.error.empty()) errors += "  " + outcome.device + ": " + printable(outcome.error) + "\n";
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

void MeasurementSummary::publish() const { publish_exclusively(configuration.output, to_json()); }

namespace {

// How often a running batch of workers checks for cancellation.
constexpr int kCancelPollMilliseconds = 100;

// One worker and what it has said.
struct WorkerRun {
  std::string device;
  std::unique_ptr<WorkerProcess> process;
  std::optional<Measurement> measurement;
  std::optional<std::vector<DeviceTarget>> plan;
  std::optional<ErrorRecord> error;
  std::string protocol_problem;  // a record that could not be understood
  int exit_code = 0;
};

// A worker started on `configuration` (its device and output) for `task`.
WorkerRun start_worker(const std::string& worker, const MeasureConfiguration& configuration,
                       worker_protocol::Task task = worker_protocol::Task::kMeasure) {
  WorkerRun run;
  run.device = configuration.device;
  run.process =
      std::make_unique<WorkerProcess>(worker, worker_protocol::request_record(configuration, task));
  return run;
}

// Runs the workers to their end: answers their progress, passes cancellation on, and
// rethrows the first exception a callback raised once every worker has stopped.
void run_to_end(std::vector<WorkerRun>& runs, const RunnerOptions& options, bool& cancelled) {
  std::exception_ptr callback_failure;
  auto stop_all = [&] {
    if (cancelled) return;
    cancelled = true;
    for (WorkerRun& run : runs) run.process->interrupt();
  };
  for (;;) {
    std::vector<pollfd> watched;
    std::vector<WorkerRun*> owners;
    for (WorkerRun& run : runs)
      if (run.process->channel() >= 0) {
        watched.push_back({run.process->channel(), POLLIN, 0});
        owners.push_back(&run);
      }
    if (watched.empty()) break;
    const int ready = poll(watched.data(), watched.size(), kCancelPollMilliseconds);
    if (ready < 0 && errno != EINTR) throw Error(std::string("cannot wait for the measurement workers: ") + std::strerror(errno));
    for (std::size_t i = 0; ready > 0 && i < watched.size(); ++i) {
      if (watched[i].revents == 0) continue;
      WorkerRun& run = *owners[i];
      std::vector<std::string> records;
      run.process->read_records(records);
      for (const std::string& text : records) {
        worker_protocol::WorkerMessage message;
        try {
          message = worker_protocol::parse_worker_message(text, "the measurement worker for " + run.device);
        } catch (const Error& error) {
          run.protocol_problem = error.what();
          run.process->answer(false);
          continue;
        }
        switch (message.kind) {
          case worker_protocol::WorkerMessage::Kind::kProgress: {
            bool go_on = !cancelled;
            if (go_on && options.progress) {
              try {
                options.progress(run.device, message.row, message.rows_done, message.rows_total);
              } catch (...) {
                if (!callback_failure) callback_failure = std::current_exception();
                go_on = false;
              }
            }
            run.process->answer(go_on);
            if (!go_on) stop_all();
            break;
          }
          case worker_protocol::WorkerMessage::Kind::kMeasurement:
            run.measurement = std::move(message.measurement);
            break;
          case worker_protocol::WorkerMessage::Kind::kPlan:
            run.plan = std::move(message.targets);
            break;
          case worker_protocol::WorkerMessage::Kind::kError:
            run.error = message.error;
            break;
        }
      }
    }
    if (!cancelled && options.cancel) {
      bool cancel = false;
      try {
        cancel = options.cancel();
      } catch (...) {
        if (!callback_failure) callback_failure = std::current_exception();
        cancel = true;
      }
      if (cancel) stop_all();
    }
  }
  for (WorkerRun& run : runs) run.exit_code = run.process->wait();
  if (callback_failure) std::rethrow_exception(callback_failure);
}

// Why a worker ended without a measurement, in one line.
std::string silent_end(const WorkerRun& run) {
  if (!run.protocol_problem.empty()) return run.protocol_problem;
  if (run.exit_code > 128)
    return "the measurement worker for " + run.device + " was ended by signal " +
           std::to_string(run.exit_code - 128) + " without a result";
  return "the measurement worker for " + run.device + " exited with code " + std::to_string(run.exit_code) +
         " without a result";
}

std::string message_of(const ErrorRecord& error) {
  return error.type == "UsageError" && !error.field.empty() ? "--" + error.field + ": " + error.message
                                                            : error.message;
}

}  // namespace

MeasurementRunner::MeasurementRunner(RunnerOptions options) : options_(std::move(options)) {}

Measurement MeasurementRunner::measure(const MeasureConfiguration& requested) const {
  // Everything checkable here is checked before a process starts.
  const MeasureConfiguration configuration = requested.checked();
  require_weights_here(configuration);
  if (names_several_devices(configuration.device))
    throw UsageError("device", quoted_for_message(configuration.device) +
                                   " names several GPUs; measure one cuda:N here, or several with measure_devices");
  parse_device_index(configuration.device, "device");
  if (!configuration.output.empty()) ensure_output_absent(configuration.output, "output");
  const std::string worker = find_measure_worker(options_.worker_path);

  std::vector<WorkerRun> runs;
  runs.push_back(start_worker(worker, configuration));
  bool cancelled = false;
  run_to_end(runs, options_, cancelled);
  WorkerRun& run = runs[0];
  if (run.error) throw_recorded(*run.error);
  if (!run.measurement || run.exit_code != 0) {
    if (cancelled) throw Interrupted("interrupted; nothing was written");
    throw Error(silent_end(run));
  }
  // Not in the document (where the file went, which plugin): as this caller asked.
  run.measurement->configuration.output = configuration.output;
  run.measurement->configuration.backend_path = configuration.backend_path;
  return std::move(*run.measurement);
}

MeasurementSummary MeasurementRunner::measure_devices(const MeasureConfiguration& requested,
                                                      const std::shared_ptr<Backend>& planning_backend) const {
  const MeasureConfiguration configuration = requested.checked();
  require_weights_here(configuration);
  const std::string worker = find_measure_worker(options_.worker_path);
  std::vector<DeviceTarget> targets;
  if (planning_backend) {
    targets = plan_device_targets(configuration, planning_backend);
  } else {
    // Planned by a worker too: which GPUs exist is the backend's answer, and this process
    // (a Jupyter kernel, say) never loads LibTorch for it. What can be checked without a
    // backend is checked here first.
    checked_selection(configuration);
    std::vector<WorkerRun> runs;
    runs.push_back(start_worker(worker, configuration, worker_protocol::Task::kPlan));
    bool cancelled = false;
    run_to_end(runs, options_, cancelled);
    if (runs[0].error) throw_recorded(*runs[0].error);
    if (!runs[0].plan) {
      if (cancelled) throw Interrupted("interrupted before any measurement started; nothing was written");
      throw Error(silent_end(runs[0]));
    }
    targets = std::move(*runs[0].plan);
  }
  if (options_.planned) options_.planned(targets);

  std::vector<WorkerRun> runs;
  runs.reserve(targets.size());
  for (const DeviceTarget& target : targets) {
    MeasureConfiguration one = configuration;
    one.device = target.device;
    one.output = target.result_file;
    runs.push_back(start_worker(worker, one));
  }
  MeasurementSummary summary;
  summary.configuration = configuration;
  run_to_end(runs, options_, summary.interrupted);
  for (std::size_t i = 0; i < runs.size(); ++i) {
    WorkerRun& run = runs[i];
    DeviceOutcome outcome;
    outcome.device = run.device;
    outcome.exit_code = run.exit_code;
    if (run.error) {
      outcome.error = message_of(*run.error);
    } else if (!run.measurement) {
      outcome.error = silent_end(run);
      if (outcome.exit_code == 0) outcome.exit_code = static_cast<int>(ExitCode::kInternalError);
    } else {
      outcome.result_file = targets[i].result_file;
      try {
        outcome.figures = DeviceResultFigures::of(*run.measurement, run.device, targets[i].result_file);
      } catch (const Error& error) {
        outcome.error = std::string("the result could not be read back: ") + error.what();
      }
      run.measurement->configuration.output = targets[i].result_file;
      run.measurement->configuration.backend_path = configuration.backend_path;
      outcome.measurement = std::move(run.measurement);
    }
    summary.devices.push_back(std::move(outcome));
  }
  summary.publish();
  return summary;
}

}  // namespace iteragpu
