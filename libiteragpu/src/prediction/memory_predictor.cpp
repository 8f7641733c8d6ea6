// The prediction rules, in one place: which tensors the model's ops allocate and free, in
// which order, through which model of the caching allocator (caching_allocator_model.cpp).
// The sequence mirrors what PyTorch 2.11 runs for nn.Sequential(Linear, GELU, Linear):
//   .to(device)     weight₁, bias₁, weight₂, bias₂ (registration order), one tensor each;
//   input           one [batch, context, width] tensor (randn writes in place);
//   Linear₁         at::linear → at::addmm: the [batch·context, hidden] output first, then,
//                   on the process's first GEMM, the cuBLAS workspace (kept for the life of
//                   the handle and stream) and, when the bias-fused cuBLASLt path is taken,
//                   the cuBLASLt workspace (kept likewise);
//   GELU            a new [batch·context, hidden] tensor; the pre-activation is freed after;
//   Linear₂         the [batch·context, width] output; the activation is freed after;
//   release         the output is freed before the next forward.
// at::addmm takes the cuBLASLt path for a 1-D bias when both weight dimensions exceed 1
// (aten/src/ATen/native/cuda/Blas.cpp) unless DISABLE_ADDMM_CUDA_LT=1.

#include "iteragpu/memory_predictor.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <optional>
#include <string>

#include "prediction/caching_allocator_model.hpp"
#include "iteragpu/error.hpp"
#include "mechanics/json_output.hpp"
#include "protocol/phase_row_json.hpp"
#include "workload/configuration_json.hpp"
#include "protocol/phase_protocol.hpp"
#include "protocol/phase_table_text.hpp"
#include "mechanics/quantity_parser.hpp"

namespace iteragpu {
namespace {

constexpr const char* kPredictionSchema = "iteragpu.prediction";
constexpr int kPredictionSchemaVersion = 1;

// PyTorch's defaults (aten/src/ATen/cuda/CublasHandlePool.cpp): cuBLAS gets ":4096:8" (32 MiB)
// on compute capability 9.0 and ":4096:2:16:8" (8 MiB + 128 KiB) elsewhere; cuBLASLt gets
// 1 MiB, capped at the cuBLAS size.
constexpr std::uint64_t kHopperCublasWorkspace = 4096ULL * 8 * 1024;
constexpr std::uint64_t kDefaultCublasWorkspace = 4096ULL * 1024 * 2 + 16ULL * 1024 * 8;
constexpr std::uint64_t kDefaultCublasLtWorkspace = 1024ULL * 1024;

std::optional<std::string> environment_variable(const char* name) {
  const char* value = std::getenv(name);
  if (value == nullptr || *value == '\0') return std::nullopt;
  return std::string(value);
}

// c10::utils::check_env's idea of "true".
bool truthy(const std::optional<std::string>& value) {
  if (!value) return false;
  std::string lower = *value;
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return lower == "1" || lower == "on" || lower == "yes" || lower == "true" || lower == "y";
}

// The environment variables that change what PyTorch allocates, as seen by this process.
struct AllocationSettings {
  bool cublaslt_disabled = false;        // DISABLE_ADDMM_CUDA_LT=1
  bool cublaslt_unified = false;         // TORCH_CUBLASLT_UNIFIED_WORKSPACE: no own workspace
  std::vector<std::string> caveats;

  static AllocationSettings from_environment(const PredictionTarget& target) {
    AllocationSettings settings;
    settings.cublaslt_disabled = environment_variable("DISABLE_ADDMM_CUDA_LT") == std::string("1");
    settings.cublaslt_unified = truthy(environment_variable("TORCH_CUBLASLT_UNIFIED_WORKSPACE"));
    for (const char* name : {"PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_ALLOC_CONF"}) {
      if (environment_variable(name))
        settings.caveats.push_back(std::string(name) +
                                   " is set: the caching allocator's settings (expandable "
                                   "segments, rounding, split limits) are not modelled; the "
                                   "prediction assumes the defaults");
    }
    const bool table = target.workspace_source.rfind("table", 0) == 0;
    for (const char* name : {"CUBLAS_WORKSPACE_CONFIG", "CUBLASLT_WORKSPACE_SIZE"}) {
      if (table && environment_variable(name))
        settings.caveats.push_back(std::string(name) +
                                   " is set: the workspace sizes come from the table of "
                                   "defaults, not from LibTorch; name the device to read them");
    }
    return settings;
  }
};

// Backend over the caching-allocator model: the ops of the real backend, as allocations.
class AllocatorModelBackend final : public Backend {
 public:
  AllocatorModelBackend(const PredictionTarget& target, bool cublaslt_used)
      : target_(target), cublaslt_used_(cublaslt_used) {}

