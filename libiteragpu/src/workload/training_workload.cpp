// The third workload: fine-tuning steps of a dense decoder-only checkpoint as a user's own
// PyTorch loop runs them with transformers 5.17, PEFT and torch.optim.AdamW (issue 35; its ops
// in libiteragpu/backend_torch/training_module.cpp, the loop it equals in
// tests/conformance/training_reference.py). Asked for by `--model DIR --train full|lora`. Its
// rows: weights_load, adapters (LoRA), inputs (random token ids, the labels too), then per step
// forward (with the loss), backward (the output dropped after it) and optimizer (AdamW's step
// and zero_grad). The first step is cold (AdamW makes its state there); the later ones give the
// trained tokens per second.

#include <algorithm>
#include <cstdio>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "iteragpu/decoder_checkpoint.hpp"
#include "iteragpu/error.hpp"
#include "iteragpu/printable_text.hpp"
#include "mechanics/checked_count.hpp"
#include "mechanics/quantity_parser.hpp"
#include "workload/configuration_bounds.hpp"
#include "workload/decoder_allocations.hpp"
#include "workload/decoder_workload.hpp"
#include "workload/training_allocations.hpp"
#include "workload/training_payload.hpp"
#include "workload/workload.hpp"
#include "workload/workload_steps.hpp"

namespace iteragpu {
namespace {

// Its options, as the command line spells them.
constexpr const char* kTrain = "train";
constexpr const char* kSteps = "steps";
constexpr const char* kLoraRank = "lora-rank";
constexpr const char* kLoraAlpha = "lora-alpha";
constexpr const char* kLoraTargets = "lora-targets";
constexpr const char* kGradientCheckpointing = "gradient-checkpointing";
// Every linear projection of a decoder layer: the default LoRA targets.
constexpr const char* kEveryProjection = "q_proj,k_proj,v_proj,o_proj,gate_proj,up_proj,down_proj";
constexpr int kMaxSteps = 1000;
// The largest differences between the prediction and the recorded H100 cells
// (tests/prediction/training_prediction_check.py): in the small cells, and in the
// gradient-checkpointing cells. A package's fit keeps a margin for them (PredictionCaveat).
constexpr std::uint64_t kLargestPlacementDifference = std::uint64_t{8} << 20;
constexpr std::uint64_t kLargestCheckpointingDifference = std::uint64_t{4} << 20;
constexpr std::uint64_t kLargeSegmentRounding = std::uint64_t{2} << 20;
constexpr int kMaxLoraRank = 65536;

std::vector<std::string> split_targets(const std::string& text) {
  std::vector<std::string> targets;
  std::stringstream stream(text);
  std::string target;
  while (std::getline(stream, target, ',')) targets.push_back(target);
  return targets;
}

// The projections LoRA may target, each named once: UsageError otherwise.
WorkloadOptions::Value checked_targets(const std::string& text) {
  static const std::vector<std::string> known = split_targets(kEveryProjection);
  std::vector<std::string> seen;
  for (const std::string& target : split_targets(text)) {
    if (std::find(known.begin(), known.end(), target) == known.end())
      throw UsageError(kLoraTargets, "'" + printable(target) + "' is not a projection of a decoder layer; accepted: a "
                                     "comma-separated list of " + kEveryProjection);
    if (std::find(seen.begin(), seen.end(), target) != seen.end())
      throw UsageError(kLoraTargets, "'" + target + "' is named twice");
    seen.push_back(target);
  }
  if (seen.empty()) throw UsageError(kLoraTargets, "is empty; accepted: a comma-separated list of " +
                                                   std::string(kEveryProjection));
  return text;
}

class TrainingWorkload final : public CheckpointWorkload {
 public:
  // `tensors` empty: a recorded checkpoint, described but not runnable.
  TrainingWorkload(CheckpointRecord checkpoint, std::vector<DecoderTensor> tensors,
                   const MeasureConfiguration& configuration)
      : CheckpointWorkload(std::move(checkpoint), std::move(tensors), configuration),
        method_(configuration.workload_options.text(kTrain)),
        steps_(configuration.workload_options.whole_number(kSteps)),
        lora_rank_(configuration.workload_options.whole_number(kLoraRank)),
        lora_alpha_(configuration.workload_options.whole_number(kLoraAlpha)),
        lora_targets_(configuration.workload_options.text(kLoraTargets)),
        gradient_checkpointing_(configuration.workload_options.whole_number(kGradientCheckpointing) != 0) {
    check_positions(/*new_tokens=*/0);
  }

