#pragma once
// The bounds every workload checks a configuration against, with the messages that name the
// field and what is accepted: one place for the synthetic MLP and the checkpoint workload.

#include <cstdint>
#include <string>

#include "iteragpu/error.hpp"
#include "iteragpu/measure_configuration.hpp"

namespace iteragpu {

// A batch, context, width or hidden size from `minimum` to kMaxModelDimension.
inline void check_dimension(std::int64_t value, const char* field, std::int64_t minimum) {
  if (value < minimum)
    throw UsageError(field, std::to_string(value) + " is too small; expected an integer from " +
                                std::to_string(minimum) + " to " + std::to_string(kMaxModelDimension));
  if (value > kMaxModelDimension)
    throw UsageError(field, std::to_string(value) + " is too large; expected an integer from " +
                                std::to_string(minimum) + " to " + std::to_string(kMaxModelDimension) +
                                " (this is a bounded measurement)");
}

// A count of forwards, sequences or decode steps from `minimum` to kMaxForwardCount.
inline void check_count(std::int64_t value, const char* field, int minimum) {
  if (value < minimum || value > kMaxForwardCount)
    throw UsageError(field, std::to_string(value) + " is out of range; expected an integer from " +
                                std::to_string(minimum) + " to " + std::to_string(kMaxForwardCount));
}

// Each count is capped, and so is what they make together: a request's phase rows, and the
// layer steps (forwards × layers) its prediction models, are checked from the options alone,
// before any row is planned. Within them a request is planned and predicted in seconds and
// tens of megabytes (docs/performance.md).
inline constexpr std::int64_t kMaxPhaseRows = 200000;
inline constexpr std::int64_t kMaxLayerSteps = 1000000;

// UsageError naming the options, when `rows` or `rows × layers` pass the caps. `options` says
// which values make the rows ("warmup 1, repeats 2 and new-tokens 16"), `formula` how.
inline void check_request_work(std::int64_t rows, std::int64_t forwards, std::int64_t layers,
                               const std::string& options, const std::string& formula) {
  if (rows > kMaxPhaseRows)
    throw UsageError("repeats", options + " make " + std::to_string(rows) + " phase rows (" + formula +
                                    "); accepted: at most " + std::to_string(kMaxPhaseRows) + " rows");
  if (forwards * layers > kMaxLayerSteps)
    throw UsageError("repeats", options + " make " + std::to_string(forwards) + " forwards of " +
                                    std::to_string(layers) + " layers, " + std::to_string(forwards * layers) +
                                    " layer steps to model; accepted: at most " + std::to_string(kMaxLayerSteps) +
                                    " (forwards x layers)");
}

// Bytes per value of a dtype the workloads run.
inline int dtype_bytes_of(const std::string& dtype) {
  if (dtype == "float32") return 4;
  if (dtype == "float16" || dtype == "bfloat16") return 2;
  throw UsageError("dtype", "'" + dtype + "' is not a supported dtype; expected float32, float16 or bfloat16");
}

}  // namespace iteragpu
