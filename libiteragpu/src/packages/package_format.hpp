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

// The unit-cost object of quote.schema.json, or null.
void write_unit_cost(JsonWriter& json, const std::optional<UnitCost>& cost);

}  // namespace iteragpu
