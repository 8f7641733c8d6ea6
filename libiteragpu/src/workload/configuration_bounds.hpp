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
inline void check_count(int value, const char* field, int minimum) {
  if (value < minimum || value > kMaxForwardCount)
    throw UsageError(field, std::to_string(value) + " is out of range; expected an integer from " +
                                std::to_string(minimum) + " to " + std::to_string(kMaxForwardCount));
}

// Bytes per value of a dtype the workloads run.
inline int dtype_bytes_of(const std::string& dtype) {
  if (dtype == "float32") return 4;
  if (dtype == "float16" || dtype == "bfloat16") return 2;
  throw UsageError("dtype", "'" + dtype + "' is not a supported dtype; expected float32, float16 or bfloat16");
}

}  // namespace iteragpu
