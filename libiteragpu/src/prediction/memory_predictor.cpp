// The prediction: the measurement's own phase protocol run against a model of PyTorch's
// caching allocator (caching_allocator_model.cpp), the workload's ops as allocations
// (workload/workload.hpp), and the environment variables that change what PyTorch allocates.

#include "iteragpu/memory_predictor.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <optional>
#include <string>

#include "mechanics/checked_count.hpp"
#include "prediction/caching_allocator_model.hpp"
#include "iteragpu/error.hpp"
#include "iteragpu/printable_text.hpp"
#include "mechanics/json_output.hpp"
#include "protocol/phase_row_json.hpp"
#include "workload/configuration_json.hpp"
#include "workload/workload.hpp"
#include "protocol/phase_protocol.hpp"
#include "protocol/phase_table_text.hpp"
#include "mechanics/quantity_parser.hpp"
#include "mechanics/wording.hpp"

namespace iteragpu {
namespace {

constexpr const char* kPredictionSchema = "iteragpu.prediction";
constexpr int kPredictionSchemaVersion = 3;

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
  std::vector<PredictionCaveat> caveats;

  static AllocationSettings from_environment(const PredictionTarget& target) {
    AllocationSettings settings;
    settings.cublaslt_disabled = environment_variable("DISABLE_ADDMM_CUDA_LT") == std::string("1");
    settings.cublaslt_unified = truthy(environment_variable("TORCH_CUBLASLT_UNIFIED_WORKSPACE"));
    for (const char* name : {"PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_ALLOC_CONF"}) {
      if (environment_variable(name))
        settings.caveats.push_back({std::string(name) +
                                        " is set: the caching allocator's settings (expandable "
                                        "segments, rounding, split limits) are not modelled; the "
                                        "prediction assumes the defaults",
                                    PredictionCaveat::Reach::kEveryCounter, false});
    }
    const bool table = target.workspace_source.rfind("table", 0) == 0;
    for (const char* name : {"CUBLAS_WORKSPACE_CONFIG", "CUBLASLT_WORKSPACE_SIZE"}) {
      if (table && environment_variable(name))
        settings.caveats.push_back({std::string(name) +
                                        " is set: the workspace sizes come from the table of "
                                        "defaults, not from LibTorch; name the device to read them",
                                    PredictionCaveat::Reach::kForwardAllocations, false});
    }
    // The rules are PyTorch 2.11's; a backend built against another LibTorch may allocate
    // otherwise anywhere.
    if (!target.torch_version.empty() && target.torch_version.rfind("2.11.", 0) != 0)
      settings.caveats.push_back({"the backend reports LibTorch " + target.torch_version +
                                      ": the rules are PyTorch 2.11's, and every counter may differ with "
                                      "another version's allocator and ops",
                                  PredictionCaveat::Reach::kEveryCounter, false});
    return settings;
  }
};

// Marks, on each predicted row, the counters a caveat leaves unchecked (PredictionCaveat).
void mark_uncertain_counters(std::vector<PhasePrediction>& rows, const std::vector<PredictionCaveat>& caveats) {
  enum : unsigned {
    kAllocatedBaseline = 1, kAllocatedEnd = 2, kReservedBaseline = 4, kReservedEnd = 8,
    kPeakAllocated = 16, kPeakReserved = 32, kEvery = 63
  };
  static const std::pair<unsigned, const char*> kNames[] = {
      {kAllocatedBaseline, "allocated_bytes.baseline"}, {kAllocatedEnd, "allocated_bytes.end"},
      {kReservedBaseline, "reserved_bytes.baseline"},   {kReservedEnd, "reserved_bytes.end"},
      {kPeakAllocated, "peak_allocated_bytes"},         {kPeakReserved, "peak_reserved_bytes"}};
  std::size_t first_forward = rows.size();
  for (std::size_t i = 0; i < rows.size() && first_forward == rows.size(); ++i)
    if (rows[i].forwards > 0) first_forward = i;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    unsigned marked = 0;
    bool every_caveat_a_lower_bound = true;
    bool every_caveat_recorded = true;
    std::uint64_t recorded_bound = 0;
    for (const PredictionCaveat& caveat : caveats) {
      unsigned counters = 0;
      switch (caveat.reach) {
        case PredictionCaveat::Reach::kEveryCounter: counters = kEvery; break;
        case PredictionCaveat::Reach::kForwardTemporaries:
          if (i == first_forward) counters = kPeakAllocated | kReservedEnd | kPeakReserved;
          if (i > first_forward) counters = kEvery & ~(kAllocatedBaseline | kAllocatedEnd);
          break;
        case PredictionCaveat::Reach::kForwardAllocations:
          if (i == first_forward) counters = kEvery & ~(kAllocatedBaseline | kReservedBaseline);
          if (i > first_forward) counters = kEvery;
          break;
      }
      if (counters == 0) continue;
      marked |= counters;
      every_caveat_a_lower_bound = every_caveat_a_lower_bound && caveat.lower_bound;
      every_caveat_recorded = every_caveat_recorded && caveat.recorded_bound_bytes > 0;
      recorded_bound += caveat.recorded_bound_bytes;
    }
    rows[i].uncertain_counters.clear();
    for (const auto& [bit, name] : kNames)
      if (marked & bit) rows[i].uncertain_counters.push_back(name);
    rows[i].lower_bound = marked != 0 && every_caveat_a_lower_bound;
    rows[i].recorded_bound_bytes = marked != 0 && every_caveat_recorded ? recorded_bound : 0;
  }
}

