#include "workload/training_payload.hpp"

#include "workload/checkpoint_fields.hpp"
#include "workload/payload_codec.hpp"

namespace iteragpu {
namespace {

template <typename Codec, typename Payload>
void payload_fields(Codec& codec, Payload& payload) {
  codec.field("batch", payload.batch);
  codec.field("context", payload.context);
  codec.field("method", payload.method);
  codec.field("lora_rank", payload.lora_rank);
  codec.field("lora_alpha", payload.lora_alpha);
  codec.field("lora_targets", payload.lora_targets);
  codec.field("gradient_checkpointing", payload.gradient_checkpointing);
  codec.object("architecture", payload.architecture,
               [](auto& nested, auto& a) { checkpoint_architecture_fields(nested, a); });
  codec.objects("tensors", payload.tensors, [](auto& nested, auto& tensor) { checkpoint_tensor_fields(nested, tensor); });
}

template <typename Codec, typename Report>
void report_fields(Codec& codec, Report& report) {
  codec.field("attention_backend", report.attention_backend);
  codec.bytes_field("losses_float32", report.losses_float32);
  codec.field("parameters", report.parameters);
  codec.field("trainable_parameters", report.trainable_parameters);
  codec.field("device_used_bytes", report.device_used_bytes);
}

}  // namespace

std::string encode_training_payload(const TrainingPayload& payload) {
  return encode_fields(payload, [](auto& codec, auto& value) { payload_fields(codec, value); });
}

std::string decode_training_payload(const std::string& text, TrainingPayload& payload) {
  const std::string problem = decode_fields(text, payload, [](auto& codec, auto& value) { payload_fields(codec, value); });
  if (!problem.empty()) return problem;
  if (payload.batch <= 0 || payload.context <= 0) return "batch and context must be positive";
  if (payload.method != "full" && payload.method != "lora") return "method must be full or lora";
  if (payload.method == "lora" && (payload.lora_rank <= 0 || payload.lora_targets.empty()))
    return "a LoRA step needs a positive rank and at least one target";
  return {};
}

std::string encode_training_run_report(const TrainingRunReport& report) {
  return encode_fields(report, [](auto& codec, auto& value) { report_fields(codec, value); });
}

std::string decode_training_run_report(const std::string& text, TrainingRunReport& report) {
  return decode_fields(text, report, [](auto& codec, auto& value) { report_fields(codec, value); });
}

}  // namespace iteragpu
