#pragma once
// The decoder workload's payload (WorkloadSpec::payload) and its run report
// (Backend::run_report): the payload written by its core workload (decoder_workload.cpp) and
// read by its plugin module (backend_torch/decoder_module.cpp) and the test double; the report
// written by the module and read back by the core, with this one codec.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "iteragpu/decoder_architecture.hpp"

namespace iteragpu {

// The name the decoder workload is registered under (WorkloadSpec::kind).
inline constexpr const char* kDecoderKind = "decoder";

// A checkpoint's run: a prefill of [batch, context] token ids, then one decode step per
// forward, growing the KV cache, until the output is released.
struct DecoderPayload {
  std::int64_t batch = 1, context = 16;
  int new_tokens = 16;  // decode steps after the prefill
  DecoderArchitecture architecture;
  std::vector<DecoderTensor> tensors;  // in load order
};

// What a checkpoint's run produced besides the counters: read after the phases.
struct DecoderRunReport {
  std::string attention_backend;                    // the SDPA kernels PyTorch chose
  std::vector<std::int64_t> first_sequence_tokens;  // batch row 0's greedy tokens, in order
  // Batch row 0's logits at the cold sequence's last decode step, the bytes as stored on the GPU.
  std::string last_logits_bytes;
  // Device memory in use as the driver reports it (cudaMemGetInfo total − free): this
  // process's CUDA context, libraries and allocator segments, and any other process's.
  std::optional<std::uint64_t> device_used_bytes;
};

std::string encode_decoder_payload(const DecoderPayload& payload);
// "" when `text` is a payload of a positive batch, context and new tokens, else why not in one line.
std::string decode_decoder_payload(const std::string& text, DecoderPayload& payload);

std::string encode_decoder_run_report(const DecoderRunReport& report);
// "" when `text` is a run report, else why not in one line.
std::string decode_decoder_run_report(const std::string& text, DecoderRunReport& report);

}  // namespace iteragpu
