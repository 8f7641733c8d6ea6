// The second workload: a dense decoder-only checkpoint, run as transformers 5 runs
// model(input_ids, past_key_values=DynamicCache, use_cache=True, logits_to_keep=1) under
// inference mode with SDPA attention. Its rows: weights_load, inputs (random token ids), then
// per sequence a prefill (the prompt through the model, filling a fresh cache, the first
// token chosen greedily) and one decode row per new token. The first sequence is cold; then
// come the warm-up sequences and the warm ones the timing statistics are taken from.

#include "workload/decoder_workload.hpp"

#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "iteragpu/decoder_checkpoint.hpp"
#include "estimate/model_files.hpp"
#include "iteragpu/error.hpp"
#include "iteragpu/printable_text.hpp"
#include "mechanics/quantity_parser.hpp"
#include "mechanics/sha256.hpp"
#include "workload/decoder_allocations.hpp"
#include "workload/decoder_config.hpp"
#include "workload/decoder_payload.hpp"
#include "workload/configuration_bounds.hpp"
#include "workload/workload_steps.hpp"

namespace iteragpu {
namespace {

constexpr std::int64_t kMaxTokenIds = std::int64_t{1} << 31;  // batch × (context + new tokens)

// Its one option of its own: the decode steps after each prefill.
constexpr const char* kNewTokens = "new-tokens";
// SDPA's grouped-query path takes keys and values of at most this head size (decoder_module.cpp).
constexpr std::int64_t kGroupedAttentionMaxHeadDim = 256;

// The report of a checkpoint's run (Backend::run_report), read back; MeasurementFailed when it
// is malformed.
DecoderRunReport read_decoder_run_report(const std::string& text) {
  DecoderRunReport report;
  const std::string malformed = decode_decoder_run_report(text, report);
  if (!malformed.empty())
    throw MeasurementFailed("the backend's report of the checkpoint run is malformed: " + malformed);
  return report;
}

class DecoderWorkload final : public CheckpointWorkload {
 public:
  // `tensors` empty: a recorded checkpoint, described but not runnable.
  DecoderWorkload(CheckpointRecord checkpoint, std::vector<DecoderTensor> tensors,
                  const MeasureConfiguration& configuration)
      : CheckpointWorkload(std::move(checkpoint), std::move(tensors), configuration),
        new_tokens_(configuration.workload_options.whole_number(kNewTokens)) {
    check_count(configuration.warmup, "warmup", 0);
    check_count(configuration.repeats, "repeats", 1);
    check_count(new_tokens_, kNewTokens, 1);
    // A cold sequence, the warm-up and warm ones; each a prefill and a row per new token.
    const std::int64_t sequences = 1 + std::int64_t{configuration.warmup} + configuration.repeats;
    const std::int64_t steps = sequences * (1 + std::int64_t{new_tokens_});
    check_request_work(2 + steps, steps, checkpoint_.architecture.layers,
                       "warmup " + std::to_string(configuration.warmup) + ", repeats " +
                           std::to_string(configuration.repeats) + " and new-tokens " + std::to_string(new_tokens_),
                       "2 + (1 + warmup + repeats) x (1 + new tokens)");
    check_positions(new_tokens_);
  }

  std::vector<PlannedPhase> phase_plan(int warmup, int repeats) const override {
    std::vector<PlannedPhase> plan;
    auto add = [&plan](const char* phase, const char* step) -> PlannedPhase& {
      plan.emplace_back();
      plan.back().row.phase = phase;
      plan.back().step = step;
      return plan.back();
    };
    add("weights_load", kLoadModelStep);
    add("inputs", kCreateInputsStep);
    auto sequence = [&](const char* kind, int repeat) {
      for (int step = 0; step <= new_tokens_; ++step) {
        PlannedPhase& planned = add(step == 0 ? "prefill" : "decode", kForwardStep);
        planned.row.repeat = repeat;
        planned.row.forwards = 1;
        planned.keeps_output = true;
        planned.row.sequence = kind;
        planned.row.step = step;
        planned.release_first = step == 0;  // a fresh cache for every sequence
      }
    };
    sequence("cold", 0);
    for (int repeat = 1; repeat <= warmup; ++repeat) sequence("warmup", repeat);
    for (int repeat = 1; repeat <= repeats; ++repeat) sequence("warm", repeat);
    return plan;
  }

