#pragma once
// A fine-tuning run as PyTorch's caching allocator sees it, for the predictor: every request
// and free that the ops of libiteragpu/backend_torch/training_module.cpp make (its forward is
// decoder_model.cpp's with autograd recording, its backward the autograd engine's, its
// optimizer AdamW's foreach ops), in the same order. The two files change together.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "iteragpu/decoder_architecture.hpp"
#include "workload/workload.hpp"

namespace iteragpu {

// What a training run is: the checkpoint, the token ids' shape, the run's dtype and the
// method (full: every parameter trained; lora: PEFT adapters of `lora_rank` on the projections
// `lora_targets` names: q_proj, ..., down_proj).
struct TrainingShape {
  DecoderArchitecture architecture;
  std::vector<DecoderTensor> tensors;
  std::int64_t batch = 0, context = 0;
  std::uint64_t dtype_bytes = 0;
  bool lora = false;
  std::int64_t lora_rank = 0;
  std::vector<std::string> lora_targets;
  // model.gradient_checkpointing_enable(): each decoder layer under PyTorch's non-reentrant
  // checkpoint (libiteragpu/backend_torch/activation_checkpoint.hpp), no KV cache.
  bool gradient_checkpointing = false;
};

// The steps load_model, add_adapters, create_inputs, forward, backward and optimizer.
std::unique_ptr<StepAllocations> training_step_allocations(const TrainingShape& shape);

// The rules above, in words, for a prediction's text and JSON.
std::vector<std::string> training_allocation_rules();

}  // namespace iteragpu