  std::vector<PlannedPhase> phase_plan(int warmup, int repeats) const override {
    (void)warmup, (void)repeats;  // a training run's rows are its steps
    std::vector<PlannedPhase> plan;
    auto add = [&plan](const char* phase, const char* step) -> PlannedPhase& {
      plan.emplace_back();
      plan.back().row.phase = phase;
      plan.back().step = step;
      return plan.back();
    };
    add("weights_load", kLoadModelStep);
    if (method_ == "lora") add("adapters", kAddAdaptersStep);
    add("inputs", kCreateInputsStep);
    for (int step = 1; step <= steps_; ++step) {
      for (const auto& [phase, work] : {std::pair{"forward", kForwardStep}, std::pair{"backward", kBackwardStep},
                                        std::pair{"optimizer", kOptimizerStep}}) {
        PlannedPhase& planned = add(phase, work);
        planned.row.step = step;
        planned.row.forwards = std::string(phase) == "forward" ? 1 : 0;
      }
    }
    return plan;
  }

  // A checkpoint read from its folder is predicted (training_allocations.cpp), unless SDPA
  // would run outside its grouped-query path, as for generation.
  bool predictable() const override { return prediction_refusal().empty(); }
  std::string prediction_refusal() const override {
    return checkpoint_prediction_refusal("iteragpu measure --model DIR --train " + method_);
  }
  // Against the recorded H100 cells, either order alone is below the measurement in some
  // cell; the larger of both never is (docs/commands/predict.md, "Fine-tuning").
  SegmentLayout segment_layout() const override { return SegmentLayout::kLargerOfBoth; }
  std::vector<PredictionCaveat> prediction_caveats(int major, int minor) const override {
    std::vector<PredictionCaveat> caveats;
    if (major != 9 || minor != 0 || dtype_ == "float32")
      caveats.push_back({"the training rows are checked on compute capability 9.0 in 16-bit types (cuDNN attention "
                         "on the H100); elsewhere PyTorch may pick another SDPA backend, whose forward and backward "
                         "allocate otherwise: every counter from the first forward on may differ",
                         PredictionCaveat::Reach::kForwardAllocations, /*lower_bound=*/false});
    caveats.push_back({"which cached block a request reuses, and so the reserved bytes and the bytes of a block handed "
                       "out unsplit, depends on where CUDA put each segment, which the model cannot know: it lays "
                       "them out each above the previous and each below, and predicts, counter by counter, the "
                       "larger; against the 21 recorded H100 cells it is never below the measurement and at most "
                       "one MLP activation's segment (batch x positions x intermediate size, rounded to 2 MiB; 8 MiB "
                       "in the smaller cells) above it, from the first forward on",
                       PredictionCaveat::Reach::kForwardAllocations, /*lower_bound=*/false,
                       largest_placement_difference()});
    if (gradient_checkpointing_ && batch_ == 1)
      caveats.push_back({"with gradient checkpointing and one row, the position ids' cumsum (transformers' packed-sequence "
                         "check) takes scan storage that CUB sizes for the GPU and the length, modelled as the H100 "
                         "traces show it at 128 and 256 positions (1,535 bytes: up to 32 tiles); the small blocks after "
                         "it may land otherwise (the recorded cells, 128 to 2,048 positions, differ by at most 4 MiB)",
                         PredictionCaveat::Reach::kForwardAllocations, /*lower_bound=*/false,
                         kLargestCheckpointingDifference});
    if (checkpoint_.architecture.qk_norm)
      caveats.push_back({"the q/k norms' weight gradients are summed through a staging buffer whose size PyTorch picks "
                         "for the GPU (setReduceConfig); it is modelled as recorded on the H100 at 1 x 128 (8 bytes per "
                         "summed element), which a backward's peaks and the reserved bytes after it depend on (the "
                         "recorded Qwen3 cells, 1 x 128 and 2 x 1,024, differ by at most 8 MiB)",
                         PredictionCaveat::Reach::kForwardAllocations, /*lower_bound=*/false, kLargestPlacementDifference});
    return caveats;
  }
  // Which of the two layouts' segments CUDA's placement matches is one MLP activation's segment
  // more or less: Qwen3-0.6B-like full fine-tuning at 6 and 7 x 1,024 predicts 36 and 42 MiB
  // above the H100, one [rows, 3,072] bfloat16 tensor each; the smaller cells differ by 8 MiB.
  std::uint64_t largest_placement_difference() const {
    const CheckedCount activation = CheckedCount(static_cast<std::uint64_t>(batch_)) *
                                    static_cast<std::uint64_t>(context_) *
                                    static_cast<std::uint64_t>(checkpoint_.architecture.intermediate_size) *
                                    dtype_bytes();
    const CheckedCount segment = (activation + (kLargeSegmentRounding - 1)) / kLargeSegmentRounding *
                                 kLargeSegmentRounding;
    return std::max(segment.value(), kLargestPlacementDifference);
  }