  bool predictable() const override { return prediction_refusal().empty(); }
  std::string prediction_refusal() const override {
    return checkpoint_prediction_refusal("iteragpu measure --model");
  }
  std::vector<PredictionCaveat> prediction_caveats(int major, int minor) const override {
    std::vector<PredictionCaveat> caveats;
    const auto attention = PredictionCaveat::Reach::kForwardTemporaries;
    if (major != 9 || minor != 0)
      caveats.push_back({"the attention rows are checked on compute capability 9.0 (cuDNN attention on the H200); "
                         "on other compute capabilities PyTorch may pick another SDPA backend, which can allocate "
                         "more than its output (flash attention's log-sum-exp): prefill and decode counters may be "
                         "higher",
                         attention, /*lower_bound=*/true});
    if (dtype_ == "float32")
      caveats.push_back({"float32 attention runs PyTorch's memory-efficient SDPA (cuDNN attention takes 16-bit "
                         "types only); its allocations are modelled as its output only, not checked on a GPU",
                         attention, /*lower_bound=*/true});
    return caveats;
  }
  std::string shape_text() const override {
    return "batch " + std::to_string(batch_) + ", context " + std::to_string(context_) + ", new tokens " +
           std::to_string(new_tokens_) + ", dtype " + dtype_ + ", model " + checkpoint_.architecture.architecture;
  }

  WorkloadSpec workload_spec(int device_index, std::uint64_t seed) const override {
    WorkloadSpec spec = checkpoint_spec(kDecoderKind, device_index, seed);
    DecoderPayload payload;
    payload.batch = batch_;
    payload.context = context_;
    payload.new_tokens = static_cast<int>(new_tokens_);
    payload.architecture = checkpoint_.architecture;
    payload.tensors = tensors_;
    spec.payload = encode_decoder_payload(payload);
    return spec;
  }

  std::unique_ptr<ForwardAllocations> forward_allocations() const override {
    return decoder_forward_allocations(checkpoint_.architecture, batch_, context_, dtype_bytes());
  }
  std::vector<std::string> forward_rules() const override { return decoder_allocation_rules(); }

  std::string heading() const override {
    return architecture_text() + ", " + dtype_ + ", token ids [" + std::to_string(batch_) + ", " +
           std::to_string(context_) + "], " + std::to_string(new_tokens_) + " new tokens";
  }

  std::string measurement_text() const override {
    return "Model: " + architecture_text() + ", " + dtype_ + ", " + std::to_string(checkpoint_.parameter_count) +
           " parameters (" + std::to_string(checkpoint_.parameter_bytes) + " bytes in the files) from " +
           checkpoint_.directory + "\nInput: [" + std::to_string(batch_) + ", " + std::to_string(context_) +
           "] random token ids, then " + std::to_string(new_tokens_) + " greedy decode steps per sequence";
  }

  void write_json(JsonWriter& json) const override {
    json.key("decoder_model").begin_object();
    write_checkpoint_members(json, checkpoint_, dtype_);
    json.key("input_shape").begin_array().value(batch_).value(context_).end_array()
        .key("new_tokens").value(static_cast<std::int64_t>(new_tokens_))
        .end_object();
  }

  void check_json(const JsonObjectReader& document) const override {
    const JsonObjectReader written = document.object("decoder_model");
    if (written.text("architecture") != checkpoint_.architecture.architecture)
      written.fail("architecture", "differs from the checkpoint's config.json");
    if (written.text("dtype") != dtype_) written.fail("dtype", "differs from the configuration's");
    if (written.int64("parameter_count") != checkpoint_.parameter_count)
      written.fail("parameter_count", "differs from the checkpoint's");
    const std::vector<std::int64_t> shape = {batch_, context_};
    if (written.int64s("input_shape") != shape) written.fail("input_shape", "differs from the configuration's");
    if (written.int64("new_tokens") != new_tokens_) written.fail("new_tokens", "differs from the configuration's");
    // The configuration's width and hidden are the checkpoint's sizes (resolve_decoder_configuration).
    const JsonObjectReader configuration = document.object("configuration");
    if (configuration.int64("width") != written.int64("hidden_size"))
      configuration.fail("width", "is not the checkpoint's hidden_size");
    if (configuration.int64("hidden") != written.int64("intermediate_size"))
      configuration.fail("hidden", "is not the checkpoint's intermediate_size");
  }