// Counter by counter, the larger of two runs of the same rows (Workload::SegmentLayout).
void keep_larger_counters(std::vector<PhasePrediction>& rows, const std::vector<PhasePrediction>& other) {
  for (std::size_t i = 0; i < rows.size(); ++i) {
    for (auto [counters, others] : {std::pair{&rows[i].baseline, &other.at(i).baseline},
                                    std::pair{&rows[i].end, &other.at(i).end}}) {
      counters->allocated_bytes = std::max(counters->allocated_bytes, others->allocated_bytes);
      counters->reserved_bytes = std::max(counters->reserved_bytes, others->reserved_bytes);
      counters->peak_allocated_bytes = std::max(counters->peak_allocated_bytes, others->peak_allocated_bytes);
      counters->peak_reserved_bytes = std::max(counters->peak_reserved_bytes, others->peak_reserved_bytes);
    }
  }
}

// The caching-allocator model with the GEMM workspaces of the process's first GEMMs.
class ModelledAllocator final : public AllocationRecorder {
 public:
  ModelledAllocator(const PredictionTarget& target, bool cublaslt_used, bool segments_downward)
      : target_(target),
        cublaslt_used_(cublaslt_used),
        allocator_(segments_downward ? CachingAllocatorModel(CachingAllocatorModel::Downward{})
                                     : CachingAllocatorModel()) {
    allocator_.set_capacity(target.allocator_capacity_bytes);
  }

  Block allocate(std::uint64_t bytes) override { return allocator_.allocate(bytes); }
  void free(Block block) override { allocator_.free(block); }
  // Each workspace is allocated inside the first GEMM of its thread that uses it, after its
  // output, and stays: the main thread's, and the autograd engine's thread's.
  void gemm_workspaces(bool bias_fused) override { allocate_workspaces(main_thread_, bias_fused); }
  void backward_gemm_workspaces(bool bias_fused) override { allocate_workspaces(engine_thread_, bias_fused); }
  CachingAllocatorModel& allocator() { return allocator_; }

 private:
  // Which of a thread's cuBLAS handle's workspaces exist.
  struct ThreadWorkspaces {
    bool cublas = false;
    bool cublaslt = false;
  };
  void allocate_workspaces(ThreadWorkspaces& thread, bool bias_fused) {
    if (!thread.cublas) {
      thread.cublas = true;
      allocator_.allocate(target_.cublas_workspace_bytes);
    }
    if (bias_fused && cublaslt_used_ && !thread.cublaslt && target_.cublaslt_workspace_bytes > 0) {
      thread.cublaslt = true;
      allocator_.allocate(target_.cublaslt_workspace_bytes);
    }
  }

  PredictionTarget target_;
  bool cublaslt_used_;
  CachingAllocatorModel allocator_;
  ThreadWorkspaces main_thread_, engine_thread_;
};

// Backend over the caching-allocator model: the workload's steps, as allocations.
class AllocatorModelBackend final : public Backend {
 public:
  AllocatorModelBackend(const Workload& workload, const PredictionTarget& target, bool cublaslt_used,
                        bool segments_downward)
      : allocator_(target, cublaslt_used, segments_downward), steps_(workload.step_allocations()) {}

