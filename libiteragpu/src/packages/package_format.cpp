#include "packages/package_format.hpp"

namespace iteragpu {

ExactDecimal usd_from_cents(const BigInt& cents) {
  return exact::to_exact(exact::divide_by_power_of_ten(exact::from_integer(cents), 2));
}

void write_unit_cost(JsonWriter& json, const std::optional<UnitCost>& cost) {
  if (!cost) {
    json.null();
    return;
  }
  json.begin_object();
  json.key("accepted_results").value(cost->accepted_results);
  json.key("numerator_cents").value(cost->numerator_cents);
  json.key("denominator").value(cost->denominator);
  json.key("exact_usd").value(cost->exact_usd);
  json.key("display_usd").value(cost->display_usd);
  json.key("display_rounding").value(UnitCost::display_rounding());
  json.end_object();
}

}  // namespace iteragpu
