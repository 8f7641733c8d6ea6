// The decoder workload's ops as allocations (see decoder_allocations.hpp). Each function here
// mirrors the function of decoder_module.cpp with the same name; a tensor is freed where the
// module resets it or where it goes out of scope. Frees made one after another need no exact
// order (merging free neighbours gives the same pools whatever the order); a free between two
// requests does.
//
// Checked against the H200 (torch 2.11, cuDNN attention): every counter of a Llama-3-8B-like
// checkpoint at 4 × 4,096 (70 rows), and the peak reserved of the other recorded cells.

#include "workload/decoder_allocations.hpp"

#include <optional>
#include <utility>

#include "mechanics/checked_count.hpp"

namespace iteragpu {
namespace {

using Block = AllocationRecorder::Block;
constexpr std::uint64_t kFloat32 = 4, kInt64 = 8;
// Every size below is a CheckedCount: a product of configuration values never wraps.
using Count = CheckedCount;

class DecoderForwards final : public ForwardAllocations {
 public:
  DecoderForwards(const DecoderArchitecture& architecture, std::int64_t batch, std::int64_t context,
                  std::uint64_t dtype_bytes)
      : a_(architecture),
        batch_(static_cast<std::uint64_t>(batch)),
        context_(static_cast<std::uint64_t>(context)),
        e_(dtype_bytes) {}

  // causal_lm_forward, then the greedy token: forward() in the module.
  void forward(AllocationRecorder& allocator) override {
    r_ = &allocator;
    const bool prefill = cache_.empty();
    if (prefill) cache_.assign(static_cast<std::size_t>(a_.layers), LayerCache{});
    const Count positions = prefill ? context_ : Count(1);
    const Count rows = batch_ * positions;
    const Count hidden = u(a_.hidden_size), head_dim = u(a_.head_dim);

    const Block inputs_embeds = take(rows * hidden * e_);
    const Block arange = take(positions * kInt64);
    const Block position_ids = take(positions * kInt64);  // arange(positions) + past_seen
    drop(arange);
    // rotary(): float32 frequencies, cos and sin in the model's dtype.
    const Block positions_float = take(positions * kFloat32);
    const Block freqs = gemm(head_dim / 2 * positions * kFloat32, false);
    const Block emb = take(positions * head_dim * kFloat32);
    const Block cos_float = take(positions * head_dim * kFloat32);
    const Block cos_scaled = take(positions * head_dim * kFloat32);
    drop(cos_float);
    const Block sin_float = take(positions * head_dim * kFloat32);
    const Block sin_scaled = take(positions * head_dim * kFloat32);
    drop(sin_float);
    const Block cos = take(positions * head_dim * e_);
    const Block sin = take(positions * head_dim * e_);
    drop(cos_scaled), drop(sin_scaled), drop(emb), drop(freqs), drop(positions_float);

    Block hidden_states = inputs_embeds;
    for (std::size_t layer = 0; layer < cache_.size(); ++layer) {
      const Block next = decoder_layer(rows, positions, cache_[layer]);
      if (hidden_states != inputs_embeds) drop(hidden_states);
      hidden_states = next;
    }
    const Block hidden_last = rms_norm(rows, hidden);
    if (hidden_states != inputs_embeds) drop(hidden_states);
    drop(cos), drop(sin), drop(position_ids), drop(inputs_embeds);
    const Block logits = gemm(batch_ * u(a_.vocab_size) * e_, false);  // the last position only
    drop(hidden_last);
    const Block token = take(batch_ * kInt64);  // argmax(-1, keepdim=True)
    if (token_) drop(*token_);
    token_ = token;
    drop(logits);
    cached_positions_ += positions;
  }

  // A fresh cache for the next sequence: the last token and every layer's keys and values go.
  void release_output(AllocationRecorder& allocator) override {
    r_ = &allocator;
    if (token_) drop(*token_);
    token_.reset();
    for (const LayerCache& layer : cache_) {
      if (layer.keys) drop(*layer.keys);
      if (layer.values) drop(*layer.values);
    }
    cache_.clear();
    cached_positions_ = Count(0);
  }

