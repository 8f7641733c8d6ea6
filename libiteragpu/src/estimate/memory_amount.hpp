#pragma once
// A byte count as the estimates report it: exact bytes, GiB and GB (MemoryAmount), in JSON
// and in a text line. Shared by the parameter-count and the checkpoint estimates.

#include <string>

#include "mechanics/exact_arithmetic.hpp"
#include "iteragpu/memory_estimator.hpp"
#include "mechanics/json_output.hpp"
#include "mechanics/wording.hpp"

namespace iteragpu {

inline constexpr unsigned kGbPowerOfTen = 9;    // 1 GB = 10^9 bytes

MemoryAmount amount_from_bytes(const Decimal& bytes);
// A reserve given in GiB (parsed with parse_decimal, field "reserve-gib"), in bytes.
Decimal reserve_bytes_from_gib(const std::string& reserve_gib);
// "name": {"bytes": ..., "gib": ..., "gb": ...}, exact values as strings.
void write_amount(JsonWriter& json, const char* name, const MemoryAmount& amount);
// "14,000,000,000 bytes = 13.04 GiB = 14.00 GB" (rounded; the JSON keeps every digit).
std::string describe_amount(const MemoryAmount& amount);
// What both estimates report of their weights, reserve and total: in JSON the three amounts,
// reserve_is_assumption and the units; in text a line each, rounded, and the weights and the
// total also exact.
void write_weight_amounts(JsonWriter& json, const MemoryAmount& weights, const MemoryAmount& reserve,
                          const MemoryAmount& total);
std::string weight_amount_lines(const MemoryAmount& weights, const MemoryAmount& reserve,
                                const MemoryAmount& total);
// How describe_amount rounds, for the text of both estimates. Names no front end's option:
// the same text is what Python prints.
inline constexpr const char* kAmountRoundingNote =
    "Figures are rounded to 2 decimals (3 significant digits below 1) except the exact\n"
    "lines; the JSON form carries every digit. GiB = 2^30 bytes, GB = 10^9 bytes.\n";

}  // namespace iteragpu
