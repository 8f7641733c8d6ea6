// The first workload: Linear(width→hidden) → GELU → Linear(hidden→width), the synthetic model
// of the original kit. Its sizes follow from the configuration (SyntheticModel::from, the
// bounds that keep every size computation far from overflow), its steps run in the plugin's
// synthetic_mlp_module.cpp, and its allocations mirror what PyTorch 2.11 runs for
// nn.Sequential(Linear, GELU, Linear):
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

#include "iteragpu/synthetic_model.hpp"

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "iteragpu/error.hpp"
#include "workload/configuration_bounds.hpp"
#include "workload/synthetic_mlp_payload.hpp"
#include "workload/workload.hpp"
#include "workload/workload_steps.hpp"

namespace iteragpu {
namespace {

constexpr std::int64_t kMaxElements = std::int64_t{1} << 40;   // per tensor

// a × b × c elements, refused beyond kMaxElements (which also rules out overflow).
std::int64_t bounded_elements(std::int64_t a, std::int64_t b, std::int64_t c, const char* what) {
  std::int64_t ab = 0, abc = 0;
  if (__builtin_mul_overflow(a, b, &ab) || __builtin_mul_overflow(ab, c, &abc) || abc > kMaxElements)
    throw UsageError("", "the " + std::string(what) + " would exceed " + std::to_string(kMaxElements) +
                             " elements; reduce the batch, context, width or hidden size");
  return abc;
}



void write_shape(JsonWriter& json, const char* key, std::vector<std::int64_t> dimensions) {
  json.key(key).begin_array();
  for (std::int64_t dimension : dimensions) json.value(dimension);
  json.end_array();
}

std::string architecture_text(const SyntheticModel& model) {
  return "Linear(" + std::to_string(model.width) + "→" + std::to_string(model.hidden) + ") → GELU → Linear(" +
         std::to_string(model.hidden) + "→" + std::to_string(model.width) + ")";
}

// A forward allocates the first layer's output, then GELU's, frees the first, allocates the
// second layer's output and frees GELU's; the output stays until the protocol releases it.
class MlpForwards final : public ForwardAllocations {
 public:
  explicit MlpForwards(const SyntheticModel& model) : model_(model) {}

  void forward(AllocationRecorder& allocator) override {
    const std::int64_t rows = model_.batch * model_.context;
    const auto pre_activation = allocator.allocate(bytes(rows * model_.hidden));
    allocator.gemm_workspaces(/*bias_fused=*/true);
    const auto activation = allocator.allocate(bytes(rows * model_.hidden));
    allocator.free(pre_activation);
    output_ = allocator.allocate(bytes(rows * model_.width));
    allocator.free(activation);
  }
  void release_output(AllocationRecorder& allocator) override {
    if (output_) allocator.free(*output_);
    output_.reset();
  }

 private:
  std::uint64_t bytes(std::int64_t elements) const {
    return static_cast<std::uint64_t>(elements) * static_cast<std::uint64_t>(model_.dtype_bytes);
  }

  const SyntheticModel& model_;
  std::optional<AllocationRecorder::Block> output_;
};

class SyntheticMlp final : public Workload {
 public:
  explicit SyntheticMlp(SyntheticModel model) : model_(std::move(model)) {}

  std::string shape_text() const override {
    return "batch " + std::to_string(model_.batch) + ", context " + std::to_string(model_.context) +
           ", width " + std::to_string(model_.width) + ", hidden " + std::to_string(model_.hidden) +
           ", dtype " + model_.dtype;
  }

  // model_load, inputs, cold_forward, warmup (when warmup > 0, all its forwards in one row),
  // one warm_forward per repeat.
  std::vector<PlannedPhase> phase_plan(int warmup, int repeats) const override {
    std::vector<PlannedPhase> plan;
    auto add = [&plan](const char* phase, int repeat, const char* step) {
      PlannedPhase planned;
      planned.row.phase = phase;
      planned.row.repeat = repeat;
      planned.step = step;
      plan.push_back(planned);
    };
    auto add_forwards = [&](const char* phase, int repeat, int forwards, bool release_first) {
      add(phase, repeat, kForwardStep);
      plan.back().row.forwards = plan.back().runs = forwards;
      plan.back().keeps_output = true;
      plan.back().release_first = release_first;
    };
    add("model_load", 0, kLoadModelStep);
    add("inputs", 0, kCreateInputsStep);
    add_forwards("cold_forward", 0, 1, false);
    if (warmup > 0) add_forwards("warmup", 0, warmup, true);
    for (int repeat = 1; repeat <= repeats; ++repeat) add_forwards("warm_forward", repeat, 1, true);
    return plan;
  }

