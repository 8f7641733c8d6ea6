#pragma once
// An exact, finite decimal number carried as its canonical text ("13.03851604461669921875",
// "14000000000", "-0.5"). The library computes with Boost.Multiprecision internally; this
// value type keeps third-party types out of the public API and converts losslessly to
// Python's int / decimal.Decimal.

#include <string>

namespace iteragpu {

class ExactDecimal {
 public:
  ExactDecimal() : text_("0") {}
  // Parses plain decimal text (digits, optional sign and fraction); throws UsageError
  // naming `field` when the text is not such a number.
  static ExactDecimal parse(const std::string& text, const std::string& field = "");

  const std::string& str() const { return text_; }
  bool is_integer() const { return text_.find('.') == std::string::npos; }
  double approx() const;  // nearest double, for display and plots only
  // Rounded to `places` fractional digits, halves away from zero, trailing zeros kept
  // ("13.04" for places=2). Display only: the exact value is str().
  std::string rounded(int places) const;
  // Like rounded() with thousands separators in the integer part ("14,000,000,000").
  std::string grouped(int places) const;
  // Like grouped(), but a non-zero value below 1 keeps `significant` significant digits
  // ("0.000524" rather than "0.00"): a small quantity never reads as nothing.
  std::string readable(int places, int significant = 3) const;

  friend bool operator==(const ExactDecimal& a, const ExactDecimal& b) { return a.text_ == b.text_; }
  friend bool operator!=(const ExactDecimal& a, const ExactDecimal& b) { return !(a == b); }

 private:
  friend class ExactDecimalAccess;  // the library's arithmetic builds canonical values
  explicit ExactDecimal(std::string canonical) : text_(std::move(canonical)) {}
  std::string text_;
};

}  // namespace iteragpu
