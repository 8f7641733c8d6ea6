// The decoder model in LibTorch (decoder_model.hpp): transformers 5.17's LlamaForCausalLM with
// attn_implementation="sdpa" (Mistral, Qwen2 and Qwen3 run the same ops; Qwen3 adds q/k norms),
// and PEFT's lora.Linear where adapters are set.

#include "decoder_model.hpp"

#include "activation_checkpoint.hpp"

#if ITERAGPU_DECODER_SUPPORTED

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <stdexcept>

#if ITERAGPU_BACKEND_HAS_CUDA
#include "cuda_device.hpp"
#endif

namespace iteragpu::torch_backend {
namespace {

using at::Tensor;

// A safetensors shard mapped read-only: tensors are copied from the page cache to the device
// one by one, never gathered in host memory.
class MappedFile {
 public:
  explicit MappedFile(const std::string& path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) throw std::runtime_error(path + ": cannot be opened for reading");
    struct stat info {};
    if (::fstat(fd, &info) != 0 || info.st_size <= 0) {
      ::close(fd);
      throw std::runtime_error(path + ": cannot read its size");
    }
    size_ = static_cast<std::size_t>(info.st_size);
    data_ = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
    ::close(fd);
    if (data_ == MAP_FAILED) throw std::runtime_error(path + ": cannot be mapped");
  }
  ~MappedFile() { ::munmap(data_, size_); }
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  const char* bytes() const { return static_cast<const char*>(data_); }
  std::size_t size() const { return size_; }

 private:
  void* data_ = nullptr;
  std::size_t size_ = 0;
};

c10::ScalarType file_scalar_type(const std::string& dtype) {
  if (dtype == "BF16") return c10::ScalarType::BFloat16;
  if (dtype == "F16") return c10::ScalarType::Half;
  if (dtype == "F32") return c10::ScalarType::Float;
  throw std::runtime_error("safetensors dtype " + dtype + " is not loadable");
}

const char* sdp_backend_name(int64_t choice) {
  switch (choice) {
    case 0: return "math";
    case 1: return "flash_attention";
    case 2: return "efficient_attention";
    case 3: return "cudnn_attention";
    case 4: return "overrideable";
    default: return "none";
  }
}

// x1 = x[..., : d // 2]; x2 = x[..., d // 2 :]; torch.cat((-x2, x1), dim=-1). The views in
// transformers' order: under autograd the engine runs nodes made later first, so their order
// decides which gradient buffer the backward frees and reuses first.
Tensor rotate_half(const Tensor& x) {
  const int64_t half = x.size(-1) / 2;
  const Tensor x1 = x.slice(-1, 0, half);
  const Tensor x2 = x.slice(-1, half);
  Tensor negated = -x2;
  return at::cat({negated, x1}, -1);
}

// (x * cos) + (rotate_half(x) * sin)
Tensor apply_rotary(const Tensor& x, const Tensor& cos, const Tensor& sin) {
  Tensor first = x * cos;
  Tensor rotated = rotate_half(x);
  Tensor second = rotated * sin;
  rotated = Tensor();
  return first + second;
}

Tensor repeat_kv(const Tensor& states, int64_t groups) {
  const int64_t batch = states.size(0), heads = states.size(1), positions = states.size(2), dim = states.size(3);
  return states.unsqueeze(2).expand({batch, heads, groups, positions, dim}).reshape({batch, heads * groups, positions, dim});
}

}  // namespace

DecoderModel::DecoderModel(const DecoderArchitecture& architecture, const std::vector<DecoderTensor>& tensors,
                           c10::ScalarType scalar_type, c10::Device device)
    : a_(architecture), tensors_(tensors), scalar_type_(scalar_type), device_(device) {}

