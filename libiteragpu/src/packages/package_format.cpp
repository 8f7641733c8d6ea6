#include "packages/package_format.hpp"

#include <algorithm>
#include <string>

namespace iteragpu {

ExactDecimal usd_from_cents(const BigInt& cents) {
  return exact::to_exact(exact::divide_by_power_of_ten(exact::from_integer(cents), 2));
}

CentsFraction cents_fraction(const BigInt& numerator_cents, const BigInt& denominator, int places) {
  const BigInt common = boost::multiprecision::gcd(numerator_cents, denominator);
  CentsFraction fraction;
  fraction.numerator_cents = numerator_cents / common;
  fraction.denominator = denominator / common;

  // A reduced fraction has a finite decimal form exactly when its denominator is 2^a × 5^b;
  // then numerator / denominator = numerator × (10^k / denominator) / 10^k, k = max(a, b).
  BigInt rest = fraction.denominator;
  unsigned twos = 0, fives = 0;
  while (rest % 2 == 0) rest /= 2, ++twos;
  while (rest % 5 == 0) rest /= 5, ++fives;
  if (rest == 1) {
    const unsigned digits = std::max(twos, fives);
    const BigInt scaled =
        fraction.numerator_cents * boost::multiprecision::pow(BigInt(10), digits) / fraction.denominator;
    fraction.exact_usd = exact::to_exact(Decimal{scaled, digits + 2});  // cents → dollars
  }

  // Dollars × 10^places = cents × 10^(places - 2); rounded to the nearest integer, halves
  // away from zero (every value here is positive, so away from zero is up).
  const BigInt scaled = fraction.numerator_cents * boost::multiprecision::pow(BigInt(10), places - 2);
  BigInt units = scaled / fraction.denominator;
  if ((scaled % fraction.denominator) * 2 >= fraction.denominator) ++units;
  fraction.display_usd = exact::rounded(Decimal{units, static_cast<unsigned>(places)}, places);
  return fraction;
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
