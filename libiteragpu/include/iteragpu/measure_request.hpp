#pragma once
// What a measurement (or a prediction) is asked for, and the model it describes.

#include <cstdint>
#include <string>

namespace iteragpu {

struct MeasureRequest {
  std::string device = "cuda:0";
  std::int64_t batch = 1;
  std::int64_t context = 16;   // positions; no attention, no KV cache
  std::int64_t width = 64;
  std::int64_t hidden = 0;     // 0 = 4 × width
  std::string dtype = "float32";  // float32 | float16 | bfloat16
  int warmup = 1;
  int repeats = 2;
  std::uint64_t seed = 20260924;
  std::string output;          // JSON file to create; must not exist
  std::string backend_path;    // explicit plugin file; empty = default search
};

struct SyntheticModel {
  std::int64_t batch = 0, context = 0, width = 0, hidden = 0;
  std::string dtype;
  int dtype_bytes = 0;
  std::int64_t parameter_count = 0;
  std::int64_t parameter_bytes = 0;
  std::int64_t input_bytes = 0;

  static SyntheticModel from(const MeasureRequest& request);  // validates; UsageError
};

}  // namespace iteragpu