  BackendStatus describe(int, StackReport&) override { return unsupported(); }
  BackendStatus open(const ModelSpec& spec) override {
    spec_ = spec;
    dtype_bytes_ = spec.dtype == "float32" ? 4 : 2;
    return BackendStatus::Ok();
  }
  BackendStatus synchronize() override { return BackendStatus::Ok(); }
  BackendStatus read_counters(AllocatorCounters& counters) override {
    counters = allocator_.counters();
    return BackendStatus::Ok();
  }
  BackendStatus reset_peaks() override {
    allocator_.reset_peaks();
    return BackendStatus::Ok();
  }
  BackendStatus start_gpu_timer() override { return BackendStatus::Ok(); }
  BackendStatus stop_gpu_timer() override { return BackendStatus::Ok(); }
  BackendStatus gpu_timer_seconds(double&) override { return unsupported(); }

  BackendStatus load_model() override {
    for (std::int64_t elements : {spec_.hidden * spec_.width, spec_.hidden,
                                  spec_.width * spec_.hidden, spec_.width})
      allocator_.allocate(bytes(elements));
    return BackendStatus::Ok();
  }
  BackendStatus create_inputs() override {
    allocator_.allocate(bytes(spec_.batch * spec_.context * spec_.width));
    return BackendStatus::Ok();
  }
  BackendStatus forward() override {
    const std::int64_t rows = spec_.batch * spec_.context;
    const auto pre_activation = allocator_.allocate(bytes(rows * spec_.hidden));
    first_gemm_workspaces();
    const auto activation = allocator_.allocate(bytes(rows * spec_.hidden));
    allocator_.free(pre_activation);
    output_ = allocator_.allocate(bytes(rows * spec_.width));
    allocator_.free(activation);
    return BackendStatus::Ok();
  }
  BackendStatus release_output() override {
    if (output_) allocator_.free(*output_);
    output_.reset();
    return BackendStatus::Ok();
  }
  void close() override {}

 private:
  static BackendStatus unsupported() {
    BackendStatus status;
    status.code = BackendStatus::Code::kUnsupported;
    return status;
  }
  std::uint64_t bytes(std::int64_t elements) const {
    return static_cast<std::uint64_t>(elements) * static_cast<std::uint64_t>(dtype_bytes_);
  }
  // The workspaces are allocated inside the first GEMM, after its output.
  void first_gemm_workspaces() {
    if (workspaces_allocated_) return;
    workspaces_allocated_ = true;
    allocator_.allocate(target_.cublas_workspace_bytes);
    if (cublaslt_used_ && target_.cublaslt_workspace_bytes > 0)
      allocator_.allocate(target_.cublaslt_workspace_bytes);
  }