  std::string shape_text() const override {
    return "batch " + std::to_string(batch_) + ", context " + std::to_string(context_) + ", " + method_ +
           " fine-tuning" + (gradient_checkpointing_ ? " with gradient checkpointing" : "") + ", " +
           std::to_string(steps_) + " steps, dtype " + dtype_ + ", model " +
           checkpoint_.architecture.architecture;
  }
  // Its warm repeats are its steps 2 and on (--steps), not the common warm-up and repeats.
  std::string repetition_text(const MeasureConfiguration& configuration) const override {
    (void)configuration;
    return {};
  }

  WorkloadSpec workload_spec(int device_index, std::uint64_t seed) const override {
    WorkloadSpec spec = checkpoint_spec(kTrainingKind, device_index, seed);
    TrainingPayload payload;
    payload.batch = batch_;
    payload.context = context_;
    payload.method = method_;
    payload.lora_rank = static_cast<int>(lora_rank_);
    payload.lora_alpha = static_cast<double>(lora_alpha_);
    payload.lora_targets = lora_targets_;
    payload.gradient_checkpointing = gradient_checkpointing_;
    payload.architecture = checkpoint_.architecture;
    payload.tensors = tensors_;
    spec.payload = encode_training_payload(payload);
    return spec;
  }

  // Its steps are not the common ones: step_allocations gives them all.
  std::unique_ptr<ForwardAllocations> forward_allocations() const override { return nullptr; }
  std::unique_ptr<StepAllocations> step_allocations() const override {
    TrainingShape shape;
    shape.architecture = checkpoint_.architecture;
    shape.tensors = tensors_;
    shape.batch = batch_;
    shape.context = context_;
    shape.dtype_bytes = dtype_bytes();
    shape.lora = method_ == "lora";
    shape.lora_rank = lora_rank_;
    shape.lora_targets = split_targets(lora_targets_);
    shape.gradient_checkpointing = gradient_checkpointing_;
    return training_step_allocations(shape);
  }
  std::vector<std::string> forward_rules() const override { return training_allocation_rules(); }

  std::string heading() const override {
    return architecture_text() + ", " + dtype_ + ", " + method_text() + ", token ids [" +
           std::to_string(batch_) + ", " + std::to_string(context_) + "], " + std::to_string(steps_) + " steps";
  }