void DecoderModel::load_weights() {
  c10::InferenceMode inference_off(false);
  torch::NoGradGuard no_grad;
  warm_up_caching_allocator();
  std::map<std::string, std::unique_ptr<MappedFile>> files;
  std::map<std::string, Tensor*> destinations;
  for (auto& place : parameter_places()) destinations[place.first] = place.second;
  for (const DecoderTensor& tensor : tensors_) {
    std::unique_ptr<MappedFile>& file = files[tensor.file];
    if (!file) file = std::make_unique<MappedFile>(tensor.file);
    if (tensor.offset + tensor.bytes > file->size())
      throw std::runtime_error(tensor.file + ": tensor " + tensor.name + " lies beyond the end of the file");
    const auto found = destinations.find(tensor.name);
    if (found == destinations.end()) throw std::runtime_error("tensor " + tensor.name + " has no place in the model");
    // safetensor slice[...] is a CPU tensor over the mapped bytes; .to(device, dtype) as
    // transformers' _materialize_copy does.
    Tensor host = at::from_blob(const_cast<char*>(file->bytes() + tensor.offset), tensor.shape,
                                at::TensorOptions().dtype(file_scalar_type(tensor.dtype)));
    *found->second = host.to(device_, scalar_type_);
  }
  // transformers' weights are nn.Parameters, whose requires_grad stays true under
  // inference_mode, and ATen reads it: matmul folds a 3-D input into one GEMM when the weight
  // requires grad (should_fold in ATen's LinearAlgebra.cpp). The prefill's lm_head input, the
  // last position sliced from [batch, positions, hidden], is strided, so only that flag makes
  // it one GEMM as in transformers; without it ATen runs a batched GEMM, another cuBLAS
  // kernel (on an H100 at 4 × 2,048: 731 µs against transformers' 195 µs).
  for (auto& destination : destinations)
    if (destination.second->defined()) destination.second->requires_grad_(true);
  if (a_.tie_word_embeddings) lm_head_ = embed_tokens_;
  // The rotary buffers, inv_freq and original_inv_freq: empty on the device, then filled
  // from the CPU computation, as _move_missing_keys_from_meta_to_device and _init_weights do.
  const Tensor computed = inverse_frequencies();
  inv_freq_ = at::empty_like(computed, at::TensorOptions().device(device_));
  original_inv_freq_ = at::empty_like(computed, at::TensorOptions().device(device_));
  inv_freq_.copy_(computed);
  original_inv_freq_.copy_(computed);
}

std::vector<Tensor> DecoderModel::base_parameters() const {
  std::vector<Tensor> parameters;
  auto add = [&](const Tensor& tensor) {
    if (tensor.defined()) parameters.push_back(tensor);
  };
  add(embed_tokens_);
  for (const DecoderLayer& layer : layers_) {
    for (const Projection* projection : {&layer.q, &layer.k, &layer.v, &layer.o}) {
      add(projection->weight);
      add(projection->bias);
    }
    add(layer.q_norm);
    add(layer.k_norm);
    for (const Projection* projection : {&layer.gate, &layer.up, &layer.down}) {
      add(projection->weight);
      add(projection->bias);
    }
    add(layer.input_norm);
    add(layer.post_attention_norm);
  }
  add(norm_);
  if (!a_.tie_word_embeddings) add(lm_head_);
  return parameters;
}

void DecoderModel::clear_cache() {
  for (auto layer = layers_.rbegin(); layer != layers_.rend(); ++layer) {
    layer->cached_keys = Tensor();
    layer->cached_values = Tensor();
  }
}

void DecoderModel::release() {
  clear_cache();
  layers_.clear();
  embed_tokens_ = norm_ = lm_head_ = inv_freq_ = original_inv_freq_ = Tensor();
}

