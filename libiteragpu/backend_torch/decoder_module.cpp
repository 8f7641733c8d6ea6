// The decoder workload in LibTorch: a dense decoder-only checkpoint (Llama, Mistral, Qwen2,
// Qwen3) loaded from its safetensors files and run with the ATen ops transformers 5.17 runs
// for model(input_ids, past_key_values=DynamicCache(), use_cache=True, logits_to_keep=1)
// under torch.inference_mode() with attn_implementation="sdpa", then the greedy token
// (logits[:, -1, :].argmax(-1, keepdim=True)). The counterpart of the core's
// libiteragpu/src/workload/decoder_workload.cpp.
//
// Every tensor lives exactly as long as its Python name would (transformers'
// models/llama/modeling_llama.py and friends): each op is its own statement and a tensor is
// reset where Python drops its last reference, so the caching allocator sees the same
// requests and frees in the same order, and the counters are transformers'.

#include <ATen/ATen.h>
#include <torch/torch.h>
#include <torch/version.h>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "torch_workload.hpp"
#include "workload/decoder_payload.hpp"

#if ITERAGPU_BACKEND_HAS_CUDA
#include "cuda_device.hpp"
#endif

// SDPA's grouped-query path (enable_gqa) is what transformers takes; it exists from 2.5.
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 5)
#define ITERAGPU_DECODER_SUPPORTED 1
#else
#define ITERAGPU_DECODER_SUPPORTED 0
#endif

namespace iteragpu::torch_backend {
namespace {

#if ITERAGPU_DECODER_SUPPORTED

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

struct Layer {
  Tensor q_weight, q_bias, k_weight, k_bias, v_weight, v_bias, o_weight, o_bias;
  Tensor q_norm, k_norm;
  Tensor gate_weight, gate_bias, up_weight, up_bias, down_weight, down_bias;
  Tensor input_norm, post_attention_norm;
  Tensor cached_keys, cached_values;  // DynamicLayer.keys / .values; undefined before the first update
};

class DecoderModule final : public ForwardWorkload {
 public:
  DecoderModule(DecoderPayload payload, std::uint64_t seed, c10::ScalarType scalar_type, c10::Device device)
      : payload_(std::move(payload)), seed_(seed), a_(payload_.architecture), scalar_type_(scalar_type),
        device_(device) {}

