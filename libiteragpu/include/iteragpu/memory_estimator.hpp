#pragma once
// Weight memory from a parameter count and a storage bit width, exactly (SPEC §1).

#include <string>
#include <vector>

#include "iteragpu/exact_decimal.hpp"

namespace iteragpu {

struct EstimateRequest {
  // Positive integer ("7000000000") or shorthand with K, M, B or T (10^3..10^12):
  // "7B", "1.5M", "70B". The result must be a whole number of parameters.
  std::string parameters;
  // Storage bits per parameter, a positive integer ("16", "4").
  std::string bits;
  // A reserve the user chooses to add, in GiB (non-negative decimal). An assumption, not a
  // measurement.
  std::string reserve_gib = "0";
};

// One amount of memory in three exact units.
struct MemoryAmount {
  ExactDecimal bytes;  // integral for weights; may be fractional for a decimal reserve
  ExactDecimal gib;    // bytes / 2^30
  ExactDecimal gb;     // bytes / 10^9
};

struct MemoryEstimate {
  ExactDecimal parameters;  // the parsed parameter count (integer)
  ExactDecimal bits;        // bits per parameter (integer)
  ExactDecimal total_bits;  // parameters × bits
  MemoryAmount weights;     // ceil(total_bits / 8) bytes
  MemoryAmount reserve;     // the user's assumption
  MemoryAmount total;       // weights + reserve

  // What the estimate leaves out (activations, KV cache, ...).
  static const std::vector<std::string>& not_included();
  // Schema "iteragpu.estimate" (data/schema/estimate.schema.json).
  std::string to_json() const;
  std::string to_text() const;
};

class MemoryEstimator {
 public:
  // Throws UsageError naming the field on malformed input.
  MemoryEstimate estimate(const EstimateRequest& request) const;
};

}  // namespace iteragpu