 private:
  struct LayerCache {
    std::optional<Block> keys, values;  // none before the first update (torch.tensor([]))
  };

  static Count u(std::int64_t value) { return Count(static_cast<std::uint64_t>(value)); }
  Block take(Count bytes) { return r_->allocate(bytes.value()); }
  void drop(Block block) { r_->free(block); }
  Block gemm(Count output_bytes, bool bias) {
    const Block output = take(output_bytes);
    r_->gemm_workspaces(bias);
    return output;
  }

  // LlamaRMSNorm over `width`, for `rows` rows: float32 copies, the variance, the output.
  Block rms_norm(Count rows, Count width) {
    const Block hidden = take(rows * width * kFloat32);
    const Block squared = take(rows * width * kFloat32);
    const Block variance = take(rows * kFloat32);
    drop(squared);
    const Block shifted = take(rows * kFloat32);
    const Block scale = take(rows * kFloat32);
    drop(shifted);
    const Block scaled = take(rows * width * kFloat32);
    drop(hidden), drop(scale);
    const Block narrowed = take(rows * width * e_);
    const Block output = take(rows * width * e_);
    drop(narrowed), drop(scaled), drop(variance);
    return output;
  }

  // (x * cos) + (rotate_half(x) * sin), x of `bytes`.
  Block apply_rotary(Count bytes) {
    const Block first = take(bytes);
    const Block negated = take(bytes / 2);
    const Block rotated = take(bytes);
    drop(negated);
    const Block second = take(bytes);
    drop(rotated);
    const Block output = take(bytes);
    drop(first), drop(second);
    return output;
  }

  Block attention(Count rows, Count positions, LayerCache& cache) {
    const Count head_dim = u(a_.head_dim);
    const Count query_bytes = rows * u(a_.attention_heads) * head_dim * e_;
    const Count key_bytes = rows * u(a_.kv_heads) * head_dim * e_;
    Block query = 0, key = 0;
    if (a_.qk_norm) {  // the projection lives until its norm returns
      const Block projected_query = gemm(query_bytes, a_.qkv_bias);
      query = rms_norm(rows * u(a_.attention_heads), head_dim);
      drop(projected_query);
      const Block projected_key = gemm(key_bytes, a_.qkv_bias);
      key = rms_norm(rows * u(a_.kv_heads), head_dim);
      drop(projected_key);
    } else {
      query = gemm(query_bytes, a_.qkv_bias);
      key = gemm(key_bytes, a_.qkv_bias);
    }
    const Block value = gemm(key_bytes, a_.qkv_bias);
    const Block query_embedded = apply_rotary(query_bytes);
    const Block key_embedded = apply_rotary(key_bytes);
    drop(query), drop(key);
    // DynamicLayer.update: torch.cat onto the cache, the old cache freed on assignment.
    const Count cache_bytes = batch_ * u(a_.kv_heads) * (cached_positions_ + positions) * head_dim * e_;
    const Block keys = take(cache_bytes);
    if (cache.keys) drop(*cache.keys);
    cache.keys = keys;
    const Block values = take(cache_bytes);
    if (cache.values) drop(*cache.values);
    cache.values = values;
    drop(key_embedded), drop(value);
    // SDPA (grouped-query path, no repeat_kv): its output only; already in the layout that
    // transpose(1, 2).contiguous() keeps without a copy.
    const Block attended = take(query_bytes);
    const Block output = gemm(rows * u(a_.hidden_size) * e_, a_.o_proj_bias);
    drop(attended);
    drop(query_embedded);
    return output;
  }

  Block decoder_layer(Count rows, Count positions, LayerCache& cache) {
    const Count hidden = u(a_.hidden_size), intermediate = u(a_.intermediate_size);
    const Block normed = rms_norm(rows, hidden);
    const Block attended = attention(rows, positions, cache);
    drop(normed);
    const Block residual = take(rows * hidden * e_);
    drop(attended);
    const Block post_normed = rms_norm(rows, hidden);
    // mlp(): down_proj(silu(gate_proj(x)) * up_proj(x))
    const Block gate = gemm(rows * intermediate * e_, a_.mlp_bias);
    const Block activated = take(rows * intermediate * e_);
    drop(gate);
    const Block up = gemm(rows * intermediate * e_, a_.mlp_bias);
    const Block product = take(rows * intermediate * e_);
    drop(activated), drop(up);
    const Block transformed = gemm(rows * hidden * e_, a_.mlp_bias);
    drop(product);
    drop(post_normed);
    const Block output = take(rows * hidden * e_);
    drop(transformed), drop(residual);
    return output;
  }

