#include "iteragpu/phase_measurer.hpp"

#include <atomic>
#include <chrono>
#include <cstdio>

#include "mechanics/atomic_output_file.hpp"
#include "mechanics/backend_loader.hpp"
#include "environment/environment_json.hpp"
#include "iteragpu/error.hpp"
#include "mechanics/json_output.hpp"
#include "protocol/phase_row_json.hpp"
#include "measurement/measurement_schema.hpp"
#include "workload/configuration_json.hpp"
#include "workload/workload.hpp"
#include "protocol/phase_protocol.hpp"
#include "protocol/phase_table_text.hpp"

namespace iteragpu {
namespace {


// Set from a signal handler: lock-free, so async-signal-safe.
std::atomic<bool> interrupt_requested{false};
static_assert(std::atomic<bool>::is_always_lock_free);

// Clears a pending interrupt when a measurement ends, so it cannot stop the next one.
struct InterruptScope {
  ~InterruptScope() { interrupt_requested.store(false); }
};

void throw_if_interrupted(const char* when) {
  if (interrupt_requested.load())
    throw Interrupted(std::string("interrupted ") + when + "; nothing was written");
}

// Refuses to measure without a GPU: never a CPU fallback.
void require_selected_gpu(const EnvironmentReport& environment) {
  if (!environment.stack)
    throw BackendUnavailable(environment.backend_error + "; nothing was measured");
  const StackReport& stack = *environment.stack;
  if (!stack.gpu_runtime_available || stack.gpus.empty())
    throw DeviceUnavailable("no GPU available: " + no_gpu_reason(stack) +
                            "; nothing was measured (there is no CPU fallback)");
  if (!environment.selected_present) {
    const std::string last = "cuda:" + std::to_string(stack.gpus.size() - 1);
    throw DeviceUnavailable(environment.selected_device + " does not exist; this process sees " +
                            (stack.gpus.size() == 1 ? "1 GPU: cuda:0"
                                                    : std::to_string(stack.gpus.size()) +
                                                          " GPUs: cuda:0 to " + last) +
                            "; nothing was measured");
  }
}

// The counters this configuration should show on the selected GPU, from the allocator rules;
// none for a ROCm build, whose allocator and BLAS libraries the rules do not describe.
std::optional<MemoryPrediction> predict_for(const MeasureConfiguration& request,
                                            const EnvironmentReport& environment) {
  if (environment.stack && environment.stack->hip_build_version) return std::nullopt;
  return MemoryPredictor::predict(request, PredictionTarget::from_environment(environment));
}

Measurement run_protocol(const std::shared_ptr<Backend>& supplied_backend,
                         const MeasureConfiguration& request, const PhaseProgress& progress) {
  Measurement measurement;
  measurement.model = SyntheticModel::from(request);  // the one derivation of this run
  measurement.configuration = request;
  const int device_index = parse_device_index(request.device, "device");
  throw_if_interrupted("before the measurement started");

  const std::shared_ptr<Backend> backend = backend_or_plugin(supplied_backend, request.backend_path);
  const Environment environment = supplied_backend ? Environment(backend) : Environment();
  EnvironmentRequest environment_request;
  environment_request.device = request.device;
  environment_request.backend_path = request.backend_path;
  measurement.environment = environment.collect(environment_request);
  require_selected_gpu(measurement.environment);

  measurement.prediction = predict_for(request, measurement.environment);
  const std::unique_ptr<const Workload> workload = workload_for(request);

  const int rows_total = phase_row_count(request);
  measurement.phases.reserve(static_cast<std::size_t>(rows_total));
  run_phase_protocol(*backend, request, *workload, device_index, [&](PhaseRow row) {
    measurement.phases.push_back(std::move(row));
    if (progress) progress(measurement.phases.back(), static_cast<int>(measurement.phases.size()), rows_total);
    throw_if_interrupted(("after phase " + measurement.phases.back().phase).c_str());
  });
  measurement.timing = summarize_warm_repeats(measurement.phases);
  return measurement;
}

std::vector<std::string> measurement_notes() {
  return {
      "allocated_bytes is part of reserved_bytes: never add them.",
      "peak_allocated_bytes and peak_reserved_bytes are separate maxima over the phase (the "
      "peaks are reset at its start): never subtract one from the other.",
      "The counters cover this process's LibTorch caching allocator on the selected GPU only: "
      "not the whole GPU memory, the driver or CUDA context, other processes or other GPUs.",
      "host_seconds is host wall-clock time around the phase's work and the synchronization "
      "that ends it: it includes host overhead and synchronization and is not isolated kernel "
      "time. gpu_event_seconds is the time between GPU events recorded around the same work "
      "(GPU event time, not host time); null when the backend has no GPU timer.",
      "Each forward's output is still alive when its phase ends (it counts in the end values) "
      "and is released before the next forward; weights and inputs persist across forwards; "
      "the allocator cache is never emptied.",
      "model_load includes building and initialising the model on the CPU; its memory counters "
      "are the GPU's only. cold_forward is the first forward after device, generator and inputs "
      "are initialised, not a machine or driver cold start.",
      "Inference only: no gradients, autocast, optimizer, quantization or multi-GPU split.",
      "The figures depend on the allocator and the software versions: keep the environment "
      "section with the results.",
  };
}

void write_spread(JsonWriter& json, const SpreadStatistics& spread) {
  json.begin_object()
      .key("count").value(spread.count)
      .key("median").value(spread.median)
      .key("iqr").value(spread.iqr)
      .key("min").value(spread.min)
      .key("max").value(spread.max)
      .key("mean").value(spread.mean)
      .key("stdev").value(spread.stdev)
      .key("cv").value(spread.cv)
      .end_object();
}

void write_timing(JsonWriter& json, const TimingSummary& timing) {
  json.key("timing").begin_object().key("warm_repeats").value(timing.warm_repeats);
  json.key("host_seconds");
  write_spread(json, timing.host_seconds);
  json.key("gpu_event_seconds");
  if (timing.gpu_event_seconds) {
    write_spread(json, *timing.gpu_event_seconds);
  } else {
    json.null();
  }
  json.key("warnings").begin_array();
  for (const TimingWarning& warning : timing.warnings)
    json.begin_object().key("code").value(warning.code).key("clock").value(warning.clock)
        .key("message").value(warning.message).end_object();
  json.end_array().end_object();
}

// The spread of the warm repeats, a row per clock, then the warnings.
std::string timing_text(const TimingSummary& timing) {
  std::string text = "\nWarm repeats (" + std::to_string(timing.warm_repeats) + "), microseconds:\n";
  char line[256];
  std::snprintf(line, sizeof line, "  %-15s %10s %10s %10s %10s %10s %10s %7s\n", "clock", "median",
                "IQR", "min", "max", "mean", "stdev", "CV");
  text += line;
  auto row = [&](const char* clock, const SpreadStatistics& s) {
    std::snprintf(line, sizeof line, "  %-15s %10.1f %10.1f %10.1f %10.1f %10.1f %10.1f %6.1f%%\n", clock,
                  s.median * 1e6, s.iqr * 1e6, s.min * 1e6, s.max * 1e6, s.mean * 1e6, s.stdev * 1e6,
                  s.cv * 100);
    text += line;
  };
  row("host", timing.host_seconds);
  if (timing.gpu_event_seconds) row("GPU event", *timing.gpu_event_seconds);
  if (timing.warnings.empty()) text += "  no warnings\n";
  for (const TimingWarning& warning : timing.warnings)
    text += "  warning (" + warning.code + "): " + warning.message + "\n";
  return text;
}

std::string format_seconds(const std::optional<double>& seconds) {
  if (!seconds) return "-";
  char text[32];
  std::snprintf(text, sizeof text, "%.6f", *seconds);
  return text;
}

}  // namespace

PhaseMeasurer::PhaseMeasurer() = default;
PhaseMeasurer::PhaseMeasurer(std::shared_ptr<Backend> backend) : backend_(std::move(backend)) {}

void PhaseMeasurer::request_interrupt() { interrupt_requested.store(true); }

Measurement PhaseMeasurer::run(const MeasureConfiguration& configuration, const PhaseProgress& progress) const {
  InterruptScope interrupt_scope;
  return run_protocol(backend_, configuration.checked(), progress);
}

Measurement PhaseMeasurer::measure(const MeasureConfiguration& configuration, const PhaseProgress& progress,
                                   std::string* published_json) const {
  InterruptScope interrupt_scope;
  // Everything checkable without the GPU is checked before the backend is even loaded.
  const MeasureConfiguration checked = configuration.checked();
  parse_device_index(checked.device, "device");
  ensure_output_absent(checked.output, "output");
  Measurement measurement = run_protocol(backend_, checked, progress);
  const std::string json = measurement.to_json();
  throw_if_interrupted("before the result was written");
  publish_exclusively(configuration.output, json);
  if (published_json) *published_json = json;
  return measurement;
}

std::string Measurement::to_json() const {
  JsonWriter json(kMeasurementSchema, kMeasurementSchemaVersion);
  json.key("environment").begin_object()
      .key("schema").value(kEnvironmentSchema)
      .key("schema_version").value(kEnvironmentSchemaVersion);
  write_environment_members(json, environment);
  json.end_object();

  write_measure_configuration(json, "device", configuration);

  workload_for(configuration)->write_json(json);

  json.key("prediction");
  if (prediction) {
    const PredictionTarget& target = prediction->target;
    json.begin_object()
        .key("compute_capability").value(std::to_string(target.compute_capability_major) + "." +
                                         std::to_string(target.compute_capability_minor))
        .key("cublas_workspace_bytes").value(target.cublas_workspace_bytes)
        .key("cublaslt_workspace_bytes").value(target.cublaslt_workspace_bytes)
        .key("workspace_source").value(target.workspace_source)
        .key("cublaslt_used").value(prediction->cublaslt_used)
        .key("exact_counters").value(exact_predicted_counters())
        .key("counters").value(static_cast<int>(6 * phases.size()))
        .key("caveats").value(prediction->caveats)
        .end_object();
  } else {
    json.null();
  }

  json.key("phases").begin_array();
  for (std::size_t index = 0; index < phases.size(); ++index) {
    const PhaseRow& row = phases[index];
    json.begin_object();
    write_phase_row_members(json, row);
    const PhasePrediction* predicted = predicted_row(index);
    json.key("predicted");
    if (predicted) {
      json.begin_object();
      write_phase_counters(json, predicted->baseline, predicted->end);
      json.end_object().key("difference").begin_object();
      write_phase_counter_differences(json, row.baseline, row.end, predicted->baseline, predicted->end);
      json.end_object();
    } else {
      json.null().key("difference").null();
    }
    json.end_object();
  }
  json.end_array();
  write_timing(json, timing);
  json.key("notes").value(measurement_notes());
  return json.finish();
}

const PhasePrediction* Measurement::predicted_row(std::size_t index) const {
  if (!prediction || index >= prediction->phases.size()) return nullptr;
  const PhasePrediction& predicted = prediction->phases[index];
  if (index >= phases.size() || predicted.phase != phases[index].phase ||
      predicted.repeat != phases[index].repeat)
    return nullptr;
  return &predicted;
}

int Measurement::exact_predicted_counters() const {
  int exact = 0;
  for (std::size_t index = 0; index < phases.size(); ++index) {
    const PhasePrediction* predicted = predicted_row(index);
    if (!predicted) continue;
    const PhaseRow& row = phases[index];
    exact += (row.baseline.allocated_bytes == predicted->baseline.allocated_bytes) +
             (row.end.allocated_bytes == predicted->end.allocated_bytes) +
             (row.baseline.reserved_bytes == predicted->baseline.reserved_bytes) +
             (row.end.reserved_bytes == predicted->end.reserved_bytes) +
             (row.end.peak_allocated_bytes == predicted->end.peak_allocated_bytes) +
             (row.end.peak_reserved_bytes == predicted->end.peak_reserved_bytes);
  }
  return exact;
}

namespace {

// The prediction beside the measured rows: how many counters it got exactly, and each one it
// did not, with the difference.
std::string prediction_text(const Measurement& measurement) {
  if (!measurement.prediction) return "\nPrediction: none (the allocator rules describe CUDA builds only).\n";
  const MemoryPrediction& prediction = *measurement.prediction;
  std::string text = "\nPrediction (made before the GPU was touched; workspaces " +
                     prediction.target.workspace_source + "): " +
                     std::to_string(measurement.exact_predicted_counters()) + " of " +
                     std::to_string(6 * measurement.phases.size()) + " counters exact\n";
  for (std::size_t index = 0; index < measurement.phases.size(); ++index) {
    const PhaseRow& row = measurement.phases[index];
    const PhasePrediction* predicted = measurement.predicted_row(index);
    if (!predicted) continue;
    const struct {
      const char* name;
      std::uint64_t measured, expected;
    } counters[] = {
        {"allocated at baseline", row.baseline.allocated_bytes, predicted->baseline.allocated_bytes},
        {"allocated at end", row.end.allocated_bytes, predicted->end.allocated_bytes},
        {"reserved at baseline", row.baseline.reserved_bytes, predicted->baseline.reserved_bytes},
        {"reserved at end", row.end.reserved_bytes, predicted->end.reserved_bytes},
        {"peak allocated", row.end.peak_allocated_bytes, predicted->end.peak_allocated_bytes},
        {"peak reserved", row.end.peak_reserved_bytes, predicted->end.peak_reserved_bytes},
    };
    for (const auto& counter : counters) {
      if (counter.measured == counter.expected) continue;
      text += "  " + row.phase + (row.repeat > 0 ? " " + std::to_string(row.repeat) : "") + ": " +
              counter.name + " measured " + std::to_string(counter.measured) + ", predicted " +
              std::to_string(counter.expected) + " (difference " +
              std::to_string(static_cast<std::int64_t>(counter.measured) -
                             static_cast<std::int64_t>(counter.expected)) +
              ")\n";
    }
  }
  for (const std::string& caveat : prediction.caveats) text += "  caveat: " + caveat + "\n";
  return text;
}

}  // namespace

std::string Measurement::to_text() const {
  std::string gpu_name;
  if (const GpuDevice* gpu = environment.selected_gpu()) gpu_name = " (" + gpu->name + ")";
  std::string text = "Measurement on " + configuration.device + gpu_name;
  if (environment.stack) text += ", LibTorch " + environment.stack->torch_version;
  if (environment.from_test_double()) text += "\n" + std::string(kTestDoubleMark);
  text += "\n" + workload_for(configuration)->measurement_text() + "; warmup " +
          std::to_string(configuration.warmup) + ", repeats " +
          std::to_string(configuration.repeats) + ", seed " + std::to_string(configuration.seed) + "\n\n";
  char middle[512];
  std::snprintf(middle, sizeof middle, " %8s %12s %12s", "forwards", "host s", "GPU event s");
  text += phase_table_header(middle);
  for (const PhaseRow& row : phases) {
    std::snprintf(middle, sizeof middle, " %8d %12.6f %12s", row.forwards, row.host_seconds,
                  format_seconds(row.gpu_event_seconds).c_str());
    text += phase_table_row(row.phase, row.repeat, middle, row.baseline, row.end);
  }
  text += timing_text(timing);
  text += prediction_text(*this);
  text += "\nBytes are this process's caching-allocator counters on the selected GPU. Notes:\n";
  for (const auto& note : measurement_notes()) text += "  - " + note + "\n";
  return text;
}

}  // namespace iteragpu