  void load_model() override {
    c10::InferenceMode inference_off(false);
    torch::NoGradGuard no_grad;
    warm_up_caching_allocator();
    std::map<std::string, std::unique_ptr<MappedFile>> files;
    std::map<std::string, Tensor*> destinations = parameter_destinations();
    for (const DecoderTensor& tensor : payload_.tensors) {
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

  void create_inputs() override {
    at::Generator generator = seeded_device_generator(device_, seed_);
    input_ids_ = at::randint(0, a_.vocab_size, {payload_.batch, payload_.context}, generator,
                             at::TensorOptions().dtype(at::kLong).device(device_));
  }

  bool ready() const override { return embed_tokens_.defined() && input_ids_.defined(); }

  // The next step of the sequence: the prefill when the cache is empty, else one decode step.
  void forward() override {
    c10::InferenceMode inference;
    const bool prefill = !next_token_.defined();
    Tensor logits = causal_lm_forward(prefill ? input_ids_ : next_token_);
    Tensor next = logits.select(1, -1).argmax(-1, /*keepdim=*/true);
    next_token_ = next;  // the previous step's token is freed here, after the new one exists
    next = Tensor();
    if (first_sequence_) {
      tokens_.push_back(next_token_.select(0, 0).item<int64_t>());
      ++steps_;
      if (steps_ == payload_.new_tokens + 1) {  // the cold sequence's last decode step
        const Tensor row = logits.select(0, 0).select(0, -1).contiguous().to(at::kCPU);
        last_logits_.assign(static_cast<const char*>(row.data_ptr()), row.nbytes());
        first_sequence_ = false;
      }
    }
    logits = Tensor();  // `del out`
  }

  // A fresh cache for the next sequence (and its generated tokens go).
  void release_output() override {
    next_token_ = Tensor();
    for (Layer& layer : layers_) {
      layer.cached_keys = Tensor();
      layer.cached_values = Tensor();
    }
    if (steps_ > 0) first_sequence_ = false;
  }

  bool report(std::string& text) const override {
    DecoderRunReport report;
    report.attention_backend = "prefill " + prefill_backend_ + ", decode " + decode_backend_;
    report.first_sequence_tokens = tokens_;
    report.last_logits_bytes = last_logits_;
#if ITERAGPU_BACKEND_HAS_CUDA
    std::uint64_t free_bytes = 0, total_bytes = 0;
    cuda_memory_info(device_.index(), free_bytes, total_bytes);
    report.device_used_bytes = total_bytes - free_bytes;
#endif
    text = encode_decoder_run_report(report);
    return true;
  }

  void release() noexcept override {
    try {
      release_output();
      input_ids_ = Tensor();
      layers_.clear();
      embed_tokens_ = norm_ = lm_head_ = inv_freq_ = original_inv_freq_ = Tensor();
    } catch (...) {  // releasing tensors does not throw in practice; never unwind from here
    }
  }

  ~DecoderModule() override { release(); }

 private:
  // transformers' caching_allocator_warmup: one allocation of the parameters' bytes (those of
  // a tied weight once), freed at once, so the weights are carved from one segment.
  void warm_up_caching_allocator() {
    int64_t byte_count = 0;
    const int64_t element_bytes = static_cast<int64_t>(c10::elementSize(scalar_type_));
    for (const DecoderTensor& tensor : payload_.tensors) {
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

  int64_t rotary_dimension() const { return a_.head_dim; }

  // Where each checkpoint tensor goes, by its name.
  std::map<std::string, Tensor*> parameter_destinations() {
    std::map<std::string, Tensor*> places;
    layers_.assign(static_cast<std::size_t>(a_.layers), Layer{});
    places["model.embed_tokens.weight"] = &embed_tokens_;
    places["model.norm.weight"] = &norm_;
    places["lm_head.weight"] = &lm_head_;
    for (int64_t index = 0; index < a_.layers; ++index) {
      Layer& layer = layers_[static_cast<std::size_t>(index)];
      const std::string prefix = "model.layers." + std::to_string(index) + ".";
      auto both = [&](const std::string& name, Tensor& weight, Tensor& bias) {
        places[prefix + name + ".weight"] = &weight;
        places[prefix + name + ".bias"] = &bias;
      };
      both("self_attn.q_proj", layer.q_weight, layer.q_bias);
      both("self_attn.k_proj", layer.k_weight, layer.k_bias);
      both("self_attn.v_proj", layer.v_weight, layer.v_bias);
      both("self_attn.o_proj", layer.o_weight, layer.o_bias);
      places[prefix + "self_attn.q_norm.weight"] = &layer.q_norm;
      places[prefix + "self_attn.k_norm.weight"] = &layer.k_norm;
      both("mlp.gate_proj", layer.gate_weight, layer.gate_bias);
      both("mlp.up_proj", layer.up_weight, layer.up_bias);
      both("mlp.down_proj", layer.down_weight, layer.down_bias);
      places[prefix + "input_layernorm.weight"] = &layer.input_norm;
      places[prefix + "post_attention_layernorm.weight"] = &layer.post_attention_norm;
    }
    return places;
  }

  // compute_default_rope_parameters, or _compute_llama3_parameters, on the CPU in float32.
  Tensor inverse_frequencies() const {
    const int64_t dim = rotary_dimension();
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
  Tensor rms_norm(const Tensor& input, const Tensor& weight) const {
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

  static Tensor linear(const Tensor& input, const Tensor& weight, const Tensor& bias) {
    return bias.defined() ? at::linear(input, weight, bias) : at::linear(input, weight);
  }

  static Tensor rotate_half(const Tensor& x) {
    const int64_t half = x.size(-1) / 2;
    Tensor negated = -x.slice(-1, half);
    return at::cat({negated, x.slice(-1, 0, half)}, -1);
  }

  // (x * cos) + (rotate_half(x) * sin)
  static Tensor apply_rotary(const Tensor& x, const Tensor& cos, const Tensor& sin) {
    Tensor first = x * cos;
    Tensor rotated = rotate_half(x);
    Tensor second = rotated * sin;
    rotated = Tensor();
    return first + second;
  }

  // LlamaRotaryEmbedding.forward: cos and sin [1, positions, head_dim] in the model's dtype.
  std::pair<Tensor, Tensor> rotary(const Tensor& position_ids) const {
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
  Tensor attention(const Tensor& hidden, Layer& layer, const Tensor& cos, const Tensor& sin, bool prefill) {
    const int64_t batch = hidden.size(0), positions = hidden.size(1);
    const std::vector<int64_t> head_shape = {batch, positions, -1, a_.head_dim};
    Tensor query, key;
    if (a_.qk_norm) {
      query = rms_norm(linear(hidden, layer.q_weight, layer.q_bias).view(head_shape), layer.q_norm).transpose(1, 2);
      key = rms_norm(linear(hidden, layer.k_weight, layer.k_bias).view(head_shape), layer.k_norm).transpose(1, 2);
    } else {
      query = linear(hidden, layer.q_weight, layer.q_bias).view(head_shape).transpose(1, 2);
      key = linear(hidden, layer.k_weight, layer.k_bias).view(head_shape).transpose(1, 2);
    }
    Tensor value = linear(hidden, layer.v_weight, layer.v_bias).view(head_shape).transpose(1, 2);
    const Tensor cos_heads = cos.unsqueeze(1);
    const Tensor sin_heads = sin.unsqueeze(1);
    Tensor query_embedded = apply_rotary(query, cos_heads, sin_heads);
    Tensor key_embedded = apply_rotary(key, cos_heads, sin_heads);
    query = query_embedded;
    key = key_embedded;
    query_embedded = key_embedded = Tensor();
    // DynamicLayer.update: lazy_initialization makes empty tensors (torch.tensor([])), then
    // every update is torch.cat onto them.
    if (!layer.cached_keys.defined()) {
      layer.cached_keys = at::empty({0}, key.options());
      layer.cached_values = at::empty({0}, value.options());
    }
    layer.cached_keys = at::cat({layer.cached_keys, key}, -2);
    layer.cached_values = at::cat({layer.cached_values, value}, -2);
    key = layer.cached_keys;
    value = layer.cached_values;

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
      backend_name = sdp_backend_name(at::_fused_sdp_choice(query, sdpa_key, sdpa_value, {}, 0.0, is_causal, scale,
                                                            grouped && groups > 1));
    Tensor output = at::scaled_dot_product_attention(query, sdpa_key, sdpa_value, {}, 0.0, is_causal, scale,
                                                     grouped && groups > 1);
    output = output.transpose(1, 2).contiguous();
    sdpa_key = sdpa_value = Tensor();  // repeat_kv's copies live until sdpa_attention_forward returns
    output = output.reshape({batch, positions, -1}).contiguous();
    output = linear(output, layer.o_weight, layer.o_bias);
    return output;
  }

  static Tensor repeat_kv(const Tensor& states, int64_t groups) {
    const int64_t batch = states.size(0), heads = states.size(1), positions = states.size(2), dim = states.size(3);
    return states.unsqueeze(2).expand({batch, heads, groups, positions, dim}).reshape({batch, heads * groups, positions, dim});
  }

  // LlamaMLP.forward: down_proj(act_fn(gate_proj(x)) * up_proj(x)), act_fn = SiLU.
  static Tensor mlp(const Tensor& input, const Layer& layer) {
    Tensor gate = linear(input, layer.gate_weight, layer.gate_bias);
    Tensor activated = at::silu(gate);
    gate = Tensor();
    Tensor up = linear(input, layer.up_weight, layer.up_bias);
    Tensor product = activated * up;
    activated = up = Tensor();
    return linear(product, layer.down_weight, layer.down_bias);
  }

  // LlamaDecoderLayer.forward.
  Tensor decoder_layer(const Tensor& input, Layer& layer, const Tensor& cos, const Tensor& sin, bool prefill) {
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

  // LlamaForCausalLM.forward(input_ids, past_key_values, use_cache=True, logits_to_keep=1).
  Tensor causal_lm_forward(const Tensor& input_ids) {
    const bool prefill = !layers_.empty() && !layers_.front().cached_keys.defined();
    if (!prefill && layers_.front().cached_keys.numel() == 0) throw std::runtime_error("the KV cache is empty");
    Tensor hidden_last;
    {
      Tensor inputs_embeds = at::embedding(embed_tokens_, input_ids);
      const int64_t past_seen = prefill ? 0 : layers_.front().cached_keys.size(-2);
      Tensor position_ids = at::arange(inputs_embeds.size(1), at::TensorOptions().dtype(at::kLong).device(device_)) + past_seen;
      position_ids = position_ids.unsqueeze(0);
      auto [cos, sin] = rotary(position_ids);
      Tensor hidden = inputs_embeds;
      for (Layer& layer : layers_) {
        Tensor next = decoder_layer(hidden, layer, cos, sin, prefill);
        hidden = next;
      }
      hidden_last = rms_norm(hidden, norm_);
    }
    return linear(hidden_last.slice(1, -1), lm_head_, Tensor());
  }

  DecoderPayload payload_;
  std::uint64_t seed_;
  const DecoderArchitecture& a_;  // payload_'s
  c10::ScalarType scalar_type_;
  c10::Device device_;
  Tensor embed_tokens_, norm_, lm_head_, inv_freq_, original_inv_freq_;
  std::vector<Layer> layers_;
  Tensor input_ids_, next_token_;
  bool first_sequence_ = true;
  int steps_ = 0;
  std::vector<int64_t> tokens_;
  std::string last_logits_;
  std::string prefill_backend_, decode_backend_;
};

#endif  // ITERAGPU_DECODER_SUPPORTED

TorchWorkloadBuilder decode_decoder(const WorkloadSpec& spec, std::string& malformed) {
  DecoderPayload payload;
  malformed = decode_decoder_payload(spec.payload, payload);
  if (!malformed.empty()) return {};
  return [payload = std::move(payload), seed = spec.seed](c10::ScalarType scalar_type,
                                                          c10::Device device) -> std::unique_ptr<TorchWorkload> {
#if ITERAGPU_DECODER_SUPPORTED
    return std::make_unique<DecoderModule>(payload, seed, scalar_type, device);
#else
    (void)payload, (void)seed, (void)scalar_type, (void)device;
    throw std::runtime_error("running a checkpoint needs LibTorch 2.5 or newer (SDPA's grouped-query path); this "
                             "backend was built against LibTorch " TORCH_VERSION);
#endif
  };
}

const TorchWorkloadRegistrar kRegistered(kDecoderKind, decode_decoder);

}  // namespace
}  // namespace iteragpu::torch_backend
