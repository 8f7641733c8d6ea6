#pragma once
// A scripted test double of the LibTorch backend: N fake GPUs, a caching allocator whose
// counters grow by the bytes each operation would allocate, a log of every call (to assert
// the protocol's exact order), and failures injected per call. It also checks the contract
// PhaseMeasurer must keep (open first, no forward while an output is alive, timers in
// pairs) and reports a breach as a failure, so a protocol bug cannot go unnoticed. Each
// fake GPU is told apart in what a measurement records: GPU N is named "Fake GPU N" and its
// first forward keeps a workspace N × 512 bytes larger than GPU 0's.
// It reads the payload of the workload it is opened with by that workload's codec, as the
// plugin's modules do, and logs each step under its name ("load_model", "create_inputs",
// "forward"). Opened with the decoder workload, it scripts a checkpoint run: the checkpoint's
// tensors as weights, int64 token ids as inputs, each forward a prefill (the first after a
// release: context positions of KV cache) or a decode step (one position more), the cache
// freed by release_output(); run_report() then answers the k* figures below with tokens 1,
// 2, ... one per forward of the cold sequence. The synthetic MLP's behaviour is unchanged by
// this.
// Header only: used in-process by the unit tests and wrapped as a plugin file
// (fake_backend_plugin.cpp) for the end-to-end tests.

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "iteragpu/backend.hpp"
#include "workload/decoder_payload.hpp"
#include "workload/training_payload.hpp"
#include "workload/synthetic_mlp_payload.hpp"
#include "workload/workload_steps.hpp"

namespace iteragpu::testing {

class FakeBackend : public Backend {
 public:
  static constexpr std::uint64_t kSegmentBytes = 2 * 1024 * 1024;    // reserved grows by these
  static constexpr std::uint64_t kWorkspaceBytes = 1024 * 1024;      // GPU 0's, from the 1st forward
  static constexpr std::uint64_t kGpuTotalBytes = 80ULL * 1024 * 1024 * 1024;
  static constexpr double kGpuEventSeconds = 0.00025;
  // A checkpoint run's report (tokens aside); device_used_bytes is reserved + this at close.
  static constexpr const char* kAttentionBackend = "test-double";
  static constexpr const char* kLastLogitsBytes = "fake logits of the cold sequence's last step";
  static constexpr std::uint64_t kDeviceContextBytes = 500ULL * 1024 * 1024;

  struct InjectedFailure {
    std::string call;     // "open", "load_model", "forward", "synchronize", ...
    int occurrence = 1;   // the n-th call of that name (1-based)
    BackendStatus::Code code = BackendStatus::Code::kFailed;
    std::string message = "injected failure";
    int device_index = -1;  // -1: any; else only once open() was asked for that device
  };

  struct Script {
    int gpu_count = 1;
    std::string torch_version = "0.0.0+fake";
    std::set<std::string> unsupported_dtypes;  // open() answers kUnsupported for these
    std::vector<InjectedFailure> failures;
    bool has_gpu_timer = true;                  // false: gpu_timer_seconds is kUnsupported
    // Each fake GPU's memory: an allocation that would take reserved beyond it fails with
    // kOutOfMemory, as cudaMalloc would; free memory is reported as this minus reserved.
    std::uint64_t memory_bytes = kGpuTotalBytes;
    std::function<void(const std::string& call)> on_call;  // e.g. to request an interrupt
  };

  FakeBackend() = default;
  explicit FakeBackend(Script script) : script_(std::move(script)) {}

  // What happened, for the tests.
  std::vector<std::string> calls;
  std::vector<std::string> contract_breaches;
  std::uint64_t allocated() const { return allocated_; }
  std::uint64_t reserved() const { return reserved_; }
  bool output_alive() const { return output_alive_; }
  const WorkloadSpec& spec() const { return spec_; }
  // The payload the last open() read: the synthetic MLP's, or the decoder's when it ran one.
  const SyntheticMlpPayload& mlp() const { return mlp_; }
  const std::optional<DecoderPayload>& decoder_payload() const { return decoder_; }
  bool decoder() const { return decoder_.has_value(); }

