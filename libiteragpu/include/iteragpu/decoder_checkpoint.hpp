#pragma once
// A dense decoder-only checkpoint in a local folder (config.json and safetensors weights),
// read and checked before any GPU work: the second workload's model
// (libiteragpu/src/workload/decoder_checkpoint.cpp). Only the architectures whose arithmetic
// the decoder workload reproduces are accepted (LlamaForCausalLM, MistralForCausalLM,
// Qwen2ForCausalLM, Qwen3ForCausalLM); anything that would change the arithmetic and is not
// understood is refused with one line naming the config.json field.

#include <cstdint>
#include <string>
#include <vector>

#include "iteragpu/decoder_architecture.hpp"

namespace iteragpu {

struct DecoderCheckpoint {
  std::string directory;
  DecoderArchitecture architecture;
  // Every tensor the model has, in the order transformers registers its parameters
  // (embed_tokens, then per layer q, k, v, o [with biases after their weights], q_norm,
  // k_norm, gate, up, down, input_layernorm, post_attention_layernorm; norm; lm_head unless
  // tied). Exactly the checkpoint's tensors: a missing, extra, mis-shaped or mis-typed one
  // is refused.
  std::vector<DecoderTensor> tensors;
  std::int64_t parameter_count = 0;   // elements of `tensors`
  std::uint64_t parameter_bytes = 0;  // their bytes in the files

  // Reads DIR/config.json and the safetensors files beside it (one file, or an index and
  // its shards), headers only. UsageError("model", ...) for an architecture or field that
  // is not supported, naming the field; DataFileError "PATH: reason" for a file that cannot
  // be read or does not match the config.
  static DecoderCheckpoint read(const std::string& directory);
};

}  // namespace iteragpu
