#pragma once
// Money figures shared by the catalog, quotes and the results report: one conversion from
// cents, one JSON form of a unit cost.

#include <optional>

#include "mechanics/exact_arithmetic.hpp"
#include "iteragpu/package_calculator.hpp"
#include "mechanics/json_output.hpp"

namespace iteragpu {

// Exact dollars from integer cents ("1592.81").
ExactDecimal usd_from_cents(const BigInt& cents);

// numerator_cents / denominator (both > 0) as a reduced fraction, its exact dollars when the
// decimal expansion ends, and dollars rounded to `places` decimal places, halves away from zero.
struct CentsFraction {
  BigInt numerator_cents;
  BigInt denominator;
  std::optional<ExactDecimal> exact_usd;
  std::string display_usd;
};
CentsFraction cents_fraction(const BigInt& numerator_cents, const BigInt& denominator, int places);

// The unit-cost object of quote.schema.json, or null.
void write_unit_cost(JsonWriter& json, const std::optional<UnitCost>& cost);

}  // namespace iteragpu
