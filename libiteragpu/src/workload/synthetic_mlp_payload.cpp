#include "workload/synthetic_mlp_payload.hpp"

#include "workload/payload_codec.hpp"

namespace iteragpu {
namespace {

// The payload's members, in order: the one list both directions use.
template <typename Codec, typename Payload>
void payload_fields(Codec& codec, Payload& payload) {
  codec.field("batch", payload.batch);
  codec.field("context", payload.context);
  codec.field("width", payload.width);
  codec.field("hidden", payload.hidden);
}

}  // namespace

std::string encode_synthetic_mlp_payload(const SyntheticMlpPayload& payload) {
  return encode_fields(payload, [](auto& codec, auto& value) { payload_fields(codec, value); });
}

std::string decode_synthetic_mlp_payload(const std::string& text, SyntheticMlpPayload& payload) {
  const std::string problem = decode_fields(text, payload, [](auto& codec, auto& value) { payload_fields(codec, value); });
  if (problem.empty() && (payload.batch <= 0 || payload.context <= 0 || payload.width <= 0 || payload.hidden <= 0))
    return "model dimensions must be positive";
  return problem;
}

}  // namespace iteragpu