  std::string measurement_text() const override {
    return "Model: " + architecture_text() + ", " + dtype_ + ", " + std::to_string(checkpoint_.parameter_count) +
           " parameters from " + checkpoint_.directory +
           "\nTraining: " + method_text() + ", AdamW at PyTorch's defaults, " + std::to_string(steps_) +
           " steps of [" + std::to_string(batch_) + ", " + std::to_string(context_) +
           "] random token ids (the labels too)";
  }

  void write_json(JsonWriter& json) const override {
    json.key("training_model").begin_object();
    write_checkpoint_members(json, checkpoint_, dtype_);
    json.key("input_shape").begin_array().value(batch_).value(context_).end_array()
        .key("method").value(method_)
        .key("steps").value(steps_)
        .key("lora_rank").value(lora_rank_)
        .key("lora_alpha").value(lora_alpha_)
        .key("lora_targets").value(lora_targets_)
        .key("gradient_checkpointing").value(gradient_checkpointing_)
        .end_object();
  }

  void check_json(const JsonObjectReader& document) const override {
    const JsonObjectReader written = document.object("training_model");
    if (written.text("architecture") != checkpoint_.architecture.architecture)
      written.fail("architecture", "differs from the checkpoint's config.json");
    if (written.text("dtype") != dtype_) written.fail("dtype", "differs from the configuration's");
    const std::vector<std::int64_t> shape = {batch_, context_};
    if (written.int64s("input_shape") != shape) written.fail("input_shape", "differs from the configuration's");
    if (written.text("method") != method_) written.fail("method", "differs from the configuration's");
    if (written.int64("steps") != steps_) written.fail("steps", "differs from the configuration's");
    if (written.has("gradient_checkpointing") && written.flag("gradient_checkpointing") != gradient_checkpointing_)
      written.fail("gradient_checkpointing", "differs from the configuration's");
  }

  std::vector<std::string> notes() const override {
    return {
        "Each step is the user's loop: forward with labels = the token ids (transformers' loss over every "
        "position, in float32), backward, the output dropped, AdamW's step and zero_grad(set_to_none=True). "
        "The first optimizer row makes AdamW's state (two tensors per trainable parameter); the forward keeps "
        "use_cache=True as transformers does in training, so its output holds a KV cache until the backward ends.",
        "With --gradient-checkpointing (model.gradient_checkpointing_enable(), transformers' default: PyTorch's "
        "non-reentrant checkpoint around each decoder layer, early stop on) there is no KV cache; the forward keeps "
        "each layer's input only, and the backward recomputes each layer up to its last saved tensor.",
        "LoRA is PEFT's at its defaults: adapters of rank r on the targeted projections, kept in float32, "
        "scaling lora_alpha / r, no dropout; only they are trained.",
        "One GPU, no mixed-precision scaler; token ids are random, uniform over the vocabulary, from the seed.",
    };
  }
  int phase_column_width() const override { return 14; }
  // Each warm step (2 and on) is one repeat: its forward, backward and optimizer rows together.
  TimingSummary warm_repeats(const std::vector<PhaseRow>& rows) const override {
    std::vector<double> host, gpu;
    bool every_gpu_time = true;
    for (int step = 2; step <= steps_; ++step) {
      double host_seconds = 0, gpu_seconds = 0;
      bool found = false;
      for (const PhaseRow& row : rows) {
        if (!row.step || *row.step != step) continue;
        found = true;
        host_seconds += row.host_seconds;
        if (row.gpu_event_seconds) {
          gpu_seconds += *row.gpu_event_seconds;
        } else {
          every_gpu_time = false;
        }
      }
      if (!found) continue;
      host.push_back(host_seconds);
      gpu.push_back(gpu_seconds);
    }
    return TimingSummary::of_warm_repeats(host, every_gpu_time && !host.empty()
                                                    ? std::optional<std::vector<double>>(gpu)
                                                    : std::nullopt);
  }
  // A measurement is predicted unless the checkpoint is one the predictor refuses or the build
  // is ROCm's (phase_measurer.cpp).
  std::string no_prediction_reason() const override {
    const std::string refusal = prediction_refusal();
    return refusal.empty() ? "the allocator rules describe CUDA builds only" : refusal;
  }

