#pragma once
// The model the decoder workload runs, as the backend is told it: the architecture's numbers
// and every tensor's place in the safetensors files. Plain values that cross the plugin
// boundary in the decoder's payload (libiteragpu/src/workload/decoder_payload.hpp); read and
// checked by DecoderCheckpoint::read (iteragpu/decoder_checkpoint.hpp).

#include <cstdint>
#include <string>
#include <vector>

namespace iteragpu {

// What config.json says, resolved as transformers resolves it (defaults of each
// architecture's configuration class filled in).
struct DecoderArchitecture {
  std::string architecture;  // "LlamaForCausalLM", ...
  std::string model_type;    // "llama", "mistral", "qwen2", "qwen3"
  std::int64_t layers = 0;             // num_hidden_layers
  std::int64_t hidden_size = 0;
  std::int64_t intermediate_size = 0;
  std::int64_t attention_heads = 0;    // num_attention_heads
  std::int64_t kv_heads = 0;           // num_key_value_heads (attention_heads when absent)
  std::int64_t head_dim = 0;           // head_dim, else hidden_size / attention_heads
  std::int64_t vocab_size = 0;
  std::int64_t max_position_embeddings = 0;
  std::int64_t sliding_window = 0;     // 0: none, else the attention window in positions
  double rms_norm_eps = 1e-6;
  double rope_theta = 10000.0;
  std::string rope_type = "default";   // "default" | "llama3"
  double rope_factor = 1.0;            // llama3 only
  double rope_low_freq_factor = 1.0;
  double rope_high_freq_factor = 4.0;
  std::int64_t rope_original_max_position_embeddings = 0;
  bool qkv_bias = false;       // q/k/v projections have biases (Qwen2; Llama's attention_bias)
  bool o_proj_bias = false;    // the output projection has a bias (Llama's attention_bias)
  bool mlp_bias = false;       // Llama's mlp_bias
  bool qk_norm = false;        // Qwen3: RMSNorm over head_dim on queries and keys
  bool tie_word_embeddings = false;  // lm_head shares embed_tokens' weight
  std::string dtype;           // the checkpoint's dtype: "bfloat16", "float16" or "float32"
};

// One tensor of the model as it lies in a safetensors file.
struct DecoderTensor {
  std::string name;          // "model.layers.0.self_attn.q_proj.weight"
  std::string file;          // the shard's path
  std::uint64_t offset = 0;  // of its first byte in the file (8 + header length + begin)
  std::uint64_t bytes = 0;
  std::string dtype;         // safetensors dtype: "BF16", "F16" or "F32"
  std::vector<std::int64_t> shape;
};

// What a measurement records of the checkpoint it ran: enough to describe it (text, JSON,
// comparisons) without its files, which the reader of a measurement may not have.
struct CheckpointRecord {
  std::string directory;
  DecoderArchitecture architecture;
  std::int64_t tensors = 0;
  std::int64_t parameter_count = 0;
  std::uint64_t parameter_bytes = 0;
};

}  // namespace iteragpu
