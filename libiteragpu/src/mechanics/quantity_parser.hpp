#pragma once
// Strict parsing of user-supplied numbers and dates. Every rejection is a UsageError that names the
// field, quotes the value and says what is accepted.

#include <cstdint>
#include <string>

#include "mechanics/exact_arithmetic.hpp"

namespace iteragpu {

// Longest number text accepted; far beyond any real count, short enough to stay instant.
inline constexpr std::size_t kMaxNumberLength = 1000;

// Largest count a user may give (accepted results, units): below 2^53, so a count is a JSON
// integer every reader (JavaScript's doubles included) holds exactly.
inline constexpr long long kMaxCount = 1'000'000'000'000'000LL;

// The value as it should appear in a one-line message: quoted, control bytes escaped, cut
// after `max_shown` bytes ("..." then marks the cut).
std::string quoted_for_message(const std::string& value, std::size_t max_shown = 40);

// "12", "+12" (not "0", "-1", "1.0", "1e3", " 12"). `example` is shown in the message.
BigInt parse_positive_integer(const std::string& text, const std::string& field,
                              const std::string& example = "1");
// Like parse_positive_integer but capped: the value must be ≤ max_value.
long long parse_bounded_positive_integer(const std::string& text, const std::string& field,
                                         long long max_value);
// "0", "16", "+16" from minimum to maximum (not "1.5", "1e3", " 16", "0x10"): a count or a
// size as written on a command line, in a Python keyword or in a worker's request.
long long parse_whole_number(const std::string& text, const std::string& field, long long minimum,
                             long long maximum);
// The same from 0 to 2^64 − 1 (a seed).
std::uint64_t parse_whole_number_up_to_uint64(const std::string& text, const std::string& field);
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