  std::shared_ptr<const WorkloadRun> run_record(Backend& backend, const std::vector<PhaseRow>& rows,
                                                const TimingSummary& warm_steps) const override {
    std::string text;
    const BackendStatus status = backend.run_report(text);
    if (!status.ok()) throw MeasurementFailed("the backend gave no report of the training run: " + status.message);
    TrainingRunReport report;
    const std::string malformed = decode_training_run_report(text, report);
    if (!malformed.empty())
      throw MeasurementFailed("the backend's report of the training run is malformed: " + malformed);
    auto run = std::make_shared<TrainingRun>();
    run->attention_backend = report.attention_backend;
    for (std::size_t at = 0; at + sizeof(float) <= report.losses_float32.size(); at += sizeof(float)) {
      float loss = 0;
      std::copy_n(report.losses_float32.data() + at, sizeof(float), reinterpret_cast<char*>(&loss));
      run->losses.push_back(loss);
    }
    run->parameters = report.parameters;
    run->trainable_parameters = report.trainable_parameters;
    run->device_used_bytes = report.device_used_bytes;
    (void)rows;
    const double warm_step = warm_steps.host_seconds.median;
    if (warm_steps.warm_repeats > 0 && warm_step > 0)
      run->trained_tokens_per_second = static_cast<double>(batch_ * context_) / warm_step;
    return run;
  }

  void write_run_json(JsonWriter& json, const WorkloadRun& record) const override {
    const TrainingRun& run = dynamic_cast<const TrainingRun&>(record);
    json.key("training_run").begin_object().key("attention_backend").value(run.attention_backend).key("losses")
        .begin_array();
    for (std::size_t step = 0; step < run.losses.size(); ++step)
      json.begin_object().key("step").value(static_cast<std::int64_t>(step + 1)).key("loss").value(run.losses[step])
          .end_object();
    json.end_array()
        .key("parameters").value(run.parameters)
        .key("trainable_parameters").value(run.trainable_parameters);
    write_optional(json, "device_used_bytes", run.device_used_bytes);
    write_optional(json, "trained_tokens_per_second", run.trained_tokens_per_second);
    json.end_object();
  }

  std::shared_ptr<const WorkloadRun> read_run(const JsonObjectReader& document) const override {
    if (!document.has("training_run")) return nullptr;
    const JsonObjectReader json = document.object("training_run");
    auto run = std::make_shared<TrainingRun>();
    json.read("attention_backend", run->attention_backend);
    for (const JsonObjectReader& step : json.objects("losses")) run->losses.push_back(step.number("loss"));
    json.read("parameters", run->parameters).read("trainable_parameters", run->trainable_parameters);
    run->device_used_bytes = json.uint64_or_null("device_used_bytes");
    run->trained_tokens_per_second = json.number_or_null("trained_tokens_per_second");
    return run;
  }

  std::string run_text(const WorkloadRun& record) const override {
    const TrainingRun& run = dynamic_cast<const TrainingRun&>(record);
    char line[128];
    std::string text = "\nTraining run:\n  attention (SDPA backend chosen): " + printable(run.attention_backend) +
                       "\n  parameters: " + std::to_string(run.parameters) + ", trainable: " +
                       std::to_string(run.trainable_parameters) + "\n  loss per step:";
    for (double loss : run.losses) {
      std::snprintf(line, sizeof line, " %.6f", loss);
      text += line;
    }
    text += "\n";
    if (run.trained_tokens_per_second) {
      std::snprintf(line, sizeof line, "%.1f", *run.trained_tokens_per_second);
      text += std::string("  trained tokens per second (warm steps, host median): ") + line + "\n";
    }
    if (run.device_used_bytes)
      text += "  device memory in use at the end (cudaMemGetInfo, the CUDA context and libraries included, "
              "not the allocator's counter): " + std::to_string(*run.device_used_bytes) + " bytes\n";
    return text;
  }

