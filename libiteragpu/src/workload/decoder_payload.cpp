#include "workload/decoder_payload.hpp"

#include "workload/payload_codec.hpp"

namespace iteragpu {
namespace {

// Each struct's members, in order: the one list both directions use.
template <typename Codec, typename Architecture>
void architecture_fields(Codec& codec, Architecture& a) {
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
void tensor_fields(Codec& codec, Tensor& tensor) {
  codec.field("name", tensor.name);
  codec.field("file", tensor.file);
  codec.field("offset", tensor.offset);
  codec.field("bytes", tensor.bytes);
  codec.field("dtype", tensor.dtype);
  codec.field("shape", tensor.shape);
}

template <typename Codec, typename Payload>
void payload_fields(Codec& codec, Payload& payload) {
  codec.field("batch", payload.batch);
  codec.field("context", payload.context);
  codec.field("new_tokens", payload.new_tokens);
  codec.object("architecture", payload.architecture, [](auto& nested, auto& a) { architecture_fields(nested, a); });
  codec.objects("tensors", payload.tensors, [](auto& nested, auto& tensor) { tensor_fields(nested, tensor); });
}

template <typename Codec, typename Report>
void report_fields(Codec& codec, Report& report) {
  codec.field("attention_backend", report.attention_backend);
  codec.field("first_sequence_tokens", report.first_sequence_tokens);
  codec.bytes_field("last_logits_bytes", report.last_logits_bytes);
  codec.field("device_used_bytes", report.device_used_bytes);
}

}  // namespace

std::string encode_decoder_payload(const DecoderPayload& payload) {
  return encode_fields(payload, [](auto& codec, auto& value) { payload_fields(codec, value); });
}

std::string decode_decoder_payload(const std::string& text, DecoderPayload& payload) {
  const std::string problem = decode_fields(text, payload, [](auto& codec, auto& value) { payload_fields(codec, value); });
  if (problem.empty() && (payload.batch <= 0 || payload.context <= 0 || payload.new_tokens <= 0))
    return "batch, context and new_tokens must be positive";
  return problem;
}

std::string encode_decoder_run_report(const DecoderRunReport& report) {
  return encode_fields(report, [](auto& codec, auto& value) { report_fields(codec, value); });
}

std::string decode_decoder_run_report(const std::string& text, DecoderRunReport& report) {
  return decode_fields(text, report, [](auto& codec, auto& value) { report_fields(codec, value); });
}

}  // namespace iteragpu