  // Bytes of one tensor of `elements` values of the opened dtype, rounded up like the CUDA
  // caching allocator (multiples of 512).
  std::uint64_t tensor_bytes(std::int64_t elements) const {
    const std::uint64_t raw = static_cast<std::uint64_t>(elements) * dtype_bytes();
    return (raw + 511) / 512 * 512;
  }
  std::uint64_t output_bytes() const { return tensor_bytes(mlp_.batch * mlp_.context * mlp_.width); }
  // Kept from the first forward on; differs per device so that each GPU's counters show
  // which GPU they came from.
  static std::uint64_t workspace_bytes(int device_index) {
    return kWorkspaceBytes + 512 * static_cast<std::uint64_t>(device_index);
  }

  BackendStatus describe(int device_index, StackReport& report) override {
    if (auto status = enter("describe", false); !status.ok()) return status;
    report.backend_identity = kTestDoubleBackend;  // so no view takes its figures for a GPU's
    report.torch_version = script_.torch_version;
    report.cuda_build_version = script_.gpu_count > 0 ? std::optional<std::string>("12.8") : std::nullopt;
    report.gpu_runtime_available = script_.gpu_count > 0;
    for (int i = 0; i < script_.gpu_count; ++i)
      report.gpus.push_back({i, "Fake GPU " + std::to_string(i), 9, 0, script_.memory_bytes, 132});
    if (device_index >= 0 && device_index < script_.gpu_count) {
      report.selected_free_bytes = script_.memory_bytes - reserved_;
      report.selected_total_bytes = script_.memory_bytes;
    }
    return BackendStatus::Ok();
  }

  BackendStatus open(const WorkloadSpec& spec) override {
    requested_device_ = spec.device_index;
    if (auto status = enter("open", false); !status.ok()) return status;
    if (spec.device_index < 0 || spec.device_index >= script_.gpu_count)
      return {BackendStatus::Code::kDeviceUnavailable,
              "no device cuda:" + std::to_string(spec.device_index)};
    if (script_.unsupported_dtypes.count(spec.dtype))
      return {BackendStatus::Code::kUnsupported, spec.dtype + " does not run on Fake GPU"};
    SyntheticMlpPayload mlp;
    std::optional<DecoderPayload> decoder;
    std::string malformed;
    if (spec.kind == kSyntheticMlpKind) {
      malformed = decode_synthetic_mlp_payload(spec.payload, mlp);
    } else if (spec.kind == kDecoderKind) {
      decoder.emplace();
      malformed = decode_decoder_payload(spec.payload, *decoder);
    } else if (spec.kind == kTrainingKind) {
      // A training run keeps the checkpoint's description where a decoder run keeps it.
      TrainingPayload training;
      malformed = decode_training_payload(spec.payload, training);
      decoder.emplace();
      decoder->batch = training.batch;
      decoder->context = training.context;
      decoder->architecture = training.architecture;
      decoder->tensors = training.tensors;
      training_ = training;
    } else {
      return {BackendStatus::Code::kUnsupported, "the test double has no workload " + spec.kind + " (it has: " +
                                                     kDecoderKind + ", " + kSyntheticMlpKind + ", " + kTrainingKind +
                                                     ")"};
    }
    if (spec.kind != kTrainingKind) training_.reset();
    if (!malformed.empty())
      return {BackendStatus::Code::kFailed, "the " + spec.kind + " payload is malformed: " + malformed};
    spec_ = spec;
    mlp_ = mlp;
    decoder_ = std::move(decoder);
    opened_ = true;
    // A new session: a checkpoint run's cold sequence comes first; an earlier report goes.
    tokens_.clear();
    cold_sequence_ = true;
    sequence_forwards_ = 0;
    last_report_.reset();
    return BackendStatus::Ok();
  }

  BackendStatus synchronize() override { return enter("synchronize"); }

