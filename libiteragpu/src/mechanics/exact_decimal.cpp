#include "iteragpu/exact_decimal.hpp"

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

}  // namespace iteragpu