  BackendStatus describe(int, StackReport&) override { return unsupported(); }
  BackendStatus open(const WorkloadSpec&) override { return BackendStatus::Ok(); }
  BackendStatus synchronize() override { return BackendStatus::Ok(); }
  BackendStatus read_counters(AllocatorCounters& counters) override {
    counters = allocator_.allocator().counters();
    return BackendStatus::Ok();
  }
  BackendStatus reset_peaks() override {
    allocator_.allocator().reset_peaks();
    return BackendStatus::Ok();
  }
  BackendStatus start_gpu_timer() override { return BackendStatus::Ok(); }
  BackendStatus stop_gpu_timer() override { return BackendStatus::Ok(); }
  BackendStatus gpu_timer_seconds(double&) override { return unsupported(); }

  BackendStatus run_step(const std::string& step) override {
    bool modelled_step = true;
    const BackendStatus status = modelled([&] { modelled_step = steps_->run(step, allocator_); });
    if (!modelled_step) return {BackendStatus::Code::kUnsupported, "no allocations are modelled for the step " + step};
    return status;
  }
  BackendStatus release_output() override {
    return modelled([&] { steps_->release_output(allocator_); });
  }
  void close() override {}
  BackendStatus run_report(std::string&) override { return {BackendStatus::Code::kUnsupported, "a prediction"}; }

 private:
  // A step of the model; where the allocator runs out of its capacity, the out-of-memory
  // answer a GPU would give (the phase protocol names the phase).
  template <typename Step>
  static BackendStatus modelled(Step&& step) {
    try {
      step();
      return BackendStatus::Ok();
    } catch (const CachingAllocatorModel::OutOfMemory& out) {
      return {BackendStatus::Code::kOutOfMemory,
              "predicted: a new segment of " + std::to_string(out.requested_bytes) + " bytes does not fit beside " +
                  std::to_string(out.reserved_bytes) + " reserved once the allocator has freed its cache"};
    }
  }
  static BackendStatus unsupported() {
    BackendStatus status;
    status.code = BackendStatus::Code::kUnsupported;
    return status;
  }

  ModelledAllocator allocator_;
  std::unique_ptr<StepAllocations> steps_;
};

// The compute capabilities of NVIDIA GPUs that PyTorch 2.11's CUDA builds run on: the ones
// the table of default workspace sizes answers for (9.0 its own size, the others PyTorch's
// general default).
struct ComputeCapability {
  int major, minor;
};
constexpr ComputeCapability kWorkspaceTable[] = {{5, 0}, {5, 2}, {5, 3}, {6, 0}, {6, 1},  {6, 2},  {7, 0},
                                                 {7, 2}, {7, 5}, {8, 0}, {8, 6}, {8, 7},  {8, 9},  {9, 0},
                                                 {10, 0}, {10, 3}, {11, 0}, {12, 0}, {12, 1}};

bool in_workspace_table(int major, int minor) {
  for (const ComputeCapability& known : kWorkspaceTable)
    if (known.major == major && known.minor == minor) return true;
  return false;
}

std::string workspace_table_text() {
  std::string text;
  for (const ComputeCapability& known : kWorkspaceTable)
    text += (text.empty() ? "" : ", ") + std::to_string(known.major) + "." + std::to_string(known.minor);
  return text;
}

std::string compute_capability_text(const PredictionTarget& target) {
  return std::to_string(target.compute_capability_major) + "." +
         std::to_string(target.compute_capability_minor);
}

std::vector<std::string> prediction_rules(const Workload& workload) {
  std::vector<std::string> rules = {
      "Tensor bytes = elements × dtype bytes; the caching allocator rounds every request up to a "
      "multiple of 512 bytes (at least 512).",
      "Requests of at most 1 MiB come from the small pool, carved from 2 MiB segments; larger "
      "ones from the large pool: 1–10 MiB requests get 20 MiB segments, larger requests a "
      "segment rounded up to 2 MiB.",
      "A request takes the smallest cached free block that fits; the rest is split off when it is "
      "at least 512 bytes (small pool) or more than 1 MiB (large pool), else the whole block is "
      "handed out and counted as allocated. Freed blocks merge with free neighbours; segments "
      "are never released.",
      "The first GEMM allocates, after its output, the cuBLAS workspace, and the first bias-fused "
      "GEMM (cuBLASLt path) the cuBLASLt workspace; both stay allocated.",
  };
  for (std::string& rule : workload.forward_rules()) rules.push_back(std::move(rule));
  return rules;
}

// PyTorch's default workspaces for a GPU of this compute capability: from the table for a
// compute capability a user names, and for the GPU a backend reports whatever it is.
PredictionTarget default_workspaces(int major, int minor) {
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

}  // namespace