  BackendStatus read_counters(AllocatorCounters& counters) override {
    if (auto status = enter("read_counters"); !status.ok()) return status;
    counters = {allocated_, reserved_, peak_allocated_, peak_reserved_};
    return BackendStatus::Ok();
  }

  BackendStatus reset_peaks() override {
    if (auto status = enter("reset_peaks"); !status.ok()) return status;
    peak_allocated_ = allocated_;
    peak_reserved_ = reserved_;
    return BackendStatus::Ok();
  }

  BackendStatus start_gpu_timer() override {
    if (auto status = enter("start_gpu_timer"); !status.ok()) return status;
    if (timer_running_) return breach("start_gpu_timer while the timer runs");
    timer_running_ = true;
    timer_stopped_ = false;
    return BackendStatus::Ok();
  }

  BackendStatus stop_gpu_timer() override {
    if (auto status = enter("stop_gpu_timer"); !status.ok()) return status;
    if (!timer_running_) return breach("stop_gpu_timer without start_gpu_timer");
    timer_running_ = false;
    timer_stopped_ = true;
    return BackendStatus::Ok();
  }

  BackendStatus gpu_timer_seconds(double& seconds) override {
    if (auto status = enter("gpu_timer_seconds"); !status.ok()) return status;
    if (!timer_stopped_) return breach("gpu_timer_seconds without a start/stop pair");
    if (!script_.has_gpu_timer) return {BackendStatus::Code::kUnsupported, "no GPU events"};
    seconds = kGpuEventSeconds;
    return BackendStatus::Ok();
  }

  // Each step is logged under its name, so injected failures and the call log name steps.
  BackendStatus run_step(const std::string& step) override {
    if (auto status = enter(step); !status.ok()) return status;
    if (step == kLoadModelStep) return load_model();
    if (step == kCreateInputsStep) return create_inputs();
    if (training_) {
      if (step == kAddAdaptersStep) return add_adapters();
      if (step == kForwardStep) return training_forward();
      if (step == kBackwardStep) return training_backward();
      if (step == kOptimizerStep) return training_optimizer();
    } else if (step == kForwardStep) {
      return forward();
    }
    return {BackendStatus::Code::kUnsupported, "the test double has no step " + step};
  }

  BackendStatus release_output() override {
    if (auto status = enter("release_output"); !status.ok()) return status;
    if (!output_alive_) return breach("release_output without an output");
    if (decoder()) {
      release_sequence();
      return BackendStatus::Ok();
    }
    free(output_bytes());
    output_alive_ = false;
    return BackendStatus::Ok();
  }

  // A checkpoint run's report, taken at close as the LibTorch backend takes it (so it is
  // asked for after close); kUnsupported for the synthetic MLP.
  BackendStatus run_report(std::string& report) override {
    if (auto status = enter("run_report", false); !status.ok()) return status;
    if (!last_report_) return {BackendStatus::Code::kUnsupported, "the test double runs no checkpoint"};
    report = *last_report_;
    return BackendStatus::Ok();
  }

