#pragma once
// A dense decoder-only checkpoint (Llama, Mistral, Qwen2, Qwen3) in LibTorch, as transformers
// 5.17 builds and runs it with attn_implementation="sdpa": its weights read from the
// safetensors files and LlamaForCausalLM.forward with a DynamicCache, with the ATen ops
// transformers runs (models/llama/modeling_llama.py and friends). Shared by the inference
// decoder (decoder_module.cpp: prefill and decode steps under inference mode) and the training
// step (training_module.cpp: the same forward with autograd recording, and PEFT's LoRA
// adapters on the projections when it adds them).
//
// Every tensor lives exactly as long as its Python name would: each op is its own statement
// and a tensor is reset where Python drops its last reference, so the caching allocator sees
// the same requests and frees in the same order, and the counters are transformers'. Under
// autograd a tensor an op saves for the backward lives on in the graph, as in Python.

#include <ATen/ATen.h>
#include <torch/torch.h>
#include <torch/version.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "iteragpu/decoder_architecture.hpp"
#include "torch_workload.hpp"

// SDPA's grouped-query path (enable_gqa) is what transformers takes; it exists from 2.5.
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 5)
#define ITERAGPU_DECODER_SUPPORTED 1
#else
#define ITERAGPU_DECODER_SUPPORTED 0
#endif

#if ITERAGPU_DECODER_SUPPORTED

namespace iteragpu::torch_backend {

// An nn.Linear of a decoder layer, and the LoRA adapter PEFT may put on it (lora.Linear).
struct Projection {
  at::Tensor weight, bias;    // bias undefined without one
  at::Tensor lora_a, lora_b;  // lora_A.default.weight [r, in], lora_B.default.weight [out, r]
  double lora_scaling = 0;    // lora_alpha / r
};

struct DecoderLayer {
  Projection q, k, v, o, gate, up, down;
  at::Tensor q_norm, k_norm;  // Qwen3 only
  at::Tensor input_norm, post_attention_norm;
  at::Tensor cached_keys, cached_values;  // DynamicLayer.keys / .values; undefined before the first update
};

// Which positions' logits a forward computes: logits_to_keep=1 (generation) or 0 (every
// position: a training step's loss).
enum class LogitsKept { kLast, kAll };

class DecoderModel {
 public:
  // `architecture` and `tensors` (a payload's) outlive the model.
  DecoderModel(const DecoderArchitecture& architecture, const std::vector<DecoderTensor>& tensors,
               c10::ScalarType scalar_type, c10::Device device);

  // from_pretrained's allocations: the caching allocator warm-up, each tensor copied from the
  // mapped file to the device in file order, the rotary buffers. Every weight requires grad,
  // as an nn.Parameter does.
  void load_weights();
  bool loaded() const { return embed_tokens_.defined(); }

  // LlamaModel.forward(input_ids, past_key_values=the cache, use_cache=True): the last
  // hidden states, normed. The cache grows by the input's positions; an empty cache makes
  // this a prefill. With gradient checkpointing there is no cache (use_cache=False) and every
  // forward is a prefill.
  at::Tensor hidden_states(const at::Tensor& input_ids);
  // model.gradient_checkpointing_enable(): from then on each decoder layer of a forward with
  // grad on runs under torch.utils.checkpoint (activation_checkpoint.hpp), and use_cache is off.
  void enable_gradient_checkpointing();
  // LlamaForCausalLM's lm_head over hidden_states[:, slice(-logits_to_keep, None), :]. The
  // caller keeps `hidden` alive for as long as LlamaForCausalLM.forward's `outputs` holds it:
  // until its loss is computed.
  at::Tensor logits(const at::Tensor& hidden, LogitsKept kept) const;
  // A new DynamicCache: the old one's tensors freed as Python frees a list of layers
  // (the last layer first), each layer's keys before its values.
  void clear_cache();
  bool cache_empty() const { return layers_.empty() || !layers_.front().cached_keys.defined(); }

  // The parameters in model.parameters() order (a tied lm_head once), adapters excluded.
  std::vector<at::Tensor> base_parameters() const;
  std::vector<DecoderLayer>& layers() { return layers_; }
  const DecoderArchitecture& architecture() const { return a_; }
  c10::ScalarType scalar_type() const { return scalar_type_; }
  c10::Device device() const { return device_; }
  // The SDPA kernels PyTorch chose for the first prefill and the first decode step ("" before).
  const std::string& prefill_backend() const { return prefill_backend_; }
  const std::string& decode_backend() const { return decode_backend_; }

  // Frees every tensor (they go back to the caching allocator).
  void release();

 private:
  void warm_up_caching_allocator();
  std::vector<std::pair<std::string, at::Tensor*>> parameter_places();
  at::Tensor inverse_frequencies() const;
  at::Tensor rms_norm(const at::Tensor& input, const at::Tensor& weight) const;
  at::Tensor linear(const at::Tensor& input, const Projection& projection) const;
  std::pair<at::Tensor, at::Tensor> rotary(const at::Tensor& position_ids) const;
  at::Tensor attention(const at::Tensor& hidden, DecoderLayer& layer, const at::Tensor& cos, const at::Tensor& sin,
                       bool prefill);
  at::Tensor mlp(const at::Tensor& input, const DecoderLayer& layer) const;
  at::Tensor decoder_layer(const at::Tensor& input, DecoderLayer& layer, const at::Tensor& cos, const at::Tensor& sin,
                           bool prefill);
  void check_single_sequences(const at::Tensor& unsqueezed_position_ids, int64_t batch) const;

  const DecoderArchitecture& a_;
  const std::vector<DecoderTensor>& tensors_;  // in load order
  c10::ScalarType scalar_type_;
  c10::Device device_;
  at::Tensor embed_tokens_, norm_, lm_head_, inv_freq_, original_inv_freq_;
  std::vector<DecoderLayer> layers_;
  std::string prefill_backend_, decode_backend_;
  bool gradient_checkpointing_ = false;
};

}  // namespace iteragpu::torch_backend

#else  // !ITERAGPU_DECODER_SUPPORTED

namespace iteragpu::torch_backend {

// What a checkpoint's modules (inference, training) are where LibTorch is older than 2.5:
// opening one says why it cannot run.
template <typename Payload>
class CheckpointModuleUnsupported final : public TorchWorkload {
 public:
  CheckpointModuleUnsupported(const Payload&, std::uint64_t, c10::ScalarType, c10::Device) {
    throw std::runtime_error("a checkpoint needs LibTorch 2.5 or newer (SDPA's grouped-query path); this backend "
                             "was built against LibTorch " TORCH_VERSION);
  }
  bool run_step(const std::string&) override { return false; }
  void release_output() override {}
  void release() noexcept override {}
};

}  // namespace iteragpu::torch_backend

#endif  // ITERAGPU_DECODER_SUPPORTED
