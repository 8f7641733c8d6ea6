// libFuzzer target for the payload and report codecs the core and the backend plugin share
// (libiteragpu/src/workload/*_payload.cpp over payload_codec.cpp): the input is a payload's or
// a report's text, read by every decoder in turn. A refused text must give a one-line reason,
// never a crash, an exception, a hang or UB; an accepted one must be written again as a text
// that reads back to the same value (encode ∘ decode is stable), so what the plugin reads is
// what the core meant.
// Seeds: tests/fuzz/corpus/workload_payload_fuzzer/ (a Llama payload, an MLP payload, a report).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "workload/decoder_payload.hpp"
#include "workload/training_payload.hpp"
#include "workload/synthetic_mlp_payload.hpp"

namespace {

void require(bool condition) {
  if (!condition) std::abort();
}

// A refusal is one line; an accepted value is written again, read back and written the same.
template <typename Value, typename Encode, typename Decode>
void check(const std::string& text, Encode encode, Decode decode) {
  Value value;
  const std::string problem = decode(text, value);
  if (!problem.empty()) {
    require(problem.find('\n') == std::string::npos);
    return;
  }
  const std::string written = encode(value);
  Value again;
  require(decode(written, again).empty());
  require(encode(again) == written);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  check<iteragpu::DecoderPayload>(text, iteragpu::encode_decoder_payload, iteragpu::decode_decoder_payload);
  check<iteragpu::DecoderRunReport>(text, iteragpu::encode_decoder_run_report, iteragpu::decode_decoder_run_report);
  check<iteragpu::TrainingPayload>(text, iteragpu::encode_training_payload, iteragpu::decode_training_payload);
  check<iteragpu::TrainingRunReport>(text, iteragpu::encode_training_run_report, iteragpu::decode_training_run_report);
  check<iteragpu::SyntheticMlpPayload>(text, iteragpu::encode_synthetic_mlp_payload,
                                       iteragpu::decode_synthetic_mlp_payload);
  return 0;
}