 private:
  std::string method_text() const {
    const std::string checkpointing = gradient_checkpointing_ ? ", gradient checkpointing" : "";
    if (method_ == "full") return "full fine-tuning" + checkpointing;
    return "LoRA r" + std::to_string(lora_rank_) + " alpha " + std::to_string(lora_alpha_) + " on " + lora_targets_ +
           checkpointing;
  }

  std::string method_;
  std::int64_t steps_, lora_rank_, lora_alpha_;
  std::string lora_targets_;
  bool gradient_checkpointing_;
};

std::unique_ptr<const Workload> training_workload_for(const MeasureConfiguration& configuration) {
  DecoderCheckpoint checkpoint = checkpoint_of(configuration);
  return std::make_unique<TrainingWorkload>(record_of(checkpoint), std::move(checkpoint.tensors), configuration);
}

void resolve_training_configuration(MeasureConfiguration& configuration) {
  require_weights_here(configuration);
  TrainingWorkload(record_of(resolve_checkpoint_configuration(configuration)), {}, configuration);  // checks the rest
}

}  // namespace

const WorkloadKind& training_workload_kind() {
  static const WorkloadKind kind{
      kTrainingKind,
      [](const MeasureConfiguration& configuration) {
        return !configuration.model.empty() && configuration.workload_options.has(kTrain);
      },
      training_workload_for,
      [](const MeasureConfiguration& configuration, const JsonObjectReader& document) -> std::unique_ptr<const Workload> {
        return std::make_unique<TrainingWorkload>(read_checkpoint_record(document.object("training_model")),
                                                  std::vector<DecoderTensor>{}, configuration);
      },
      resolve_training_configuration,
      {{kTrain, "train", "with --model: fine-tuning steps instead of generation: full (every parameter) or lora "
                       "(PEFT adapters)", "",
        WorkloadOption::Type::kText,
        [](const std::string& text) -> WorkloadOptions::Value {
          if (text != "full" && text != "lora") throw UsageError(kTrain, "'" + printable(text) + "'; accepted: full, lora");
          return text;
        },
        "needs --model (the synthetic MLP is not trained)"},
       {kSteps, "steps", "with --train: training steps, one forward, backward and optimizer row each", "3",
        WorkloadOption::Type::kWholeNumber,
        [](const std::string& text) -> WorkloadOptions::Value { return parse_whole_number(text, kSteps, 1, kMaxSteps); },
        "needs --train"},
       {kLoraRank, "lora_rank", "with --train lora: the adapters' rank r", "16", WorkloadOption::Type::kWholeNumber,
        [](const std::string& text) -> WorkloadOptions::Value {
          return parse_whole_number(text, kLoraRank, 1, kMaxLoraRank);
        },
        "needs --train lora", /*swept=*/false, kTrain, "lora"},
       {kLoraAlpha, "lora_alpha", "with --train lora: lora_alpha (the scaling is alpha / r)", "32",
        WorkloadOption::Type::kWholeNumber,
        [](const std::string& text) -> WorkloadOptions::Value {
          return parse_whole_number(text, kLoraAlpha, 1, kMaxLoraRank);
        },
        "needs --train lora", /*swept=*/false, kTrain, "lora"},
       {kLoraTargets, "lora_targets", "with --train lora: the projections adapted, comma-separated", kEveryProjection,
        WorkloadOption::Type::kText, checked_targets, "needs --train lora", /*swept=*/false, kTrain, "lora"},
       {kGradientCheckpointing, "gradient_checkpointing",
        "with --train: gradient checkpointing as model.gradient_checkpointing_enable() sets it (each decoder "
        "layer recomputed in the backward; no KV cache)", "0", WorkloadOption::Type::kSwitch,
        [](const std::string& text) { return check_switch(kGradientCheckpointing, text); }, "needs --train"}},
      {"weights_load", "adapters", "inputs", "forward", "backward", "optimizer"},
      "its rows are --steps training steps (the first creates AdamW's state; the tokens per second are "
      "those of steps 2 and on)",
  };
  return kind;
}

}  // namespace iteragpu