  // What the rows of a checkpoint's run mean, in place of the synthetic MLP's forward notes.
  std::vector<std::string> notes() const override {
    return {
        "The counters cover this process's LibTorch caching allocator on the selected GPU only; "
        "device_used_bytes (cudaMemGetInfo at the end) is what the card holds besides: the CUDA "
        "context, libraries, the allocator's segments and any other process.",
        "host_seconds is host wall-clock time around the phase's work and the synchronization "
        "that ends it; gpu_event_seconds is the time between GPU events recorded around it.",
        "weights_load reads the safetensors files and copies each tensor to the GPU, after one "
        "allocation of the weights' bytes as transformers' caching_allocator_warmup makes. Each "
        "sequence starts with an empty KV cache (the previous one is freed before its prefill); "
        "a prefill row ends holding the cache and the greedy token; each decode row adds one "
        "position to the cache. The cold sequence is the first after loading; warm rows give the "
        "timing statistics.",
        "Inference only, one GPU, no quantization, no tokenizer: token ids are random, uniform "
        "over the vocabulary, from the seed.",
    };
  }
  int phase_column_width() const override { return 18; }  // "warmup decode 16"
  // The warm sequences' decode steps.
  TimingSummary warm_repeats(const std::vector<PhaseRow>& rows) const override {
    return timing_of_rows(rows, [](const PhaseRow& row) { return row.sequence == "warm" && row.phase == "decode"; });
  }
  std::string no_prediction_reason() const override {
    return "the allocator counters of a checkpoint are not predicted yet";
  }

  // The backend's report (tokens, logits, attention backend, device memory in use) and the
  // rates from the warm sequences' median host times (the warm decode steps' are the
  // measurement's timing summary).
  std::shared_ptr<const WorkloadRun> run_record(Backend& backend, const std::vector<PhaseRow>& rows,
                                                const TimingSummary& warm_decode_steps) const override {
    std::string report_text;
    const BackendStatus status = backend.run_report(report_text);
    if (!status.ok()) throw MeasurementFailed("the backend gave no report of the checkpoint run: " + status.message);
    const DecoderRunReport report = read_decoder_run_report(report_text);
    auto run = std::make_shared<DecoderRun>();
    run->attention_backend = report.attention_backend;
    run->first_sequence_tokens = report.first_sequence_tokens;
    run->last_logits_sha256 = sha256_hex(report.last_logits_bytes);
    run->device_used_bytes = report.device_used_bytes;
    std::vector<double> prefill;
    for (const PhaseRow& row : rows)
      if (row.sequence == "warm" && row.phase == "prefill") prefill.push_back(row.host_seconds);
    if (!prefill.empty()) {
      const double seconds = SpreadStatistics::of(prefill).median;
      run->time_to_first_token_seconds = seconds;
      if (seconds > 0) run->prefill_tokens_per_second = static_cast<double>(batch_ * context_) / seconds;
    }
    const double decode_step = warm_decode_steps.host_seconds.median;
    if (warm_decode_steps.warm_repeats > 0 && decode_step > 0)
      run->decode_tokens_per_second = static_cast<double>(batch_) / decode_step;
    return run;
  }

  void write_run_json(JsonWriter& json, const WorkloadRun& record) const override {
    const DecoderRun& run = dynamic_cast<const DecoderRun&>(record);
    json.key("decoder_run").begin_object()
        .key("attention_backend").value(run.attention_backend)
        .key("first_sequence_tokens").begin_array();
    for (std::int64_t token : run.first_sequence_tokens) json.value(token);
    json.end_array().key("last_logits_sha256").value(run.last_logits_sha256);
    write_optional(json, "device_used_bytes", run.device_used_bytes);
    write_optional(json, "time_to_first_token_seconds", run.time_to_first_token_seconds);
    write_optional(json, "prefill_tokens_per_second", run.prefill_tokens_per_second);
    write_optional(json, "decode_tokens_per_second", run.decode_tokens_per_second);
    json.end_object();
  }