  WorkloadSpec workload_spec(int device_index, std::uint64_t seed) const override {
    WorkloadSpec spec;
    spec.device_index = device_index;
    spec.kind = kSyntheticMlpKind;
    spec.dtype = model_.dtype;
    spec.seed = seed;
    SyntheticMlpPayload payload;
    payload.batch = model_.batch;
    payload.context = model_.context;
    payload.width = model_.width;
    payload.hidden = model_.hidden;
    spec.payload = encode_synthetic_mlp_payload(payload);
    return spec;
  }

  void allocate_model(AllocationRecorder& allocator) const override {
    for (std::int64_t elements : {model_.hidden * model_.width, model_.hidden, model_.width * model_.hidden,
                                  model_.width})
      allocator.allocate(bytes(elements));
  }
  void allocate_inputs(AllocationRecorder& allocator) const override {
    allocator.allocate(bytes(model_.batch * model_.context * model_.width));
  }
  std::unique_ptr<ForwardAllocations> forward_allocations() const override {
    return std::make_unique<MlpForwards>(model_);
  }
  std::uint64_t parameter_bytes() const override { return static_cast<std::uint64_t>(model_.parameter_bytes); }
  std::uint64_t input_bytes() const override { return static_cast<std::uint64_t>(model_.input_bytes); }
  bool uses_cublaslt() const override { return model_.width > 1 && model_.hidden > 1; }
  std::vector<std::string> forward_rules() const override {
    return {"A forward allocates the first layer's output, then GELU's, frees the first, allocates the "
            "second layer's output and frees GELU's; the output is freed before the next forward."};
  }

  std::string heading() const override {
    return architecture_text(model_) + ", " + model_.dtype + ", input [" + std::to_string(model_.batch) + ", " +
           std::to_string(model_.context) + ", " + std::to_string(model_.width) + "]";
  }

  std::string measurement_text() const override {
    return "Model: " + architecture_text(model_) + ", " + model_.dtype + ", " +
           std::to_string(model_.parameter_count) + " parameters (" + std::to_string(model_.parameter_bytes) +
           " bytes)\nInput: [" + std::to_string(model_.batch) + ", " + std::to_string(model_.context) + ", " +
           std::to_string(model_.width) + "] (" + std::to_string(model_.input_bytes) + " bytes)";
  }

  void write_json(JsonWriter& json) const override {
    const SyntheticModel& model = model_;
    json.key("synthetic_model").begin_object()
        .key("architecture").value("Linear(width→hidden) → GELU → Linear(hidden→width)")
        .key("dtype").value(model.dtype)
        .key("dtype_bytes").value(model.dtype_bytes)
        .key("layers").begin_array();
    json.begin_object().key("name").value("linear1").key("type").value("Linear")
        .key("in_features").value(model.width).key("out_features").value(model.hidden);
    write_shape(json, "weight_shape", {model.hidden, model.width});
    write_shape(json, "bias_shape", {model.hidden});
    json.key("parameters").value(model.width * model.hidden + model.hidden).end_object();
    json.begin_object().key("name").value("gelu").key("type").value("GELU")
        .key("parameters").value(std::int64_t{0}).end_object();
    json.begin_object().key("name").value("linear2").key("type").value("Linear")
        .key("in_features").value(model.hidden).key("out_features").value(model.width);
    write_shape(json, "weight_shape", {model.width, model.hidden});
    write_shape(json, "bias_shape", {model.width});
    json.key("parameters").value(model.hidden * model.width + model.width).end_object();
    json.end_array();
    write_shape(json, "input_shape", {model.batch, model.context, model.width});
    write_shape(json, "output_shape", {model.batch, model.context, model.width});
    json.key("parameter_count").value(model.parameter_count)
        .key("parameter_bytes").value(model.parameter_bytes)
        .key("input_bytes").value(model.input_bytes)
        .end_object();
  }

