#include "mechanics/quantity_parser.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <limits>

#include "iteragpu/error.hpp"
#include "iteragpu/printable_text.hpp"

namespace iteragpu {
namespace {

bool all_digits(const std::string& text, std::size_t begin, std::size_t end) {
  if (begin >= end) return false;
  for (std::size_t i = begin; i < end; ++i)
    if (!std::isdigit(static_cast<unsigned char>(text[i]))) return false;
  return true;
}

void check_length(const std::string& text, const std::string& field, const std::string& accepted) {
  if (text.empty()) throw UsageError(field, "empty value; " + accepted);
  if (text.size() > kMaxNumberLength)
    throw UsageError(field, "value too long (" + std::to_string(text.size()) +
                                " characters), at most " + std::to_string(kMaxNumberLength) +
                                " are accepted; " + accepted);
}

// Plain decimal digits with an optional fraction: returns false on anything else.
bool split_decimal(const std::string& text, std::size_t begin, Decimal& out) {
  const auto dot = text.find('.', begin);
  const std::size_t int_end = dot == std::string::npos ? text.size() : dot;
  if (!all_digits(text, begin, int_end)) return false;
  std::string digits = text.substr(begin, int_end - begin);
  unsigned scale = 0;
  if (dot != std::string::npos) {
    if (!all_digits(text, dot + 1, text.size())) return false;
    digits += text.substr(dot + 1);
    scale = static_cast<unsigned>(text.size() - dot - 1);
  }
  out = exact::normalized(Decimal{exact::from_digits(digits), scale});
  return true;
}

}  // namespace

bool is_calendar_date(const std::string& text) {
  if (text.size() != 10 || text[4] != '-' || text[7] != '-') return false;
  for (std::size_t i : {0, 1, 2, 3, 5, 6, 8, 9})
    if (!std::isdigit(static_cast<unsigned char>(text[i]))) return false;
  const int year = std::stoi(text.substr(0, 4));
  const int month = std::stoi(text.substr(5, 2));
  const int day = std::stoi(text.substr(8, 2));
  if (month < 1 || month > 12 || day < 1) return false;
  const bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
  const int month_days[] = {31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return day <= month_days[month - 1];
}

bool parse_compute_capability(const std::string& text, int& major, int& minor) {
  const char* begin = text.c_str();
  const char* end = begin + text.size();
  const char* dot = std::find(begin, end, '.');
  if (dot == end || !all_digits(text, 0, dot - begin) || !all_digits(text, dot - begin + 1, text.size()))
    return false;
  int parsed_major = 0, parsed_minor = 0;
  if (std::from_chars(begin, dot, parsed_major).ec != std::errc() ||
      std::from_chars(dot + 1, end, parsed_minor).ec != std::errc())
    return false;  // out of int range
  major = parsed_major;
  minor = parsed_minor;
  return true;
}

std::string quoted_for_message(const std::string& value, std::size_t max_shown) {
  // Cut before a UTF-8 continuation byte, never in the middle of a character.
  std::size_t cut = std::min(max_shown, value.size());
  while (cut > 0 && cut < value.size() && (static_cast<unsigned char>(value[cut]) & 0xC0) == 0x80) --cut;
  return "'" + printable(value.substr(0, cut)) + (value.size() > cut ? "..." : "") + "'";
}

BigInt parse_positive_integer(const std::string& text, const std::string& field,
                              const std::string& example) {
  const std::string accepted = "expected a positive integer such as " + example;
  check_length(text, field, accepted);
  const std::size_t begin = text[0] == '+' ? 1 : 0;
  if (!all_digits(text, begin, text.size()))
    throw UsageError(field, quoted_for_message(text) + " is not a positive integer; " + accepted);
  BigInt value = exact::from_digits(text.substr(begin));
  if (value <= 0) throw UsageError(field, quoted_for_message(text) + " is zero; " + accepted);
  return value;
}

long long parse_bounded_positive_integer(const std::string& text, const std::string& field,
                                         long long max_value) {
  const BigInt value = parse_positive_integer(text, field);
  if (value > max_value)
    throw UsageError(field, quoted_for_message(text) + " is too large; expected a positive integer up to " +
                                std::to_string(max_value));
  return value.convert_to<long long>();
}

namespace {

// A whole number as written, within [minimum, maximum] (inclusive); UsageError otherwise.
BigInt checked_whole_number(const std::string& text, const std::string& field, const BigInt& minimum,
                            const BigInt& maximum) {
  const std::string accepted = "expected a whole number from " + minimum.str() + " to " + maximum.str();
  check_length(text, field, accepted);
  const std::size_t begin = text[0] == '+' ? 1 : 0;
  if (!all_digits(text, begin, text.size()))
    throw UsageError(field, quoted_for_message(text) + " is not a whole number; " + accepted);
  BigInt value = exact::from_digits(text.substr(begin));
  if (value < minimum || value > maximum)
    throw UsageError(field, quoted_for_message(text) + " is out of range; " + accepted);
  return value;
}

}  // namespace

long long parse_whole_number(const std::string& text, const std::string& field, long long minimum,
                             long long maximum) {
  return checked_whole_number(text, field, minimum, maximum).convert_to<long long>();
}

std::uint64_t parse_whole_number_up_to_uint64(const std::string& text, const std::string& field) {
  return checked_whole_number(text, field, 0, std::numeric_limits<std::uint64_t>::max()).convert_to<std::uint64_t>();
}

Decimal parse_decimal(const std::string& text, const std::string& field, bool allow_negative) {
  const std::string accepted = allow_negative
                                   ? "expected a decimal number such as 4 or -0.5"
                                   : "expected a non-negative decimal number such as 4 or 0.5";
  check_length(text, field, accepted);
  std::size_t begin = 0;
  bool negative = false;
  if (text[0] == '+' || text[0] == '-') {
    negative = text[0] == '-';
    begin = 1;
  }
  Decimal value;
  if (!split_decimal(text, begin, value))
    throw UsageError(field, quoted_for_message(text) + " is not a decimal number; " + accepted);
  if (negative) value.mantissa = -value.mantissa;
  if (value.mantissa < 0 && !allow_negative)
    throw UsageError(field, quoted_for_message(text) + " is negative; " + accepted);
  return value;
}

BigInt parse_parameter_count(const std::string& text, const std::string& field) {
  const std::string accepted =
      "expected a positive integer such as 7000000000 or a shorthand such as 7B, 1.5M, 70B "
      "(K, M, B, T = 10^3, 10^6, 10^9, 10^12)";
  check_length(text, field, accepted);
  unsigned exponent = 0;
  std::string number = text;
  switch (std::toupper(static_cast<unsigned char>(text.back()))) {
    case 'K': exponent = 3; break;
    case 'M': exponent = 6; break;
    case 'B': exponent = 9; break;
    case 'T': exponent = 12; break;
    default: break;
  }
  if (exponent > 0) number.pop_back();
  Decimal value;
  const std::size_t begin = !number.empty() && number[0] == '+' ? 1 : 0;
  if (number.empty() || !split_decimal(number, begin, value))
    throw UsageError(field, quoted_for_message(text) + " is not a parameter count; " + accepted);
  const Decimal scaled = exact::multiply(value, boost::multiprecision::pow(BigInt(10), exponent));
  if (scaled.scale != 0)
    throw UsageError(field, quoted_for_message(text) + " is not a whole number of parameters; " + accepted);
  if (scaled.mantissa <= 0) throw UsageError(field, quoted_for_message(text) + " is zero; " + accepted);
  return scaled.mantissa;
}

}  // namespace iteragpu