  std::shared_ptr<const WorkloadRun> read_run(const JsonObjectReader& document) const override {
    if (!document.has("decoder_run")) return nullptr;
    const JsonObjectReader json = document.object("decoder_run");
    auto run = std::make_shared<DecoderRun>();
    json.read("attention_backend", run->attention_backend).read("last_logits_sha256", run->last_logits_sha256);
    run->first_sequence_tokens = json.int64s("first_sequence_tokens");
    run->device_used_bytes = json.uint64_or_null("device_used_bytes");
    run->time_to_first_token_seconds = json.number_or_null("time_to_first_token_seconds");
    run->prefill_tokens_per_second = json.number_or_null("prefill_tokens_per_second");
    run->decode_tokens_per_second = json.number_or_null("decode_tokens_per_second");
    return run;
  }

  std::string run_text(const WorkloadRun& record) const override {
    const DecoderRun& run = dynamic_cast<const DecoderRun&>(record);
    char line[256];
    std::string text = "\nCheckpoint run:\n  attention (SDPA backend chosen): " + printable(run.attention_backend) + "\n";
    auto figure = [&](const char* label, const std::optional<double>& value, const char* format) {
      if (!value) return;
      std::snprintf(line, sizeof line, format, *value);
      text += std::string("  ") + label + ": " + line + "\n";
    };
    figure("time to first token (warm prefill, host median)", run.time_to_first_token_seconds, "%.6f s");
    figure("prefill", run.prefill_tokens_per_second, "%.1f tokens/s");
    figure("decode", run.decode_tokens_per_second, "%.1f tokens/s");
    if (run.device_used_bytes)
      text += "  device memory in use at the end (cudaMemGetInfo, the CUDA context and libraries included, "
              "not the allocator's counter): " + std::to_string(*run.device_used_bytes) + " bytes\n";
    text += "  first sequence's tokens (batch row 0):";
    for (std::int64_t token : run.first_sequence_tokens) text += " " + std::to_string(token);
    text += "\n  last logits (batch row 0, cold sequence's last step) SHA-256: " + run.last_logits_sha256 + "\n";
    return text;
  }