PredictionTarget PredictionTarget::from_table(int major, int minor) {
  if (!in_workspace_table(major, minor))
    throw UsageError("compute-capability", std::to_string(major) + "." + std::to_string(minor) +
                                               " is not a compute capability of the workspace table; "
                                               "expected one of " + workspace_table_text());
  return default_workspaces(major, minor);
}

PredictionTarget PredictionTarget::from_environment(const EnvironmentReport& environment) {
  if (!environment.stack || !environment.selected_present)
    throw UsageError("device", "no selected GPU to predict for; give a device that exists or a "
                               "compute capability");
  const StackReport& stack = *environment.stack;
  const GpuDevice* gpu = environment.selected_gpu();
  if (gpu == nullptr)
    throw UsageError("device", environment.selected_device + " is not among the visible GPUs");
  PredictionTarget target = default_workspaces(gpu->compute_capability_major, gpu->compute_capability_minor);
  target.gpu_name = gpu->name;
  if (stack.cublas_workspace_bytes && stack.cublaslt_workspace_bytes) {
    target.cublas_workspace_bytes = *stack.cublas_workspace_bytes;
    target.cublaslt_workspace_bytes = *stack.cublaslt_workspace_bytes;
    target.workspace_source = "reported by LibTorch " + stack.torch_version;
    target.torch_version = stack.torch_version;
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

namespace {

// The workload a prediction was made for; found again from the configuration for one built by hand.
std::shared_ptr<const Workload> workload_of(const MemoryPrediction& prediction) {
  if (prediction.workload) return prediction.workload;
  return workload_for(prediction.configuration);
}

// The prediction of a checked request; CountBeyondLimit where a count reaches 2^62.
MemoryPrediction predict_checked(const MeasureConfiguration& request, const PredictionTarget& target) {
  const std::shared_ptr<const Workload> workload = workload_for(request);
  if (!workload->predictable()) throw UsageError("model", workload->prediction_refusal());
  MemoryPrediction prediction;
  prediction.workload = workload;
  if (request.model.empty()) prediction.model = SyntheticModel::from(request);
  prediction.parameter_bytes = workload->parameter_bytes();
  prediction.input_bytes = workload->input_bytes();
  prediction.configuration = request;
  prediction.configuration.output.clear();
  prediction.target = target;
  prediction.heading = workload->heading();

  const AllocationSettings settings = AllocationSettings::from_environment(target);
  std::vector<PredictionCaveat> caveats = settings.caveats;
  for (PredictionCaveat& caveat : workload->prediction_caveats(target.compute_capability_major,
                                                               target.compute_capability_minor))
    caveats.push_back(std::move(caveat));
  for (const PredictionCaveat& caveat : caveats) prediction.caveats.push_back(caveat.text);
  prediction.cublaslt_used = !settings.cublaslt_disabled && workload->uses_cublaslt();
  PredictionTarget modelled = target;
  if (settings.cublaslt_unified) modelled.cublaslt_workspace_bytes = 0;  // shares cuBLAS's

  // The workload's steps on the allocator model, with new segments laid upward or downward
  // (an out-of-memory in either is the prediction's).
  auto modelled_rows = [&](bool segments_downward) {
    AllocatorModelBackend backend(*workload, modelled, prediction.cublaslt_used, segments_downward);
    std::vector<PhasePrediction> rows;
    rows.reserve(static_cast<std::size_t>(phase_row_count(request, *workload)));
    run_phase_protocol(backend, request, *workload, 0, [&](PhaseRow row) {
      rows.push_back({row.phase, row.repeat, row.forwards, row.sequence, row.step, row.baseline, row.end, {}, false});
    });
    return rows;
  };
  prediction.phases = modelled_rows(false);
  if (workload->segment_layout() == Workload::SegmentLayout::kLargerOfBoth)
    keep_larger_counters(prediction.phases, modelled_rows(true));
  mark_uncertain_counters(prediction.phases, caveats);
  return prediction;
}
}  // namespace

MemoryPrediction MemoryPredictor::predict(const MeasureConfiguration& configuration,
                                          const PredictionTarget& target) {
  const MeasureConfiguration request = configuration.checked();
  try {
    return predict_checked(request, target);
  } catch (const CountBeyondLimit&) {
    // Refused rather than wrapped: no GPU holds 4 EiB, so nothing true is lost.
    const std::string sizes =
        request.model.empty() ? "batch " + std::to_string(request.batch) + ", width " + std::to_string(request.width) +
                                    " and hidden " + std::to_string(request.hidden)
                              : "batch " + std::to_string(request.batch) + " on this checkpoint";
    throw UsageError("context", std::to_string(request.context) + " with " + sizes +
                                    " makes a tensor or a total of 2^62 bytes (4 EiB) or more, beyond what a "
                                    "prediction counts; accepted: a batch and context whose bytes stay below that");
  }
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
  json.key("parameter_bytes").value(parameter_bytes).key("input_bytes").value(input_bytes);
  json.key("phases").begin_array();
  for (const PhasePrediction& row : phases) {
    json.begin_object();
    write_phase_identity(json, row.phase, row.repeat, row.forwards, row.sequence, row.step);
    write_phase_counters(json, row.baseline, row.end);
    json.key("uncertain_counters").value(row.uncertain_counters).key("lower_bound").value(row.lower_bound);
    json.key("recorded_bound_bytes").value(row.recorded_bound_bytes);
    json.end_object();
  }
  json.end_array();
  json.key("caveats").value(caveats);
  json.key("rules").value(prediction_rules(*workload_of(*this)));
  json.key("notes").value(std::vector<std::string>{
      "Predicted counters of this process's PyTorch caching allocator on one GPU, for the "
      "measurement protocol of `iteragpu measure` with the same options; not the whole GPU "
      "memory, the CUDA context or other processes.",
      "The rules are PyTorch 2.11's defaults; other versions or allocator settings can differ."});
  return json.finish();
}

std::uint64_t recorded_bound_bytes(const std::vector<PhasePrediction>& rows,
                                   const std::function<bool(const PhasePrediction&)>& counted) {
  std::uint64_t bound = 0;
  for (const PhasePrediction& row : rows) {
    if (row.uncertain_counters.empty() || !counted(row)) continue;
    if (row.recorded_bound_bytes == 0) return 0;
    bound = std::max(bound, row.recorded_bound_bytes);
  }
  return bound;
}

std::string MemoryPrediction::to_text() const {
  const std::shared_ptr<const Workload> workload = workload_of(*this);
  std::string text = "Predicted memory for " + workload->heading() + "\n" + configuration.model_origin().heading_line();
  text += "GPU: " + (target.gpu_name.empty() ? std::string("compute capability ")
                                             : printable(target.gpu_name) + ", compute capability ") +
          compute_capability_text(target) + "; cuBLAS workspace " +
          bytes_and_size(target.cublas_workspace_bytes) + ", cuBLASLt workspace " +
          bytes_and_size(target.cublaslt_workspace_bytes) +
          (cublaslt_used ? "" : " (not used: no bias-fused cuBLASLt GEMM)") + " (" +
          target.workspace_source + ")\n\n";
  const int phase_width = workload->phase_column_width();
  text += phase_table_header("", phase_width);
  bool lower_bounds = false, may_differ = false;
  for (const PhasePrediction& row : phases) {
    text += phase_table_row(phase_label(row.phase, row.sequence, row.step), row.repeat, "", row.baseline, row.end,
                            phase_width, row.uncertain_counters, row.lower_bound ? ">=" : "~");
    if (!row.uncertain_counters.empty()) (row.lower_bound ? lower_bounds : may_differ) = true;
  }
  std::vector<PeakRow> peaks;
  for (const PhasePrediction& row : phases) {
    auto mark = [&row](const char* counter) {
      return std::find(row.uncertain_counters.begin(), row.uncertain_counters.end(), counter) ==
                     row.uncertain_counters.end()
                 ? std::string()
                 : std::string(row.lower_bound ? ">=" : "~");
    };
    peaks.push_back({peak_row_label(row.phase, row.sequence, row.step, row.repeat), row.end,
                     mark("peak_reserved_bytes"), mark("peak_allocated_bytes"), mark("reserved_bytes.end")});
  }
  text += "\n" + peak_summary_lines(peaks);
  if (lower_bounds) text += ">= marks a counter a caveat below leaves unchecked, that can only be higher.\n";
  if (may_differ) text += "~ marks a counter a caveat below leaves unchecked, that may differ either way.\n";
  const std::uint64_t recorded_bound = recorded_bound_bytes(phases, [](const PhasePrediction&) { return true; });
  if (recorded_bound)
    text += "In the recorded cells those caveats moved a counter by at most " + bytes_and_size(recorded_bound) +
            ".\n";
  text += "\nPredicted caching-allocator counters (bytes) of one process on one GPU; not the CUDA "
          "context or other processes. Rules:\n";
  for (const std::string& rule : prediction_rules(*workload)) text += "  - " + rule + "\n";
  for (const std::string& caveat : caveats) text += "Caveat: " + caveat + "\n";
  return text;
}

}  // namespace iteragpu