  // Frees the model, inputs and output; the cache (reserved) stays, as in LibTorch.
  void close() override {
    calls.push_back("close");
    if (training_) {
      if (opened_) {
        TrainingRunReport report;
        report.attention_backend = kAttentionBackend;
        report.losses_float32.assign(reinterpret_cast<const char*>(losses_.data()), losses_.size() * sizeof(float));
        for (const std::uint64_t bytes : decoder_weight_bytes()) report.parameters += bytes / dtype_bytes();
        report.trainable_parameters = report.parameters;
        report.device_used_bytes = reserved_ + kDeviceContextBytes;
        last_report_ = encode_training_run_report(report);
      }
      for (const std::uint64_t bytes : training_held_) free(bytes);
      training_held_.clear();
      if (inputs_created_) free(input_bytes());
      for (const std::uint64_t bytes : weights_allocated_) free(bytes);
      weights_allocated_.clear();
      losses_.clear();
      output_alive_ = inputs_created_ = model_loaded_ = opened_ = gradients_alive_ = false;
      optimizer_state_ = false;
      return;
    }
    if (decoder()) {
      if (opened_) {
        DecoderRunReport report;
        report.attention_backend = kAttentionBackend;
        report.first_sequence_tokens = tokens_;
        report.last_logits_bytes = kLastLogitsBytes;
        report.device_used_bytes = reserved_ + kDeviceContextBytes;
        last_report_ = encode_decoder_run_report(report);
      }
      release_sequence();  // also a cache left by a forward that failed half-way
      if (inputs_created_) free(input_bytes());
      for (const std::uint64_t bytes : weights_allocated_) free(bytes);
      weights_allocated_.clear();
      output_alive_ = inputs_created_ = model_loaded_ = opened_ = false;
      return;
    }
    if (output_alive_) free(output_bytes());
    if (inputs_created_) free(tensor_bytes(mlp_.batch * mlp_.context * mlp_.width));
    if (model_loaded_)
      for (std::int64_t elements : {mlp_.hidden * mlp_.width, mlp_.hidden, mlp_.width * mlp_.hidden, mlp_.width})
        free(tensor_bytes(elements));
    output_alive_ = inputs_created_ = model_loaded_ = opened_ = false;
  }

  // The checkpoint's KV cache held now (bytes), and the sequence's forwards so far.
  std::uint64_t cache_bytes() const {
    std::uint64_t total = 0;
    for (const std::uint64_t bytes : cache_blocks_) total += bytes;
    return total;
  }
  int sequence_forwards() const { return sequence_forwards_; }

  int forwards() const { return forwards_; }

 private:
  BackendStatus load_model() {
    if (model_loaded_) return breach("load_model twice");
    if (decoder()) {
      for (const std::uint64_t bytes : decoder_weight_bytes()) {
        if (!allocate(bytes)) return out_of_memory();
        weights_allocated_.push_back(bytes);
      }
      model_loaded_ = true;
      return BackendStatus::Ok();
    }
    for (std::int64_t elements : {mlp_.hidden * mlp_.width, mlp_.hidden, mlp_.width * mlp_.hidden, mlp_.width})
      if (!allocate(tensor_bytes(elements))) return out_of_memory();
    model_loaded_ = true;
    return BackendStatus::Ok();
  }

  BackendStatus create_inputs() {
    if (inputs_created_) return breach("create_inputs twice");
    if (!allocate(input_bytes())) return out_of_memory();
    inputs_created_ = true;
    return BackendStatus::Ok();
  }

  // Linear → GELU → Linear: two hidden-sized intermediates live briefly, the output stays.
  BackendStatus forward() {
    if (!model_loaded_ || !inputs_created_) return breach("forward before the model and inputs");
    if (decoder()) return decoder_forward();
    if (output_alive_) return breach("forward while the previous output is alive");
    if (!workspace_allocated_) {
      if (!allocate(workspace_bytes(spec_.device_index))) return out_of_memory();
      workspace_allocated_ = true;
    }
    const std::uint64_t hidden = tensor_bytes(mlp_.batch * mlp_.context * mlp_.hidden);
    if (!allocate(hidden)) return out_of_memory();
    if (!allocate(hidden)) {
      free(hidden);
      return out_of_memory();
    }
    free(hidden);
    if (!allocate(output_bytes())) {
      free(hidden);
      return out_of_memory();
    }
    free(hidden);
    output_alive_ = true;
    ++forwards_;
    return BackendStatus::Ok();
  }

