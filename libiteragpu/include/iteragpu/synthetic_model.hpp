#pragma once
// The synthetic model of the first workload, Linear(width→hidden) → GELU → Linear(hidden→width):
// its sizes, derived from a configuration (libiteragpu/src/workload/synthetic_model.cpp).

#include <cstdint>
#include <string>

#include "iteragpu/measure_configuration.hpp"

namespace iteragpu {

struct SyntheticModel {
  std::int64_t batch = 0, context = 0, width = 0, hidden = 0;
  std::string dtype;
  int dtype_bytes = 0;
  std::int64_t parameter_count = 0;
  std::int64_t parameter_bytes = 0;
  std::int64_t input_bytes = 0;

  static SyntheticModel from(const MeasureConfiguration& configuration);  // validates; UsageError
};

}  // namespace iteragpu
