#pragma once
// A checkpoint's description as the workload payloads carry it (the decoder's and the training
// step's): the architecture's and each tensor's members, in order, the one list both codec
// directions use (payload_codec.hpp).

namespace iteragpu {

template <typename Codec, typename Architecture>
void checkpoint_architecture_fields(Codec& codec, Architecture& a) {
  codec.field("architecture", a.architecture);
  codec.field("model_type", a.model_type);
  codec.field("layers", a.layers);
  codec.field("hidden_size", a.hidden_size);
  codec.field("intermediate_size", a.intermediate_size);
  codec.field("attention_heads", a.attention_heads);
  codec.field("kv_heads", a.kv_heads);
  codec.field("head_dim", a.head_dim);
  codec.field("vocab_size", a.vocab_size);
  codec.field("max_position_embeddings", a.max_position_embeddings);
  codec.field("sliding_window", a.sliding_window);
  codec.field("rms_norm_eps", a.rms_norm_eps);
  codec.field("rope_theta", a.rope_theta);
  codec.field("rope_type", a.rope_type);
  codec.field("rope_factor", a.rope_factor);
  codec.field("rope_low_freq_factor", a.rope_low_freq_factor);
  codec.field("rope_high_freq_factor", a.rope_high_freq_factor);
  codec.field("rope_original_max_position_embeddings", a.rope_original_max_position_embeddings);
  codec.field("qkv_bias", a.qkv_bias);
  codec.field("o_proj_bias", a.o_proj_bias);
  codec.field("mlp_bias", a.mlp_bias);
  codec.field("qk_norm", a.qk_norm);
  codec.field("tie_word_embeddings", a.tie_word_embeddings);
  codec.field("dtype", a.dtype);
}

template <typename Codec, typename Tensor>
void checkpoint_tensor_fields(Codec& codec, Tensor& tensor) {
  codec.field("name", tensor.name);
  codec.field("file", tensor.file);
  codec.field("offset", tensor.offset);
  codec.field("bytes", tensor.bytes);
  codec.field("dtype", tensor.dtype);
  codec.field("shape", tensor.shape);
}

}  // namespace iteragpu
