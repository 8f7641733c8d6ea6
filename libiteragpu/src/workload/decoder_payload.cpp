#include "workload/decoder_payload.hpp"

#include "workload/checkpoint_fields.hpp"
#include "workload/payload_codec.hpp"

namespace iteragpu {
namespace {

template <typename Codec, typename Payload>
void payload_fields(Codec& codec, Payload& payload) {
  codec.field("batch", payload.batch);
  codec.field("context", payload.context);
  codec.field("new_tokens", payload.new_tokens);
  codec.object("architecture", payload.architecture, [](auto& nested, auto& a) { checkpoint_architecture_fields(nested, a); });
  codec.objects("tensors", payload.tensors, [](auto& nested, auto& tensor) { checkpoint_tensor_fields(nested, tensor); });
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
