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
  PayloadWriter writer;
  payload_fields(writer, payload);
  return writer.text();
}

std::string decode_synthetic_mlp_payload(const std::string& text, SyntheticMlpPayload& payload) {
  PayloadReader reader(text);
  payload_fields(reader, payload);
  if (reader.problem().empty() &&
      (payload.batch <= 0 || payload.context <= 0 || payload.width <= 0 || payload.hidden <= 0))
    return "model dimensions must be positive";
  return reader.problem();
}

}  // namespace iteragpu