// transformers' caching_allocator_warmup: one allocation of the parameters' bytes (those of
// a tied weight once), freed at once, so the weights are carved from one segment.
void DecoderModel::warm_up_caching_allocator() {
  int64_t byte_count = 0;
  const int64_t element_bytes = static_cast<int64_t>(c10::elementSize(scalar_type_));
  for (const DecoderTensor& tensor : tensors_) {
    int64_t elements = 1;
    for (int64_t dimension : tensor.shape) elements *= dimension;
    byte_count += elements * element_bytes;
  }
#if ITERAGPU_BACKEND_HAS_CUDA
  std::uint64_t free_bytes = 0, total_bytes = 0;
  cuda_memory_info(device_.index(), free_bytes, total_bytes);
  const AllocatorCounters counters = cuda_allocator_counters(device_.index());
  const auto unused = static_cast<int64_t>(counters.reserved_bytes - counters.allocated_bytes);
  double count = static_cast<double>(byte_count);
  if (byte_count - unused > unused) {
    count = static_cast<double>(byte_count - unused);
  } else if (static_cast<double>(byte_count - unused) > 1.5 * 1024 * 1024 * 1024) {
    count = static_cast<double>(unused) + 1 > static_cast<double>(free_bytes) ? 0 : static_cast<double>(unused + 1);
  } else {
    count = 0;
  }
  count = std::min(count, static_cast<double>(total_bytes) - 1.2 * 1024 * 1024 * 1024);
  Tensor warmup = at::empty({static_cast<int64_t>(std::floor(count / 2))},
                            at::TensorOptions().dtype(at::kHalf).device(device_));
#endif
}

// Where each checkpoint tensor goes, by its name.
std::vector<std::pair<std::string, Tensor*>> DecoderModel::parameter_places() {
  std::vector<std::pair<std::string, Tensor*>> places;
  layers_.assign(static_cast<std::size_t>(a_.layers), DecoderLayer{});
  places.emplace_back("model.embed_tokens.weight", &embed_tokens_);
  places.emplace_back("model.norm.weight", &norm_);
  places.emplace_back("lm_head.weight", &lm_head_);
  for (int64_t index = 0; index < a_.layers; ++index) {
    DecoderLayer& layer = layers_[static_cast<std::size_t>(index)];
    const std::string prefix = "model.layers." + std::to_string(index) + ".";
    auto both = [&](const std::string& name, Projection& projection) {
      places.emplace_back(prefix + name + ".weight", &projection.weight);
      places.emplace_back(prefix + name + ".bias", &projection.bias);
    };
    both("self_attn.q_proj", layer.q);
    both("self_attn.k_proj", layer.k);
    both("self_attn.v_proj", layer.v);
    both("self_attn.o_proj", layer.o);
    places.emplace_back(prefix + "self_attn.q_norm.weight", &layer.q_norm);
    places.emplace_back(prefix + "self_attn.k_norm.weight", &layer.k_norm);
    both("mlp.gate_proj", layer.gate);
    both("mlp.up_proj", layer.up);
    both("mlp.down_proj", layer.down);
    places.emplace_back(prefix + "input_layernorm.weight", &layer.input_norm);
    places.emplace_back(prefix + "post_attention_layernorm.weight", &layer.post_attention_norm);
  }
  return places;
}

// compute_default_rope_parameters, or _compute_llama3_parameters, on the CPU in float32.
Tensor DecoderModel::inverse_frequencies() const {
  const int64_t dim = a_.head_dim;
  Tensor exponent = at::arange(0, dim, 2, at::TensorOptions().dtype(at::kLong)).to(at::kFloat) / static_cast<double>(dim);
  Tensor inv_freq = at::pow(a_.rope_theta, exponent).reciprocal() * 1.0;  // 1.0 / (base ** x)
  if (a_.rope_type != "llama3") return inv_freq;
  const double factor = a_.rope_factor;
  const double low_freq_factor = a_.rope_low_freq_factor;
  const double high_freq_factor = a_.rope_high_freq_factor;
  const auto old_context_len = static_cast<double>(a_.rope_original_max_position_embeddings);
  const double low_freq_wavelen = old_context_len / low_freq_factor;
  const double high_freq_wavelen = old_context_len / high_freq_factor;
  Tensor wavelen = inv_freq.reciprocal() * (2 * M_PI);  // 2 * math.pi / inv_freq
  Tensor inv_freq_llama = at::where(wavelen > low_freq_wavelen, inv_freq / factor, inv_freq);
  Tensor smooth_factor = (wavelen.reciprocal() * old_context_len - low_freq_factor) / (high_freq_factor - low_freq_factor);
  Tensor smoothed_inv_freq = at::rsub(smooth_factor, 1) * inv_freq_llama / factor + smooth_factor * inv_freq_llama;
  Tensor is_medium_freq = (~(wavelen < high_freq_wavelen)) * (~(wavelen > low_freq_wavelen));
  return at::where(is_medium_freq, smoothed_inv_freq, inv_freq_llama);
}