  PredictionTarget target_;
  bool cublaslt_used_;
  ModelSpec spec_;
  int dtype_bytes_ = 4;
  CachingAllocatorModel allocator_;
  bool workspaces_allocated_ = false;
  std::optional<CachingAllocatorModel::BlockId> output_;
};

std::string compute_capability_text(const PredictionTarget& target) {
  return std::to_string(target.compute_capability_major) + "." +
         std::to_string(target.compute_capability_minor);
}

std::vector<std::string> prediction_rules() {
  return {
      "Tensor bytes = elements × dtype bytes; the caching allocator rounds every request up to a "
      "multiple of 512 bytes (at least 512).",
      "Requests of at most 1 MiB come from the small pool, carved from 2 MiB segments; larger "
      "ones from the large pool: 1–10 MiB requests get 20 MiB segments, larger requests a "
      "segment rounded up to 2 MiB.",
      "A request takes the smallest cached free block that fits; the rest is split off when it is "
      "at least 512 bytes (small pool) or more than 1 MiB (large pool), else the whole block is "
      "handed out and counted as allocated. Freed blocks merge with free neighbours; segments "
      "are never released.",
      "The first GEMM allocates, after its output, the cuBLAS workspace and (bias-fused cuBLASLt "
      "path) the cuBLASLt workspace; both stay allocated.",
      "A forward allocates the first layer's output, then GELU's, frees the first, allocates the "
      "second layer's output and frees GELU's; the output is freed before the next forward.",
  };
}

}  // namespace

PredictionTarget PredictionTarget::from_table(int major, int minor) {
  if (major < 1 || major > 99 || minor < 0 || minor > 9)
    throw UsageError("compute-capability", std::to_string(major) + "." + std::to_string(minor) +
                                               " is not a CUDA compute capability; expected "
                                               "MAJOR.MINOR such as 8.0, 9.0 or 10.0");
  PredictionTarget target;
  target.compute_capability_major = major;
  target.compute_capability_minor = minor;
  target.cublas_workspace_bytes =
      major == 9 && minor == 0 ? kHopperCublasWorkspace : kDefaultCublasWorkspace;
  target.cublaslt_workspace_bytes = std::min(kDefaultCublasLtWorkspace, target.cublas_workspace_bytes);
  target.workspace_source = "table for compute capability " + compute_capability_text(target) +
                            " (PyTorch 2.11 defaults)";
  return target;
}

PredictionTarget PredictionTarget::from_environment(const EnvironmentReport& environment) {
  if (!environment.stack || !environment.selected_present)
    throw UsageError("device", "no selected GPU to predict for; give a device that exists or a "
                               "compute capability");
  const StackReport& stack = *environment.stack;
  const GpuDevice* gpu = environment.selected_gpu();
  if (gpu == nullptr)
    throw UsageError("device", environment.selected_device + " is not among the visible GPUs");
  PredictionTarget target = from_table(gpu->compute_capability_major, gpu->compute_capability_minor);
  target.gpu_name = gpu->name;
  if (stack.cublas_workspace_bytes && stack.cublaslt_workspace_bytes) {
    target.cublas_workspace_bytes = *stack.cublas_workspace_bytes;
    target.cublaslt_workspace_bytes = *stack.cublaslt_workspace_bytes;
    target.workspace_source = "reported by LibTorch " + stack.torch_version;
  }
  return target;
}

PredictionTarget PredictionTarget::resolve(const std::string& device,
                                           const std::string& compute_capability,
                                           const std::string& backend_path) {
  if (device.empty() == compute_capability.empty())
    throw UsageError(device.empty() ? "device" : "compute-capability",
                     device.empty() ? "required: a device cuda:N (reads the GPU) or a compute "
                                      "capability MAJOR.MINOR (no GPU needed)"
                                    : "give either a device or a compute capability, not both");
  if (!compute_capability.empty()) {
    int major = 0, minor = 0;
    if (!parse_compute_capability(compute_capability, major, minor))
      throw UsageError("compute-capability", "'" + compute_capability +
                                                 "' is not MAJOR.MINOR; expected a CUDA compute "
                                                 "capability such as 8.0, 9.0 or 10.0");
    return from_table(major, minor);
  }
  parse_device_index(device, "device");
  EnvironmentRequest request;
  request.device = device;
  request.backend_path = backend_path;
  const EnvironmentReport environment = Environment().collect(request);
  if (!environment.stack)
    throw BackendUnavailable(environment.backend_error +
                             "; give a compute capability to predict without a GPU");
  if (!environment.selected_present)
    throw DeviceUnavailable(device + " is not a visible GPU (LibTorch " +
                            environment.stack->torch_version + " sees " +
                            std::to_string(environment.stack->gpus.size()) +
                            "); give a compute capability to predict without a GPU");
  return from_environment(environment);
}

MemoryPrediction MemoryPredictor::predict(const MeasureConfiguration& configuration,
                                          const PredictionTarget& target) {
  const MeasureConfiguration request = configuration.checked();
  MemoryPrediction prediction;
  prediction.model = SyntheticModel::from(request);
  prediction.configuration = request;
  prediction.configuration.output.clear();
  prediction.target = target;

  const AllocationSettings settings = AllocationSettings::from_environment(target);
  prediction.caveats = settings.caveats;
  prediction.cublaslt_used =
      !settings.cublaslt_disabled && prediction.model.width > 1 && prediction.model.hidden > 1;
  PredictionTarget modelled = target;
  if (settings.cublaslt_unified) modelled.cublaslt_workspace_bytes = 0;  // shares cuBLAS's

  AllocatorModelBackend backend(modelled, prediction.cublaslt_used);
  prediction.phases.reserve(static_cast<std::size_t>(phase_row_count(request)));
  run_phase_protocol(backend, request, prediction.model, model_spec(prediction.model, 0, request.seed),
                     [&](PhaseRow row) {
                       prediction.phases.push_back(
                           {row.phase, row.repeat, row.forwards, row.baseline, row.end});
                     });
  return prediction;
}

std::string MemoryPrediction::to_json() const {
  JsonWriter json(kPredictionSchema, kPredictionSchemaVersion);
  write_measure_configuration(json, "device", configuration);
  json.key("target").begin_object().key("gpu_name");
  json.text_or_null(target.gpu_name);
  json.key("compute_capability").value(compute_capability_text(target))
      .key("cublas_workspace_bytes").value(target.cublas_workspace_bytes)
      .key("cublaslt_workspace_bytes").value(target.cublaslt_workspace_bytes)
      .key("workspace_source").value(target.workspace_source)
      .end_object();
  json.key("cublaslt_used").value(cublaslt_used);
  json.key("parameter_bytes").value(model.parameter_bytes).key("input_bytes").value(model.input_bytes);
  json.key("phases").begin_array();
  for (const PhasePrediction& row : phases) {
    json.begin_object().key("phase").value(row.phase).key("repeat");
    if (row.repeat > 0) {
      json.value(row.repeat);
    } else {
      json.null();
    }
    json.key("forwards").value(row.forwards);
    write_phase_counters(json, row.baseline, row.end);
    json.end_object();
  }
  json.end_array();
  json.key("caveats").value(caveats);
  json.key("rules").value(prediction_rules());
  json.key("notes").value(std::vector<std::string>{
      "Predicted counters of this process's PyTorch caching allocator on one GPU, for the "
      "measurement protocol of `iteragpu measure` with the same options; not the whole GPU "
      "memory, the CUDA context or other processes.",
      "The rules are PyTorch 2.11's defaults; other versions or allocator settings can differ."});
  return json.finish();
}

std::string MemoryPrediction::to_text() const {
  std::string text = "Predicted memory for Linear(" + std::to_string(model.width) + "→" +
                     std::to_string(model.hidden) + ") → GELU → Linear(" +
                     std::to_string(model.hidden) + "→" + std::to_string(model.width) + "), " +
                     model.dtype + ", input [" + std::to_string(model.batch) + ", " +
                     std::to_string(model.context) + ", " + std::to_string(model.width) + "]\n";
  text += "GPU: " + (target.gpu_name.empty() ? std::string("compute capability ")
                                             : target.gpu_name + ", compute capability ") +
          compute_capability_text(target) + "; cuBLAS workspace " +
          std::to_string(target.cublas_workspace_bytes) + " bytes, cuBLASLt workspace " +
          std::to_string(target.cublaslt_workspace_bytes) + " bytes" +
          (cublaslt_used ? "" : " (not used: no bias-fused cuBLASLt GEMM)") + " (" +
          target.workspace_source + ")\n\n";
  text += phase_table_header("");
  for (const PhasePrediction& row : phases)
    text += phase_table_row(row.phase, row.repeat, "", row.baseline, row.end);
  text += "\nPredicted caching-allocator counters (bytes) of one process on one GPU; not the CUDA "
          "context or other processes. Rules:\n";
  for (const std::string& rule : prediction_rules()) text += "  - " + rule + "\n";
  for (const std::string& caveat : caveats) text += "Caveat: " + caveat + "\n";
  return text;
}

}  // namespace iteragpu