  static std::uint64_t rounded(std::uint64_t bytes) { return (bytes + 511) / 512 * 512; }
  static std::uint64_t elements_of(const std::vector<std::int64_t>& shape) {
    std::uint64_t elements = 1;
    for (const std::int64_t dimension : shape) elements *= static_cast<std::uint64_t>(dimension);
    return elements;
  }
  // The synthetic MLP's input [batch, context, width]; a checkpoint's int64 token ids [batch, context].
  std::uint64_t input_bytes() const {
    if (decoder()) return rounded(static_cast<std::uint64_t>(decoder_->batch * decoder_->context) * 8);
    return tensor_bytes(mlp_.batch * mlp_.context * mlp_.width);
  }
  // Each of the checkpoint's tensors in the opened dtype, in load order.
  std::vector<std::uint64_t> decoder_weight_bytes() const {
    std::vector<std::uint64_t> bytes;
    for (const DecoderTensor& tensor : decoder_->tensors)
      bytes.push_back(rounded(elements_of(tensor.shape) * dtype_bytes()));
    return bytes;
  }
  // Keys and values of every layer for `positions` more positions.
  std::uint64_t cache_step_bytes(std::int64_t positions) const {
    const DecoderArchitecture& a = decoder_->architecture;
    return static_cast<std::uint64_t>(a.layers) * 2 *
           tensor_bytes(decoder_->batch * a.kv_heads * a.head_dim * positions);
  }

  // A prefill when no sequence is under way (context positions), else one decode step (one
  // more position); the logits live briefly, the greedy token and the cache stay.
  BackendStatus decoder_forward() {
    const bool prefill = !output_alive_;
    if (!prefill && sequence_forwards_ > decoder_->new_tokens)
      return breach("a decode step beyond new_tokens without a fresh sequence");
    if (!workspace_allocated_) {
      if (!allocate(workspace_bytes(spec_.device_index))) return out_of_memory();
      workspace_allocated_ = true;
    }
    const std::uint64_t cache = cache_step_bytes(prefill ? decoder_->context : 1);
    if (!allocate(cache)) return out_of_memory();
    cache_blocks_.push_back(cache);
    const std::uint64_t logits = tensor_bytes(decoder_->batch * decoder_->architecture.vocab_size);
    if (!allocate(logits)) return out_of_memory();
    const std::uint64_t token = rounded(static_cast<std::uint64_t>(decoder_->batch) * 8);
    if (!allocate(token)) {
      free(logits);
      return out_of_memory();
    }
    if (token_alive_) free(token);  // the previous step's token goes once the new one exists
    token_alive_ = true;
    free(logits);
    output_alive_ = true;
    ++sequence_forwards_;
    ++forwards_;
    if (cold_sequence_) tokens_.push_back(static_cast<std::int64_t>(tokens_.size()) + 1);
    return BackendStatus::Ok();
  }

  // A training step's stand-in allocations: the adapters (LoRA), the forward's activations
  // and loss held until the backward, the gradients from the backward to the optimizer,
  // AdamW's two states per weight from the first optimizer row on.
  std::uint64_t weights_total() const {
    std::uint64_t total = 0;
    for (const std::uint64_t bytes : decoder_weight_bytes()) total += bytes;
    return total;
  }
  bool hold(std::uint64_t bytes) {
    if (!allocate(bytes)) return false;
    training_held_.push_back(bytes);
    return true;
  }
  void let_go(std::uint64_t bytes) {
    const auto found = std::find(training_held_.begin(), training_held_.end(), bytes);
    if (found == training_held_.end()) return;
    training_held_.erase(found);
    free(bytes);
  }
  std::uint64_t activation_bytes() const {
    return tensor_bytes(decoder_->batch * decoder_->context * decoder_->architecture.vocab_size);
  }
  BackendStatus add_adapters() {
    if (!model_loaded_) return breach("add_adapters before load_model");
    return hold(kSegmentBytes) ? BackendStatus::Ok() : out_of_memory();
  }
  BackendStatus training_forward() {
    if (!model_loaded_ || !inputs_created_) return breach("forward before the model and inputs");
    if (output_alive_) return breach("forward before the previous step's backward");
    if (!hold(activation_bytes())) return out_of_memory();
    output_alive_ = true;
    losses_.push_back(12.0f - static_cast<float>(losses_.size()));
    ++forwards_;
    return BackendStatus::Ok();
  }
  BackendStatus training_backward() {
    if (!output_alive_) return breach("backward without a forward");
    if (!hold(weights_total())) return out_of_memory();
    let_go(activation_bytes());
    output_alive_ = false;
    gradients_alive_ = true;
    return BackendStatus::Ok();
  }
  BackendStatus training_optimizer() {
    if (!gradients_alive_) return breach("optimizer without gradients");
    if (!optimizer_state_) {
      if (!hold(2 * weights_total())) return out_of_memory();
      optimizer_state_ = true;
    }
    let_go(weights_total());  // zero_grad(set_to_none=True)
    gradients_alive_ = false;
    return BackendStatus::Ok();
  }