 private:
  std::int64_t new_tokens_;
};

}  // namespace

CheckpointWorkload::CheckpointWorkload(CheckpointRecord checkpoint, std::vector<DecoderTensor> tensors,
                                       const MeasureConfiguration& configuration)
    : checkpoint_(std::move(checkpoint)),
      tensors_(std::move(tensors)),
      batch_(configuration.batch),
      context_(configuration.context),
      dtype_(configuration.dtype.empty() ? checkpoint_.architecture.dtype : configuration.dtype) {
  dtype_bytes_of(dtype_);
  check_dimension(batch_, "batch", 1);
  check_dimension(context_, "context", 1);
}

void CheckpointWorkload::allocate_model(AllocationRecorder& allocator) const {
  allocate_decoder_weights(allocator, checkpoint_.architecture, tensors_, dtype_bytes());
}

std::uint64_t CheckpointWorkload::parameter_bytes() const {
  std::uint64_t bytes = 0;
  for (std::uint64_t tensor : decoder_tensor_bytes(tensors_, dtype_bytes())) bytes += tensor;
  return bytes;
}

bool CheckpointWorkload::uses_cublaslt() const {
  const DecoderArchitecture& a = checkpoint_.architecture;
  return a.qkv_bias || a.o_proj_bias || a.mlp_bias;
}

WorkloadSpec CheckpointWorkload::checkpoint_spec(const char* kind, int device_index, std::uint64_t seed) const {
  if (tensors_.empty())
    throw UsageError("model", "a checkpoint recorded in a measurement file cannot be run; measure its folder");
  WorkloadSpec spec;
  spec.device_index = device_index;
  spec.kind = kind;
  spec.dtype = dtype_;
  spec.seed = seed;
  return spec;
}

void CheckpointWorkload::check_positions(std::int64_t new_tokens) const {
  const std::int64_t positions = context_ + new_tokens;
  const std::string sum = "context " + std::to_string(context_) +
                          (new_tokens > 0 ? " + new tokens " + std::to_string(new_tokens) : "");
  if (batch_ * positions > kMaxTokenIds)
    throw UsageError("batch", std::to_string(batch_) + " x (" + sum + ") = " + std::to_string(batch_ * positions) +
                                  " token ids; accepted: at most " + std::to_string(kMaxTokenIds) +
                                  " (this is a bounded measurement)");
  // Positions beyond the model's own limit: transformers would run them, but no answer
  // about such a run describes the model (a recorded checkpoint carries no limit: 0).
  const std::int64_t max_positions = checkpoint_.architecture.max_position_embeddings;
  if (max_positions > 0 && positions > max_positions)
    throw UsageError("context", sum + (new_tokens > 0 ? " = " + std::to_string(positions) : std::string()) +
                                    " positions exceed the checkpoint's max_position_embeddings (" +
                                    std::to_string(max_positions) + ", " + checkpoint_.directory +
                                    "/config.json); expected at most " + std::to_string(max_positions) +
                                    " positions");
  const std::int64_t window = checkpoint_.architecture.sliding_window;
  if (window > 0 && positions >= window)
    throw UsageError("model", checkpoint_.directory + "/config.json: sliding_window " + std::to_string(window) +
                                  " is shorter than " + (new_tokens > 0 ? "context + new tokens" : "the context") +
                                  " (" + std::to_string(positions) + "); a sliding-window mask is not supported");
}

std::string CheckpointWorkload::checkpoint_prediction_refusal(const std::string& measure_command) const {
  if (tensors_.empty()) return "a checkpoint recorded in a measurement file cannot be predicted; predict its folder";
  const DecoderArchitecture& a = checkpoint_.architecture;
  if (a.attention_heads != a.kv_heads && a.head_dim > kGroupedAttentionMaxHeadDim)
    return "head_dim " + std::to_string(a.head_dim) + " is above " + std::to_string(kGroupedAttentionMaxHeadDim) +
           ": SDPA's grouped-query path is not taken and the allocations of repeat_kv and of the attention "
           "backend used then are not modelled; measure it with " + measure_command;
  return {};
}

std::string CheckpointWorkload::architecture_text() const {
  const DecoderArchitecture& a = checkpoint_.architecture;
  return a.architecture + " (" + std::to_string(a.layers) + " layers, hidden " + std::to_string(a.hidden_size) +
         ", " + std::to_string(a.attention_heads) + " query / " + std::to_string(a.kv_heads) + " KV heads of " +
         std::to_string(a.head_dim) + ", MLP " + std::to_string(a.intermediate_size) + ", vocabulary " +
         std::to_string(a.vocab_size) + (a.tie_word_embeddings ? ", tied embeddings" : "") + ")";
}

CheckpointRecord record_of(const DecoderCheckpoint& checkpoint) {
  return {checkpoint.directory, checkpoint.architecture, static_cast<std::int64_t>(checkpoint.tensors.size()),
          checkpoint.parameter_count, checkpoint.parameter_bytes};
}

DecoderCheckpoint checkpoint_of(const MeasureConfiguration& configuration) {
  if (configuration.model_files) return read_decoder_checkpoint(*configuration.model_files);
  return read_decoder_checkpoint(*open_model_files(configuration.model, "model", HubAccess{configuration.hub_timeout_ms}));
}

void require_weights_here(const MeasureConfiguration& configuration) {
  if (configuration.model.empty() || !configuration.model_files || !configuration.model_files->weights_folder().empty())
    return;
  const ModelOrigin& origin = configuration.model_files->origin();
  throw UsageError("model", printable(origin.given) + ": not complete in the Hugging Face cache, and measure loads the "
                   "weights; download them first with `hf download " + printable(origin.repository) +
                   (origin.revision == "main" ? "" : " --revision " + printable(origin.revision)) +
                   "` (huggingface_hub), or give the checkpoint's folder");
}

std::unique_ptr<const Workload> decoder_workload_for(const MeasureConfiguration& configuration) {
  DecoderCheckpoint checkpoint = checkpoint_of(configuration);
  return std::make_unique<DecoderWorkload>(record_of(checkpoint), std::move(checkpoint.tensors), configuration);
}

std::unique_ptr<const Workload> recorded_decoder_workload(const MeasureConfiguration& configuration,
                                                          const CheckpointRecord& record) {
  return std::make_unique<DecoderWorkload>(record, std::vector<DecoderTensor>{}, configuration);
}

const WorkloadKind& decoder_workload_kind() {
  static const WorkloadKind kind{
      kDecoderKind,
      [](const MeasureConfiguration& configuration) { return !configuration.model.empty(); },
      decoder_workload_for,
      // A checkpoint is described by what the file recorded: its folder may not be here.
      [](const MeasureConfiguration& configuration, const JsonObjectReader& document) {
        return recorded_decoder_workload(configuration, read_checkpoint_record(document.object("decoder_model")));
      },
      resolve_decoder_configuration,
      {{kNewTokens, "new_tokens", "with --model: decode steps after the prefill, one row each", "16",
        WorkloadOption::Type::kWholeNumber,
        [](const std::string& text) -> WorkloadOptions::Value {
          return parse_whole_number(text, kNewTokens, 1, kMaxForwardCount);
        },
        "needs --model without --train (only generation has decode steps)", /*swept=*/true}},
      {"weights_load", "inputs", "prefill", "decode"},
  };
  return kind;
}

void write_checkpoint_members(JsonWriter& json, const CheckpointRecord& checkpoint, const std::string& dtype) {
  const DecoderArchitecture& a = checkpoint.architecture;
  json.key("directory").value(checkpoint.directory)
      .key("architecture").value(a.architecture)
      .key("model_type").value(a.model_type)
      .key("layers").value(a.layers)
      .key("hidden_size").value(a.hidden_size)
      .key("intermediate_size").value(a.intermediate_size)
      .key("attention_heads").value(a.attention_heads)
      .key("kv_heads").value(a.kv_heads)
      .key("head_dim").value(a.head_dim)
      .key("vocab_size").value(a.vocab_size)
      .key("rope_type").value(a.rope_type)
      .key("qkv_bias").value(a.qkv_bias)
      .key("qk_norm").value(a.qk_norm)
      .key("tie_word_embeddings").value(a.tie_word_embeddings)
      .key("checkpoint_dtype").value(a.dtype)
      .key("dtype").value(dtype)
      .key("tensors").value(checkpoint.tensors)
      .key("parameter_count").value(checkpoint.parameter_count)
      .key("parameter_bytes").value(checkpoint.parameter_bytes);
}

CheckpointRecord read_checkpoint_record(const JsonObjectReader& json) {
  CheckpointRecord record;
  DecoderArchitecture& a = record.architecture;
  json.read("directory", record.directory).read("architecture", a.architecture).read("model_type", a.model_type)
      .read("layers", a.layers).read("hidden_size", a.hidden_size).read("intermediate_size", a.intermediate_size)
      .read("attention_heads", a.attention_heads).read("kv_heads", a.kv_heads).read("head_dim", a.head_dim)
      .read("vocab_size", a.vocab_size).read("rope_type", a.rope_type).read("qkv_bias", a.qkv_bias)
      .read("qk_norm", a.qk_norm).read("tie_word_embeddings", a.tie_word_embeddings)
      .read("checkpoint_dtype", a.dtype).read("tensors", record.tensors)
      .read("parameter_count", record.parameter_count).read("parameter_bytes", record.parameter_bytes);
  return record;
}


DecoderCheckpoint resolve_checkpoint_configuration(MeasureConfiguration& configuration) {
  DecoderCheckpoint checkpoint = checkpoint_of(configuration);
  if (configuration.dtype.empty()) configuration.dtype = checkpoint.architecture.dtype;
  configuration.width = checkpoint.architecture.hidden_size;
  configuration.hidden = checkpoint.architecture.intermediate_size;
  configuration.hidden_is_default = false;
  return checkpoint;
}

void resolve_decoder_configuration(MeasureConfiguration& configuration) {
  DecoderWorkload(record_of(resolve_checkpoint_configuration(configuration)), {}, configuration);  // checks the rest
}

}  // namespace iteragpu