// LlamaRMSNorm.forward (Qwen2RMSNorm, Qwen3RMSNorm are the same code).
Tensor DecoderModel::rms_norm(const Tensor& input, const Tensor& weight) const {
  const c10::ScalarType input_dtype = input.scalar_type();
  Tensor hidden = input.to(at::kFloat);
  Tensor squared = hidden.pow(2);
  Tensor variance = squared.mean(-1, /*keepdim=*/true);
  squared = Tensor();
  Tensor shifted = variance + a_.rms_norm_eps;
  Tensor scale = at::rsqrt(shifted);
  shifted = Tensor();
  hidden = hidden * scale;
  scale = Tensor();
  Tensor narrowed = hidden.to(input_dtype);
  Tensor output = weight * narrowed;
  return output;  // narrowed, hidden, variance go here
}

// nn.Linear.forward, or PEFT's lora.Linear.forward when the projection has an adapter:
// result = base_layer(x); x = x.to(lora_A.weight.dtype);
// result = result + lora_B(lora_A(dropout(x))) * scaling (dropout 0: nn.Identity);
// result = result.to(the base result's dtype).
Tensor DecoderModel::linear(const Tensor& input, const Projection& projection) const {
  Tensor result = projection.bias.defined() ? at::linear(input, projection.weight, projection.bias)
                                            : at::linear(input, projection.weight);
  if (!projection.lora_a.defined()) return result;
  const c10::ScalarType result_dtype = result.scalar_type();
  const Tensor x = input.scalar_type() == projection.lora_a.scalar_type() ? input
                                                                          : input.to(projection.lora_a.scalar_type());
  Tensor down = at::linear(x, projection.lora_a);
  Tensor up = at::linear(down, projection.lora_b);
  down = Tensor();
  Tensor scaled = up * projection.lora_scaling;
  up = Tensor();
  Tensor sum = result + scaled;
  scaled = Tensor();
  result = sum;
  sum = Tensor();
  Tensor narrowed = result.to(result_dtype);
  result = narrowed;
  return result;
}

// LlamaRotaryEmbedding.forward: cos and sin [1, positions, head_dim] in the model's dtype.
std::pair<Tensor, Tensor> DecoderModel::rotary(const Tensor& position_ids) const {
  Tensor inv_freq_expanded = inv_freq_.unsqueeze(0).unsqueeze(2).expand({position_ids.size(0), -1, 1});
  inv_freq_expanded = inv_freq_expanded.to(at::TensorOptions().dtype(at::kFloat).device(device_));
  Tensor position_ids_expanded = position_ids.unsqueeze(1).to(at::kFloat);
  Tensor freqs = at::matmul(inv_freq_expanded, position_ids_expanded).transpose(1, 2);
  Tensor emb = at::cat({freqs, freqs}, -1);
  Tensor cos = emb.cos();
  cos = cos * 1.0;  // attention_scaling: 1.0 for the default and llama3 rope types
  Tensor sin = emb.sin();
  sin = sin * 1.0;
  Tensor cos_out = cos.to(scalar_type_);
  Tensor sin_out = sin.to(scalar_type_);
  return {cos_out, sin_out};
}

