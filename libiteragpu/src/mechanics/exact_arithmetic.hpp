#pragma once
// Exact decimal arithmetic on Boost.Multiprecision integers. A Decimal is
// mantissa × 10^-scale; every value the library reports is one of these, so a byte count
// divided by 2^30 or 10^9 keeps all its digits.

#include <boost/multiprecision/cpp_int.hpp>
#include <string>

#include "iteragpu/exact_decimal.hpp"

namespace iteragpu {

using BigInt = boost::multiprecision::cpp_int;

struct Decimal {
  BigInt mantissa;
  unsigned scale = 0;  // number of fractional digits
};

// Builds ExactDecimal values from canonical text (the only way besides parse()).
class ExactDecimalAccess {
 public:
  static ExactDecimal make(std::string canonical) { return ExactDecimal(std::move(canonical)); }
};

namespace exact {

Decimal normalized(Decimal value);  // trailing fractional zeros stripped
Decimal from_integer(const BigInt& value);
// Base-10 digits to an integer. Leading zeros are skipped: Boost would read "010" as octal.
BigInt from_digits(const std::string& digits);
Decimal add(const Decimal& a, const Decimal& b);
Decimal multiply(const Decimal& a, const BigInt& factor);
Decimal multiply(const Decimal& a, const Decimal& b);
Decimal divide_by_power_of_two(const Decimal& value, unsigned exponent);  // exact
Decimal divide_by_power_of_ten(const Decimal& value, unsigned exponent);  // exact
BigInt ceil_divide(const BigInt& numerator, const BigInt& denominator);   // both > 0
int compare(const Decimal& a, const Decimal& b);

// Canonical text: no exponent, no trailing fractional zeros, "0" for zero.
std::string to_string(const Decimal& value);
ExactDecimal to_exact(const Decimal& value);
ExactDecimal to_exact(const BigInt& value);
Decimal from_exact(const ExactDecimal& value);
// How rounded() drops digits: to the nearest, halves away from zero; down (toward minus
// infinity) for a lower bound, which must not read higher than it is; up (toward plus
// infinity) for an upper bound.
enum class Rounding { kHalfAwayFromZero, kDown, kUp };
// Rounded to `places` fractional digits, zeros kept.
std::string rounded(const Decimal& value, int places, Rounding mode = Rounding::kHalfAwayFromZero);

}  // namespace exact
}  // namespace iteragpu
