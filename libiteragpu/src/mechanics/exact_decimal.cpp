#include "iteragpu/exact_decimal.hpp"

#include <algorithm>
#include <cstdlib>

#include "mechanics/exact_arithmetic.hpp"
#include "mechanics/quantity_parser.hpp"

namespace iteragpu {

ExactDecimal ExactDecimal::parse(const std::string& text, const std::string& field) {
  return exact::to_exact(parse_decimal(text, field, /*allow_negative=*/true));
}

double ExactDecimal::approx() const { return std::strtod(text_.c_str(), nullptr); }

std::string ExactDecimal::rounded(int places) const {
  return exact::rounded(exact::from_exact(*this), places);
}

std::string ExactDecimal::grouped(int places) const {
  std::string text = rounded(places);
  const std::size_t start = (!text.empty() && text[0] == '-') ? 1 : 0;
  std::size_t end = text.find('.');
  if (end == std::string::npos) end = text.size();
  for (std::size_t i = end; i > start + 3; i -= 3) text.insert(i - 3, 1, ',');
  return text;
}

std::string ExactDecimal::readable(int places, int significant) const {
  const Decimal value = exact::from_exact(*this);
  const BigInt magnitude = value.mantissa < 0 ? BigInt(-value.mantissa) : value.mantissa;
  const BigInt one = boost::multiprecision::pow(BigInt(10), value.scale);
  if (magnitude == 0 || magnitude >= one) return grouped(places);
  // 0.000523868...: mantissa 523868..., scale s; zeros after the point = s - digits.
  const int digits = static_cast<int>(magnitude.str().size());
  const int needed = static_cast<int>(value.scale) - digits + significant;
  std::string text = rounded(std::max(places, needed));
  while (text.size() - text.find('.') - 1 > static_cast<std::size_t>(places) && text.back() == '0')
    text.pop_back();
  if (text.back() == '.') text.pop_back();
  return text;
}

}  // namespace iteragpu
