#pragma once
// A tiny decoder-only checkpoint the tests write themselves: config.json and one
// model.safetensors of zeros (only headers are read, and the fake backend loads nothing), by
// default a 2-layer LlamaForCausalLM, hidden 64, 4 query / 2 KV heads, MLP 128, vocabulary
// 256, bfloat16. For the decoder workload's measurement tests, in process and end to end.

#include <sys/stat.h>

#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "process_runner.hpp"
#include "safetensors_writer.hpp"

namespace iteragpu::testing {

struct TinyCheckpoint {
  std::string architecture = "LlamaForCausalLM";
  std::string model_type = "llama";
  std::uint64_t layers = 2, hidden = 64, intermediate = 128, heads = 4, kv_heads = 2, vocab = 256;
  std::string dtype = "bfloat16";  // config.json's torch_dtype; the tensors' F16/BF16/F32 follow
  // More config.json members, name → JSON text of the value ("sliding_window" → "8").
  std::map<std::string, std::string> extra;

  std::uint64_t head_dim() const { return hidden / heads; }
  std::string tensor_dtype() const {
    if (dtype == "float32") return "F32";
    if (dtype == "float16") return "F16";
    return "BF16";
  }

  // Every tensor, in the order transformers registers the parameters (untied lm_head).
  std::vector<TensorSpec> tensors() const {
    const std::string d = tensor_dtype();
    const std::uint64_t q = heads * head_dim(), kv = kv_heads * head_dim();
    std::vector<TensorSpec> t;
    t.push_back({"model.embed_tokens.weight", d, {vocab, hidden}});
    for (std::uint64_t i = 0; i < layers; ++i) {
      const std::string p = "model.layers." + std::to_string(i) + ".";
      t.push_back({p + "self_attn.q_proj.weight", d, {q, hidden}});
      t.push_back({p + "self_attn.k_proj.weight", d, {kv, hidden}});
      t.push_back({p + "self_attn.v_proj.weight", d, {kv, hidden}});
      t.push_back({p + "self_attn.o_proj.weight", d, {hidden, q}});
      t.push_back({p + "mlp.gate_proj.weight", d, {intermediate, hidden}});
      t.push_back({p + "mlp.up_proj.weight", d, {intermediate, hidden}});
      t.push_back({p + "mlp.down_proj.weight", d, {hidden, intermediate}});
      t.push_back({p + "input_layernorm.weight", d, {hidden}});
      t.push_back({p + "post_attention_layernorm.weight", d, {hidden}});
    }
    t.push_back({"model.norm.weight", d, {hidden}});
    t.push_back({"lm_head.weight", d, {vocab, hidden}});
    return t;
  }

  std::uint64_t parameter_count() const {
    std::uint64_t count = 0;
    for (const TensorSpec& tensor : tensors()) {
      std::uint64_t elements = 1;
      for (std::uint64_t d : tensor.shape) elements *= d;
      count += elements;
    }
    return count;
  }

  std::string config_json() const {
    std::map<std::string, std::string> config = {
        {"architectures", "[\"" + architecture + "\"]"},
        {"model_type", "\"" + model_type + "\""},
        {"hidden_size", std::to_string(hidden)},
        {"intermediate_size", std::to_string(intermediate)},
        {"num_hidden_layers", std::to_string(layers)},
        {"num_attention_heads", std::to_string(heads)},
        {"num_key_value_heads", std::to_string(kv_heads)},
        {"vocab_size", std::to_string(vocab)},
        {"torch_dtype", "\"" + dtype + "\""}};
    for (const auto& [name, value] : extra) config[name] = value;
    std::string json = "{";
    for (const auto& [name, value] : config) json += (json.size() > 1 ? ", \"" : "\"") + name + "\": " + value;
    return json + "}\n";
  }

  // Creates `directory` (which must not exist) with config.json and model.safetensors; with
  // `sparse`, the tensors' data is a hole (a real shape that occupies no disk).
  void write(const std::string& directory, bool sparse = false) const {
    if (::mkdir(directory.c_str(), 0755) != 0) throw std::runtime_error("cannot create " + directory);
    write_file(directory + "/config.json", config_json());
    if (sparse) {
      write_sparse_safetensors(directory + "/model.safetensors", tensors());
    } else {
      write_safetensors(directory + "/model.safetensors", tensors());
    }
  }

  // Llama-3-8B's shape (32 layers, hidden 4,096, 32 query / 8 KV heads, MLP 14,336, vocabulary
  // 128,256), 131,072 positions; write it sparse.
  static TinyCheckpoint llama_3_8b_shape() {
    TinyCheckpoint shape;
    shape.layers = 32, shape.hidden = 4096, shape.intermediate = 14336, shape.heads = 32, shape.kv_heads = 8;
    shape.vocab = 128256;
    shape.extra["max_position_embeddings"] = "131072";
    return shape;
  }
};

}  // namespace iteragpu::testing
