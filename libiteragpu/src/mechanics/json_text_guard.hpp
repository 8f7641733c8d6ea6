#pragma once
// JSON text refused before it is parsed (json_text_guard.cpp): no dependency but the standard
// library, so the backend plugin compiles it with the payload codec.

#include <cstddef>
#include <string>

namespace iteragpu {

// Deeper than any document iteragpu writes (a measurement is 5 levels deep).
inline constexpr int kMaxJsonDepth = 64;
// Longer than any number iteragpu writes (at most 25 characters, "-1.2345678901234567e-308").
inline constexpr std::size_t kMaxJsonNumberLength = 64;

// The deepest nesting of arrays and objects in `text`, counting brackets outside strings;
// stops early once past `limit`.
int json_nesting_depth(const std::string& text, int limit);
// Offset of the first number token longer than `limit` characters, or one that would reach
// RapidJSON 1.1.0's full-precision strtod with a zero significand; npos when there is none.
std::size_t unsafe_json_number_offset(const std::string& text, std::size_t limit);
// "" for text within both limits, else why not in a few words: "nested more than 64 levels
// deep", "a number at offset 12 that is longer than 64 characters or ...".
std::string json_text_refusal(const std::string& text);

}  // namespace iteragpu