// LlamaAttention.forward (Qwen3: q_norm, k_norm on the head dimension) with
// sdpa_attention_forward and DynamicLayer.update.
Tensor DecoderModel::attention(const Tensor& hidden, DecoderLayer& layer, const Tensor& cos, const Tensor& sin,
                               bool prefill) {
  const int64_t batch = hidden.size(0), positions = hidden.size(1);
  const std::vector<int64_t> head_shape = {batch, positions, -1, a_.head_dim};
  Tensor query, key;
  if (a_.qk_norm) {
    query = rms_norm(linear(hidden, layer.q).view(head_shape), layer.q_norm).transpose(1, 2);
    key = rms_norm(linear(hidden, layer.k).view(head_shape), layer.k_norm).transpose(1, 2);
  } else {
    query = linear(hidden, layer.q).view(head_shape).transpose(1, 2);
    key = linear(hidden, layer.k).view(head_shape).transpose(1, 2);
  }
  Tensor value = linear(hidden, layer.v).view(head_shape).transpose(1, 2);
  const Tensor cos_heads = cos.unsqueeze(1);
  const Tensor sin_heads = sin.unsqueeze(1);
  Tensor query_embedded = apply_rotary(query, cos_heads, sin_heads);
  Tensor key_embedded = apply_rotary(key, cos_heads, sin_heads);
  query = query_embedded;
  key = key_embedded;
  query_embedded = key_embedded = Tensor();
  // DynamicLayer.update: lazy_initialization makes empty tensors (torch.tensor([])), then
  // every update is torch.cat onto them. Without a cache (gradient checkpointing) the keys and
  // values are used as they are.
  if (!gradient_checkpointing_) {
    if (!layer.cached_keys.defined()) {
      layer.cached_keys = at::empty({0}, key.options());
      layer.cached_values = at::empty({0}, value.options());
    }
    layer.cached_keys = at::cat({layer.cached_keys, key}, -2);
    layer.cached_values = at::cat({layer.cached_values, value}, -2);
    key = layer.cached_keys;
    value = layer.cached_values;
  }

  const int64_t groups = a_.attention_heads / a_.kv_heads;
  const bool grouped = groups > 1 && key.size(-1) == value.size(-1) && key.size(-1) <= 256;
  Tensor sdpa_key = key, sdpa_value = value;
  if (groups > 1 && !grouped) {  // repeat_kv
    sdpa_key = repeat_kv(key, groups);
    sdpa_value = repeat_kv(value, groups);
  }
  const bool is_causal = query.size(2) > 1;
  const double scale = std::pow(static_cast<double>(a_.head_dim), -0.5);
  std::string& backend_name = prefill ? prefill_backend_ : decode_backend_;
  if (backend_name.empty())
    backend_name = sdp_backend_name(
        at::_fused_sdp_choice(query, sdpa_key, sdpa_value, {}, 0.0, is_causal, scale, grouped && groups > 1));
  Tensor output =
      at::scaled_dot_product_attention(query, sdpa_key, sdpa_value, {}, 0.0, is_causal, scale, grouped && groups > 1);
  output = output.transpose(1, 2).contiguous();
  sdpa_key = sdpa_value = Tensor();  // repeat_kv's copies live until sdpa_attention_forward returns
  output = output.reshape({batch, positions, -1}).contiguous();
  output = linear(output, layer.o);
  return output;
}

// LlamaMLP.forward: down_proj(act_fn(gate_proj(x)) * up_proj(x)), act_fn = SiLU.
Tensor DecoderModel::mlp(const Tensor& input, const DecoderLayer& layer) const {
  Tensor gate = linear(input, layer.gate);
  Tensor activated = at::silu(gate);
  gate = Tensor();
  Tensor up = linear(input, layer.up);
  Tensor product = activated * up;
  activated = up = Tensor();
  return linear(product, layer.down);
}

// LlamaDecoderLayer.forward.
Tensor DecoderModel::decoder_layer(const Tensor& input, DecoderLayer& layer, const Tensor& cos, const Tensor& sin,
                                   bool prefill) {
  Tensor normed = rms_norm(input, layer.input_norm);
  Tensor attended = attention(normed, layer, cos, sin, prefill);
  normed = Tensor();
  Tensor residual = input + attended;
  attended = Tensor();
  normed = rms_norm(residual, layer.post_attention_norm);
  Tensor transformed = mlp(normed, layer);
  normed = Tensor();
  return residual + transformed;  // transformed, then residual, go here
}

