#pragma once
// Strict parsing of user-supplied numbers and dates. Every rejection is a UsageError that names the
// field, quotes the value and says what is accepted.

#include <string>

#include "mechanics/exact_arithmetic.hpp"

namespace iteragpu {

// Longest number text accepted; far beyond any real count, short enough to stay instant.
inline constexpr std::size_t kMaxNumberLength = 1000;

// The value as it should appear in a one-line message: truncated, control bytes escaped.
std::string quoted_for_message(const std::string& value);

// "12", "+12" (not "0", "-1", "1.0", "1e3", " 12"). `example` is shown in the message.
BigInt parse_positive_integer(const std::string& text, const std::string& field,
                              const std::string& example = "1");
// Like parse_positive_integer but capped: the value must be ≤ max_value.
long long parse_bounded_positive_integer(const std::string& text, const std::string& field,
                                         long long max_value);
// "12", "0.5", "4." not accepted; no exponent, no NaN/Inf.
Decimal parse_decimal(const std::string& text, const std::string& field, bool allow_negative);
// A positive integer or a shorthand with a K/M/B/T suffix (10^3, 10^6, 10^9, 10^12):
// "7B", "1.5M", "70b". The value must be whole.
BigInt parse_parameter_count(const std::string& text, const std::string& field);

// "9.0", "10.0": a CUDA compute capability MAJOR.MINOR, both plain decimal integers. False
// (and the outputs untouched) for anything else.
bool parse_compute_capability(const std::string& text, int& major, int& minor);

// "2026-12-02": four-digit year, month and day that exist in the calendar.
bool is_calendar_date(const std::string& text);

}  // namespace iteragpu
