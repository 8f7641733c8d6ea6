// What JSON text is refused before RapidJSON parses it: nesting deeper than any document
// iteragpu writes, and numbers RapidJSON 1.1.0 would read with undefined behaviour. Used by
// every JSON reader of the project (json_input.cpp) and by the workload payload codec the
// backend plugin compiles too (workload/payload_codec.cpp), so it depends on nothing else.

#include "mechanics/json_text_guard.hpp"

namespace iteragpu {

// The deepest nesting of arrays and objects in `text`, counting brackets outside strings;
// stops early once past `limit`.
int json_nesting_depth(const std::string& text, int limit) {
  int depth = 0, deepest = 0;
  bool in_string = false, escaped = false;
  for (char c : text) {
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > deepest && (deepest = depth) > limit) return deepest;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return deepest;
}

namespace {

// Whether a number token would reach RapidJSON 1.1.0's full-precision strtod with a zero
// significand, which it normalises with undefined behaviour (DiyFp::Normalize of zero; found
// by the checkpoint header fuzzer on 0.000…0): a zero written with an exponent or with more
// than 22 fractional digits. iteragpu writes zero as 0 or 0.0.
bool zero_beyond_fast_path(const std::string& token) {
  // The number as RapidJSON reads it: -? digits (. digits)? ([eE] ...)?
  std::size_t i = token.size() > 0 && token[0] == '-' ? 1 : 0;
  std::size_t fraction_digits = 0;
  for (; i < token.size() && token[i] >= '0' && token[i] <= '9'; ++i)
    if (token[i] != '0') return false;
  if (i < token.size() && token[i] == '.')
    for (++i; i < token.size() && token[i] >= '0' && token[i] <= '9'; ++i) {
      if (token[i] != '0') return false;
      ++fraction_digits;
    }
  const bool exponent = i < token.size() && (token[i] == 'e' || token[i] == 'E');
  return exponent || fraction_digits > 22;
}

// Whether a fraction or exponent number token has more than 19 significant digits: its
// significand no longer fits RapidJSON 1.1.0's 64-bit fast path and reaches the same
// full-precision strtod, which normalised a zero there with undefined behaviour (found by the
// checkpoint header fuzzer on 0.0000000000000184467440737095516159999). iteragpu writes at
// most 17 significant digits. An integer keeps to RapidJSON's 64-bit integer path up to 20
// digits (2^64 - 1 has 20); a longer one is read as a double by the same strtod, where
// 18446744073709551615 followed by a digit from 5 up rounds the significand over to zero
// (found by the checkpoint config fuzzer on 18446744073709551615551615). iteragpu writes no
// integer beyond 2^64 - 1.
bool significand_beyond_fast_path(const std::string& token) {
  const bool integer = token.find_first_of(".eE") == std::string::npos;
  std::size_t significant = 0;
  bool leading = true;
  for (char c : token) {
    if (c == 'e' || c == 'E') break;
    if (c < '0' || c > '9') continue;
    if (leading && c == '0') continue;
    leading = false;
    ++significant;
  }
  return significant > (integer ? 20 : 19);
}

}  // namespace

// Offset of the first number token that is longer than `limit` characters or a zero or a
// significand beyond the fast path, or npos. Long runs of digits also take RapidJSON's full-precision paths;
// iteragpu writes no number longer than 25 characters.
std::size_t unsafe_json_number_offset(const std::string& text, std::size_t limit) {
  bool in_string = false, escaped = false;
  std::size_t start = std::string::npos;
  for (std::size_t i = 0; i <= text.size(); ++i) {
    const char c = i < text.size() ? text[i] : ' ';
    if (in_string) {
      if (escaped) escaped = false;
      else if (c == '\\') escaped = true;
      else if (c == '"') in_string = false;
      continue;
    }
    const bool number_char = (c >= '0' && c <= '9') || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-';
    // A number starts with a digit or a minus sign ("true" and "false" hold an e).
    const bool starts_number = (c >= '0' && c <= '9') || c == '-';
    if (start != std::string::npos ? number_char : starts_number) {
      if (start == std::string::npos) start = i;
      continue;
    }
    if (start != std::string::npos) {
      const std::string token = text.substr(start, i - start);
      if (token.size() > limit || zero_beyond_fast_path(token) || significand_beyond_fast_path(token))
        return start;
      start = std::string::npos;
    }
    if (c == '"') in_string = true;
  }
  return std::string::npos;
}

std::string json_text_refusal(const std::string& text) {
  if (json_nesting_depth(text, kMaxJsonDepth) > kMaxJsonDepth)
    return "nested more than " + std::to_string(kMaxJsonDepth) + " levels deep";
  const std::size_t unsafe_number = unsafe_json_number_offset(text, kMaxJsonNumberLength);
  if (unsafe_number != std::string::npos)
    return "a number at offset " + std::to_string(unsafe_number) + " that is longer than " +
           std::to_string(kMaxJsonNumberLength) + " characters or a zero with an exponent (iteragpu "
           "writes neither)";
  return "";
}

}  // namespace iteragpu
