#pragma once
// The training step's payload (WorkloadSpec::payload) and its run report
// (Backend::run_report): the payload written by its core side and read by its plugin module
// (backend_torch/training_module.cpp), the report written by the module and read back, with
// this one codec.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "iteragpu/decoder_architecture.hpp"

namespace iteragpu {

// The name the training step is registered under (WorkloadSpec::kind).
inline constexpr const char* kTrainingKind = "training";

// Fine-tuning steps of a checkpoint as a user's own PyTorch loop runs them with transformers
// and PEFT: the weights loaded, for LoRA the adapters added, token ids [batch, context], then
// per step forward (labels = the ids), backward, AdamW's step and zero_grad(set_to_none=True).
struct TrainingPayload {
  std::int64_t batch = 1, context = 16;
  std::string method = "full";  // full | lora
  int lora_rank = 16;
  double lora_alpha = 32;
  // The projections LoRA adapts, by their module names, comma-separated ("q_proj,k_proj").
  std::string lora_targets;
  // model.gradient_checkpointing_enable() before the steps (transformers' default: PyTorch's
  // non-reentrant checkpoint around each decoder layer, and no KV cache).
  bool gradient_checkpointing = false;
  DecoderArchitecture architecture;
  std::vector<DecoderTensor> tensors;  // in load order
};

// What the steps produced besides the counters.
struct TrainingRunReport {
  std::string attention_backend;  // the SDPA kernels PyTorch chose for the forward
  // Each step's loss as the float32 PyTorch computed, its bytes in step order.
  std::string losses_float32;
  std::uint64_t parameters = 0;            // every parameter, adapters included
  std::uint64_t trainable_parameters = 0;  // those the optimizer updates
  // Device memory in use as the driver reports it (cudaMemGetInfo total − free).
  std::optional<std::uint64_t> device_used_bytes;
};

std::string encode_training_payload(const TrainingPayload& payload);
// "" when `text` is a payload of a positive batch and context, a known method and, for LoRA,
// a positive rank and at least one target, else why not in one line.
std::string decode_training_payload(const std::string& text, TrainingPayload& payload);

std::string encode_training_run_report(const TrainingRunReport& report);
// "" when `text` is a run report, else why not in one line.
std::string decode_training_run_report(const std::string& text, TrainingRunReport& report);

}  // namespace iteragpu