  // A fresh cache for the next sequence: the cache and the token go.
  void release_sequence() {
    for (const std::uint64_t bytes : cache_blocks_) free(bytes);
    cache_blocks_.clear();
    if (token_alive_) free(rounded(static_cast<std::uint64_t>(decoder_->batch) * 8));
    token_alive_ = false;
    output_alive_ = false;
    if (sequence_forwards_ > 0) cold_sequence_ = false;
    sequence_forwards_ = 0;
  }

  // Logs the call, runs the hook, answers an injected failure, and checks the session is open.
  BackendStatus enter(const std::string& call, bool needs_open = true) {
    calls.push_back(call);
    const int occurrence = ++occurrences_[call];
    if (script_.on_call) script_.on_call(call);
    for (const auto& failure : script_.failures)
      if (failure.call == call && failure.occurrence == occurrence &&
          (failure.device_index < 0 || failure.device_index == requested_device_))
        return {failure.code, failure.message};
    if (needs_open && !opened_) return breach(call + " before open");
    return BackendStatus::Ok();
  }

  BackendStatus breach(const std::string& what) {
    contract_breaches.push_back(what);
    return {BackendStatus::Code::kFailed, "contract breach: " + what};
  }

  std::uint64_t dtype_bytes() const { return spec_.dtype == "float32" ? 4 : 2; }

  // False, changing nothing, when the reserved memory would exceed the GPU's.
  bool allocate(std::uint64_t bytes) {
    const std::uint64_t allocated = allocated_ + bytes;
    const std::uint64_t reserved =
        allocated > reserved_ ? (allocated + kSegmentBytes - 1) / kSegmentBytes * kSegmentBytes : reserved_;
    if (reserved > script_.memory_bytes) return false;
    allocated_ = allocated;
    reserved_ = reserved;
    peak_allocated_ = std::max(peak_allocated_, allocated_);
    peak_reserved_ = std::max(peak_reserved_, reserved_);
    return true;
  }
  BackendStatus out_of_memory() const {
    return {BackendStatus::Code::kOutOfMemory,
            "CUDA out of memory (Fake GPU of " + std::to_string(script_.memory_bytes) + " bytes)"};
  }
  void free(std::uint64_t bytes) { allocated_ -= bytes; }

  Script script_;
  std::map<std::string, int> occurrences_;
  WorkloadSpec spec_;
  SyntheticMlpPayload mlp_;
  std::optional<DecoderPayload> decoder_;
  int requested_device_ = -1;  // the device open() was last asked for
  bool opened_ = false, model_loaded_ = false, inputs_created_ = false;
  bool output_alive_ = false, workspace_allocated_ = false;
  bool timer_running_ = false, timer_stopped_ = false;
  int forwards_ = 0;
  // A checkpoint run: weights held, the sequence's KV cache blocks, its token, the cold
  // sequence's tokens and the report taken at close.
  std::vector<std::uint64_t> weights_allocated_, cache_blocks_;
  bool token_alive_ = false, cold_sequence_ = true;
  int sequence_forwards_ = 0;
  std::vector<std::int64_t> tokens_;
  std::optional<std::string> last_report_;  // encoded by the decoder's (or the training step's) codec
  // A training run: its payload, what its steps hold, the losses it reports.
  std::optional<TrainingPayload> training_;
  std::vector<std::uint64_t> training_held_;
  bool gradients_alive_ = false, optimizer_state_ = false;
  std::vector<float> losses_;
  std::uint64_t allocated_ = 0, reserved_ = 0, peak_allocated_ = 0, peak_reserved_ = 0;
};

}  // namespace iteragpu::testing