Tensor DecoderModel::hidden_states(const Tensor& input_ids) {
  const bool prefill = cache_empty();
  if (!prefill && layers_.front().cached_keys.numel() == 0) throw std::runtime_error("the KV cache is empty");
  Tensor inputs_embeds = at::embedding(embed_tokens_, input_ids);
  // gradient_checkpointing_enable() calls enable_input_require_grads() for every model whose
  // main input is input_ids: a forward hook on the embedding does output.requires_grad_(True).
  // With a frozen table (LoRA) the output becomes a leaf that requires grad, so layer 0's input
  // gradient is computed and kept as its .grad until the graph goes.
  if (gradient_checkpointing_) inputs_embeds.requires_grad_(true);
  const int64_t past_seen = prefill ? 0 : layers_.front().cached_keys.size(-2);
  Tensor position_ids =
      at::arange(inputs_embeds.size(1), at::TensorOptions().dtype(at::kLong).device(device_)) + past_seen;
  position_ids = position_ids.unsqueeze(0);
  if (gradient_checkpointing_) check_single_sequences(position_ids, inputs_embeds.size(0));
  auto [cos, sin] = rotary(position_ids);
  Tensor hidden = inputs_embeds;
  for (DecoderLayer& layer : layers_) {
    Tensor next;
    if (gradient_checkpointing_) {
      // GradientCheckpointingLayer: checkpoint(partial(layer, position_embeddings=..., position_ids=...),
      // hidden_states); the partial keeps cos, sin and the position ids until the checkpoint goes.
      next = checkpoint(
          [this, &layer, cos = cos, sin = sin, position_ids](const Tensor& input) {
            (void)position_ids;  // kept, not read: the layer's rotary embedding is cos and sin
            return decoder_layer(input, layer, cos, sin, /*prefill=*/true);
          },
          hidden);
    } else {
      next = decoder_layer(hidden, layer, cos, sin, prefill);
    }
    hidden = next;
  }
  return rms_norm(hidden, norm_);
}

void DecoderModel::enable_gradient_checkpointing() {
  install_checkpointing_engine();
  gradient_checkpointing_ = true;
}

// create_causal_mask without a cache: masking_utils.find_packed_sequence_indices, whose every
// op allocates on the device. Each row of the token ids is one sequence, so the mask stays
// None (SDPA's is_causal). The [1, positions] ids are first expanded to the batch, as
// _preprocess_mask_arguments does: with several rows every op then runs on a stride-0 view and
// the cumsum takes the row-wise scan instead of CUB's, other kernels and other blocks.
void DecoderModel::check_single_sequences(const Tensor& unsqueezed_position_ids, int64_t batch) const {
  const Tensor position_ids = unsqueezed_position_ids.size(0) == batch
                                  ? unsqueezed_position_ids
                                  : unsqueezed_position_ids.expand({batch, -1});
  Tensor first_dummy_value = position_ids.slice(1, 0, 1) - 1;
  Tensor position_diff = at::diff(position_ids, 1, -1, first_dummy_value);
  Tensor packed_sequence_mask = position_diff.ne(1).cumsum(-1);
  if (!packed_sequence_mask.select(1, -1).eq(0).all().item<bool>())
    throw std::logic_error("the position ids of one row hold several sequences");
}

// hidden_states[:, slice(-logits_to_keep, None), :]: the last position, or for 0 the whole
// tensor (Python's indexing returns a full slice as the tensor itself, with no op).
Tensor DecoderModel::logits(const Tensor& hidden, LogitsKept kept) const {
  if (kept == LogitsKept::kLast) return at::linear(hidden.slice(1, -1), lm_head_);
  return at::linear(hidden, lm_head_);
}

}  // namespace iteragpu::torch_backend

#endif  // ITERAGPU_DECODER_SUPPORTED