  void check_json(const JsonObjectReader& document) const override {
    const JsonObjectReader written = document.object("synthetic_model");
    const auto expect = [&written](const char* name, std::int64_t value) {
      if (written.int64(name) != value)
        written.fail(name, "is " + std::to_string(written.int64(name)) + " but the configuration gives " +
                               std::to_string(value));
    };
    if (written.text("dtype") != model_.dtype) written.fail("dtype", "differs from the configuration's");
    expect("dtype_bytes", model_.dtype_bytes);
    expect("parameter_count", model_.parameter_count);
    expect("parameter_bytes", model_.parameter_bytes);
    expect("input_bytes", model_.input_bytes);
    const std::vector<std::int64_t> shape = {model_.batch, model_.context, model_.width};
    if (written.int64s("input_shape") != shape) written.fail("input_shape", "differs from the configuration's");
    if (written.int64s("output_shape") != shape) written.fail("output_shape", "differs from the configuration's");
  }

  std::vector<std::string> notes() const override {
    return {
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
    };
  }
  int phase_column_width() const override { return 13; }  // "cold_forward"
  TimingSummary warm_repeats(const std::vector<PhaseRow>& rows) const override {
    return timing_of_rows(rows, [](const PhaseRow& row) { return row.phase == "warm_forward"; });
  }
  std::string no_prediction_reason() const override { return "the allocator rules describe CUDA builds only"; }

 private:
  std::uint64_t bytes(std::int64_t elements) const {
    return static_cast<std::uint64_t>(elements) * static_cast<std::uint64_t>(model_.dtype_bytes);
  }

  SyntheticModel model_;
};

}  // namespace

SyntheticModel SyntheticModel::from(const MeasureConfiguration& request) {
  SyntheticModel model;
  check_dimension(request.batch, "batch", 1);
  check_dimension(request.context, "context", 1);
  check_dimension(request.width, "width", 1);
  if (request.hidden != 0) check_dimension(request.hidden, "hidden", 1);
  check_count(request.warmup, "warmup", 0);
  check_count(request.repeats, "repeats", 1);
  model.dtype_bytes = dtype_bytes_of(request.dtype);
  model.dtype = request.dtype;
  model.batch = request.batch;
  model.context = request.context;
  model.width = request.width;
  model.hidden = request.hidden != 0 ? request.hidden : 4 * request.width;
  if (model.hidden > kMaxModelDimension)
    throw UsageError("width", std::to_string(request.width) + " gives a default hidden size 4 × width "
                              "above " + std::to_string(kMaxModelDimension) + "; give the hidden size or reduce the width");
  // Linear(width→hidden) weight and bias, Linear(hidden→width) weight and bias.
  const std::int64_t weights = bounded_elements(2, model.width, model.hidden, "model's weights");
  model.parameter_count = weights + model.hidden + model.width;
  model.parameter_bytes = model.parameter_count * model.dtype_bytes;
  model.input_bytes = bounded_elements(model.batch, model.context, model.width, "input") * model.dtype_bytes;
  bounded_elements(model.batch, model.context, model.hidden, "hidden activation");
  return model;
}


namespace {
std::unique_ptr<const Workload> synthetic_mlp_for(const MeasureConfiguration& configuration) {
  return std::make_unique<SyntheticMlp>(SyntheticModel::from(configuration));
}
}  // namespace

const WorkloadKind& synthetic_mlp_kind() {
  static const WorkloadKind kind{
      kSyntheticMlpKind,
      [](const MeasureConfiguration& configuration) { return configuration.model.empty(); },
      synthetic_mlp_for,
      // Its file's section follows from the configuration alone (check_json compares them).
      [](const MeasureConfiguration& configuration, const JsonObjectReader&) { return synthetic_mlp_for(configuration); },
      [](MeasureConfiguration& configuration) {
        if (configuration.dtype.empty()) configuration.dtype = "float32";
        if (configuration.hidden == 0) configuration.hidden_is_default = true;
        configuration.hidden = SyntheticModel::from(configuration).hidden;  // checks the rest
      },
      // Its width and hidden size are members every configuration has (a checkpoint's are its
      // config.json's), not options of its own: docs/design.md, "Workloads".
      {},
      {"model_load", "inputs", "cold_forward", "warmup", "warm_forward"},
  };
  return kind;
}

}  // namespace iteragpu
