#include "mechanics/exact_arithmetic.hpp"

#include <algorithm>

namespace iteragpu::exact {
namespace {

BigInt power(unsigned base, unsigned exponent) {
  return boost::multiprecision::pow(BigInt(base), exponent);
}

// Brings both values to the same scale.
void align(Decimal& a, Decimal& b) {
  if (a.scale < b.scale) {
    a.mantissa *= power(10, b.scale - a.scale);
    a.scale = b.scale;
  } else if (b.scale < a.scale) {
    b.mantissa *= power(10, a.scale - b.scale);
    b.scale = a.scale;
  }
}

}  // namespace

Decimal normalized(Decimal value) {
  if (value.mantissa == 0) return Decimal{0, 0};
  while (value.scale > 0 && value.mantissa % 10 == 0) {
    value.mantissa /= 10;
    --value.scale;
  }
  return value;
}

Decimal from_integer(const BigInt& value) { return Decimal{value, 0}; }

BigInt from_digits(const std::string& digits) {
  const auto first = digits.find_first_not_of('0');
  return first == std::string::npos ? BigInt(0) : BigInt(digits.substr(first));
}

Decimal add(const Decimal& a, const Decimal& b) {
  Decimal x = a, y = b;
  align(x, y);
  return normalized(Decimal{x.mantissa + y.mantissa, x.scale});
}

Decimal multiply(const Decimal& a, const BigInt& factor) {
  return normalized(Decimal{a.mantissa * factor, a.scale});
}

Decimal multiply(const Decimal& a, const Decimal& b) {
  return normalized(Decimal{a.mantissa * b.mantissa, a.scale + b.scale});
}

// x / 2^k = x × 5^k / 10^k: always a finite decimal.
Decimal divide_by_power_of_two(const Decimal& value, unsigned exponent) {
  return normalized(Decimal{value.mantissa * power(5, exponent), value.scale + exponent});
}

Decimal divide_by_power_of_ten(const Decimal& value, unsigned exponent) {
  return normalized(Decimal{value.mantissa, value.scale + exponent});
}

BigInt ceil_divide(const BigInt& numerator, const BigInt& denominator) {
  return (numerator + denominator - 1) / denominator;
}

int compare(const Decimal& a, const Decimal& b) {
  Decimal x = a, y = b;
  align(x, y);
  return x.mantissa < y.mantissa ? -1 : (x.mantissa > y.mantissa ? 1 : 0);
}

std::string to_string(const Decimal& value) {
  const Decimal v = normalized(value);
  const bool negative = v.mantissa < 0;
  std::string digits = (negative ? BigInt(-v.mantissa) : v.mantissa).str();
  if (v.scale > 0) {
    if (digits.size() <= v.scale) digits.insert(0, v.scale - digits.size() + 1, '0');
    digits.insert(digits.size() - v.scale, 1, '.');
  }
  return negative ? "-" + digits : digits;
}

ExactDecimal to_exact(const Decimal& value) { return ExactDecimalAccess::make(to_string(value)); }
ExactDecimal to_exact(const BigInt& value) { return ExactDecimalAccess::make(value.str()); }

Decimal from_exact(const ExactDecimal& number) {
  const std::string& text = number.str();
  const bool negative = !text.empty() && text[0] == '-';
  const std::string magnitude = negative ? text.substr(1) : text;
  const auto dot = magnitude.find('.');
  Decimal result =
      dot == std::string::npos
          ? Decimal{from_digits(magnitude), 0}
          : Decimal{from_digits(magnitude.substr(0, dot) + magnitude.substr(dot + 1)),
                    static_cast<unsigned>(magnitude.size() - dot - 1)};
  if (negative) result.mantissa = -result.mantissa;
  return normalized(result);
}

std::string rounded(const Decimal& value, int places, Rounding mode) {
  const unsigned target = static_cast<unsigned>(std::max(places, 0));
  BigInt mantissa = value.mantissa;
  if (value.scale > target) {
    const BigInt divisor = power(10, value.scale - target);
    const bool negative = mantissa < 0;
    BigInt magnitude = negative ? BigInt(-mantissa) : mantissa;
    BigInt quotient = magnitude / divisor;
    const BigInt remainder = magnitude % divisor;
    const bool drops = remainder != 0;
    if (mode == Rounding::kHalfAwayFromZero ? remainder * 2 >= divisor
                                            : drops && negative == (mode == Rounding::kDown))
      ++quotient;  // the magnitude grows: away from zero, or toward the bound's side
    mantissa = negative ? BigInt(-quotient) : quotient;
  } else {
    mantissa *= power(10, target - value.scale);
  }
  // Format with exactly `target` fractional digits (to_string would strip zeros).
  const bool negative = mantissa < 0;
  std::string digits = (negative ? BigInt(-mantissa) : mantissa).str();
  if (target > 0) {
    if (digits.size() <= target) digits.insert(0, target - digits.size() + 1, '0');
    digits.insert(digits.size() - target, 1, '.');
  }
  return negative && mantissa != 0 ? "-" + digits : digits;
}

}  // namespace iteragpu::exact
