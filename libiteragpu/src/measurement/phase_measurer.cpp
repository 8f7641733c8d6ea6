// One measurement in this process: the backend checked for a GPU, the prediction made, the
// phase protocol run with the workload the configuration asks for, and the file published.

#include "iteragpu/phase_measurer.hpp"

#include <atomic>
#include <memory>

#include "environment/environment_json.hpp"
#include "iteragpu/error.hpp"
#include "mechanics/atomic_output_file.hpp"
#include "mechanics/backend_loader.hpp"
#include "protocol/phase_protocol.hpp"
#include "workload/workload.hpp"

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
std::optional<MemoryPrediction> predict_for(const MeasureConfiguration& request, const Workload& workload,
                                            const EnvironmentReport& environment) {
  if (environment.stack && environment.stack->hip_build_version) return std::nullopt;
  if (!workload.predictable()) return std::nullopt;
  return MemoryPredictor::predict(request, PredictionTarget::from_environment(environment));
}

Measurement run_protocol(const std::shared_ptr<Backend>& supplied_backend,
                         const MeasureConfiguration& request, const PhaseProgress& progress) {
  Measurement measurement;
  const std::shared_ptr<const Workload> workload = workload_for(request);
  measurement.workload = workload;
  if (request.model.empty()) measurement.model = SyntheticModel::from(request);
  measurement.checkpoint = workload->checkpoint_record();
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

  measurement.prediction = predict_for(request, *workload, measurement.environment);

  const int rows_total = phase_row_count(request, *workload);
  measurement.phases.reserve(static_cast<std::size_t>(rows_total));
  run_phase_protocol(*backend, request, *workload, device_index, [&](PhaseRow row) {
    measurement.phases.push_back(std::move(row));
    if (progress) progress(measurement.phases.back(), static_cast<int>(measurement.phases.size()), rows_total);
    throw_if_interrupted(("after phase " + measurement.phases.back().phase).c_str());
  });
  measurement.timing = workload->warm_repeats(measurement.phases);
  measurement.run = workload->run_record(*backend, measurement.phases, measurement.timing);
  return measurement;
}

}  // namespace

PhaseMeasurer::PhaseMeasurer() = default;
PhaseMeasurer::PhaseMeasurer(std::shared_ptr<Backend> backend) : backend_(std::move(backend)) {}

void PhaseMeasurer::request_interrupt() { interrupt_requested.store(true); }

Measurement PhaseMeasurer::run(const MeasureConfiguration& configuration, const PhaseProgress& progress) const {
  InterruptScope interrupt_scope;
  const MeasureConfiguration checked = configuration.checked();
  require_weights_here(checked);
  return run_protocol(backend_, checked, progress);
}

Measurement PhaseMeasurer::measure(const MeasureConfiguration& configuration, const PhaseProgress& progress,
                                   std::string* published_json) const {
  InterruptScope interrupt_scope;
  // Everything checkable without the GPU is checked before the backend is even loaded.
  const MeasureConfiguration checked = configuration.checked();
  require_weights_here(checked);
  parse_device_index(checked.device, "device");
  ensure_output_absent(checked.output, "output");
  Measurement measurement = run_protocol(backend_, checked, progress);
  const std::string json = measurement.to_json();
  throw_if_interrupted("before the result was written");
  publish_exclusively(configuration.output, json);
  if (published_json) *published_json = json;
  return measurement;
}

}  // namespace iteragpu
