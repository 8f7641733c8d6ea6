#pragma once
// What a workload's run produced besides the phase rows: a record the workload itself makes
// from the backend's report, writes into the measurement file, reads back and prints
// (workload/workload.hpp). A measurement holds it as a WorkloadRun and never looks inside, so a
// new workload brings its own record without changing the measurement.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace iteragpu {

class WorkloadRun {
 public:
  virtual ~WorkloadRun() = default;
};

// What a checkpoint's run produced besides the counters (the decoder workload).
struct DecoderRun final : WorkloadRun {
  std::string attention_backend;                    // the SDPA kernel PyTorch chose
  std::vector<std::int64_t> first_sequence_tokens;  // batch row 0's greedy tokens, cold sequence
  std::string last_logits_sha256;  // batch row 0's logits of the cold sequence's last step, as stored
  // Device memory in use as the driver reports it at the end (cudaMemGetInfo): the CUDA
  // context, libraries and allocator segments, beside the allocator's own counters.
  std::optional<std::uint64_t> device_used_bytes;
  // From the warm sequences' medians (host clock): the prefill's time, batch × context over it,
  // batch over a decode step's time.
  std::optional<double> time_to_first_token_seconds;
  std::optional<double> prefill_tokens_per_second;
  std::optional<double> decode_tokens_per_second;
};

// What a run of fine-tuning steps produced besides the counters (the training workload).
struct TrainingRun final : WorkloadRun {
  std::string attention_backend;  // the SDPA kernel PyTorch chose for the forward
  std::vector<double> losses;     // each step's, as PyTorch computed it in float32
  std::uint64_t parameters = 0;   // every parameter, adapters included
  std::uint64_t trainable_parameters = 0;
  std::optional<std::uint64_t> device_used_bytes;  // as DecoderRun's
  // batch × context over the median host time of a warm step (forward + backward + optimizer
  // rows of steps 2 and on).
  std::optional<double> trained_tokens_per_second;
};

}  // namespace iteragpu