  const DecoderArchitecture& a_;
  Count batch_, context_, e_;
  AllocationRecorder* r_ = nullptr;
  std::vector<LayerCache> cache_;  // empty between sequences
  Count cached_positions_ = Count(0);
  std::optional<Block> token_;
};

}  // namespace

std::vector<std::uint64_t> decoder_tensor_bytes(const std::vector<DecoderTensor>& tensors, std::uint64_t dtype_bytes) {
  std::vector<std::uint64_t> sizes;
  sizes.reserve(tensors.size());
  for (const DecoderTensor& tensor : tensors) {
    CheckedCount bytes = dtype_bytes;
    for (std::int64_t dimension : tensor.shape) bytes *= static_cast<std::uint64_t>(dimension);
    sizes.push_back(bytes.value());
  }
  return sizes;
}

void allocate_decoder_weights(AllocationRecorder& allocator, const DecoderArchitecture& architecture,
                              const std::vector<DecoderTensor>& tensors, std::uint64_t dtype_bytes) {
  const std::vector<std::uint64_t> sizes = decoder_tensor_bytes(tensors, dtype_bytes);
  CheckedCount total = 0;
  for (std::uint64_t bytes : sizes) total += bytes;
  // caching_allocator_warmup: an empty float16 tensor of floor(bytes / 2) elements, freed.
  if (total.value() / 2 > 0) allocator.free(allocator.allocate(total.value() / 2 * 2));
  for (std::uint64_t bytes : sizes)
    if (bytes > 0) allocator.allocate(bytes);
  const std::uint64_t inverse_frequencies = (CheckedCount(static_cast<std::uint64_t>(architecture.head_dim + 1)) / 2 * kFloat32).value();
  allocator.allocate(inverse_frequencies);  // inv_freq
  allocator.allocate(inverse_frequencies);  // original_inv_freq
}

std::unique_ptr<ForwardAllocations> decoder_forward_allocations(const DecoderArchitecture& architecture,
                                                                std::int64_t batch, std::int64_t context,
                                                                std::uint64_t dtype_bytes) {
  return std::make_unique<DecoderForwards>(architecture, batch, context, dtype_bytes);
}

std::vector<std::string> decoder_allocation_rules() {
  return {
      "weights_load: transformers' caching_allocator_warmup allocates one block of every tensor's "
      "bytes in the run's dtype and frees it, then each tensor is allocated in load order (so the "
      "weights are carved from that segment), then inv_freq and original_inv_freq (float32). "
      "The warm-up block assumes the weights fit the GPU less 1.2 GiB.",
      "inputs: the token ids, batch × context int64.",
      "A step (the prefill, or one decode position) allocates and frees what transformers' ops "
      "do, in order: the embedding, the position ids, the rotary tables (float32, then cos and "
      "sin in the model's dtype), per layer RMSNorm's float32 copies, the q/k/v projections, "
      "rotary embedding (x·cos, rotate_half's negated half and concatenation, the sum), the KV "
      "cache concatenation (the layer's new keys and values allocated before the old ones are "
      "freed), SDPA's output, the output projection, the residual sums and the MLP (gate, SiLU, "
      "up, product, down); then the final norm, the last position's logits and the greedy token.",
      "SDPA (grouped-query path) allocates its output only: cuDNN attention on the H200 (compute "
      "capability 9.0) allocates nothing else the allocator sees.",
      "A bias-fused projection (q/k/v biases, Llama's attention_bias or mlp_bias) takes addmm's "
      "cuBLASLt path: its first use allocates the cuBLASLt workspace.",
      "The cache, the last token and the model stay allocated between steps; a new sequence "
      "frees the cache and the token before its prefill.",
  };
}

}  // namespace iteragpu
