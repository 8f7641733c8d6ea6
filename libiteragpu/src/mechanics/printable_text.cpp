#include "iteragpu/printable_text.hpp"

#include <cstdio>

namespace iteragpu {
namespace {

// Characters that are invisible yet change what a line shows: Unicode's format characters
// (category Cf: bidirectional overrides and isolates such as U+202E, zero-width characters,
// the byte order mark, tags) and the line and paragraph separators U+2028 and U+2029.
bool is_format_character(char32_t c) {
  struct Range {
    char32_t first, last;
  };
  static constexpr Range kFormat[] = {
      {0x00AD, 0x00AD},   {0x0600, 0x0605},   {0x061C, 0x061C},   {0x06DD, 0x06DD},   {0x070F, 0x070F},
      {0x0890, 0x0891},   {0x08E2, 0x08E2},   {0x180E, 0x180E},   {0x200B, 0x200F},   {0x2028, 0x202E},
      {0x2060, 0x2064},   {0x2066, 0x206F},   {0xFEFF, 0xFEFF},   {0xFFF9, 0xFFFB},   {0x110BD, 0x110BD},
      {0x110CD, 0x110CD}, {0x13430, 0x1343F}, {0x1BCA0, 0x1BCA3}, {0x1D173, 0x1D17A}, {0xE0001, 0xE0001},
      {0xE0020, 0xE007F}};
  for (const Range& range : kFormat)
    if (c >= range.first && c <= range.last) return true;
  return false;
}

// The UTF-8 sequence at text[i]: its length and code point, or length 0 where the bytes are
// not well-formed UTF-8 (a stray continuation byte, an overlong form, a surrogate, a cut).
std::size_t decode(const std::string& text, std::size_t i, char32_t& code_point) {
  const unsigned char lead = static_cast<unsigned char>(text[i]);
  std::size_t length = 0;
  char32_t minimum = 0;
  if (lead < 0x80) {
    code_point = lead;
    return 1;
  } else if ((lead & 0xE0) == 0xC0) {
    length = 2, code_point = lead & 0x1F, minimum = 0x80;
  } else if ((lead & 0xF0) == 0xE0) {
    length = 3, code_point = lead & 0x0F, minimum = 0x800;
  } else if ((lead & 0xF8) == 0xF0) {
    length = 4, code_point = lead & 0x07, minimum = 0x10000;
  } else {
    return 0;
  }
  if (i + length > text.size()) return 0;
  for (std::size_t k = 1; k < length; ++k) {
    const unsigned char next = static_cast<unsigned char>(text[i + k]);
    if ((next & 0xC0) != 0x80) return 0;
    code_point = (code_point << 6) | (next & 0x3F);
  }
  if (code_point < minimum || code_point > 0x10FFFF || (code_point >= 0xD800 && code_point <= 0xDFFF)) return 0;
  return length;
}

// How the character at text[i] is shown: "" when it is shown as it is (its length in
// `length`), else its escaped form.
std::string escaped_at(const std::string& text, std::size_t i, std::size_t& length) {
  char32_t c = 0;
  length = decode(text, i, c);
  char escaped[16];
  if (length == 0) {  // not UTF-8: the byte
    length = 1;
    std::snprintf(escaped, sizeof escaped, "\\x%02x", static_cast<unsigned char>(text[i]));
    return escaped;
  }
  if (c < 0x20 || c == 0x7f || (c >= 0x80 && c <= 0x9f)) {  // C0, DEL, C1: their bytes
    std::string bytes;
    for (std::size_t k = 0; k < length; ++k) {
      std::snprintf(escaped, sizeof escaped, "\\x%02x", static_cast<unsigned char>(text[i + k]));
      bytes += escaped;
    }
    return bytes;
  }
  if (is_format_character(c)) {
    std::snprintf(escaped, sizeof escaped, c > 0xFFFF ? "\\U%08x" : "\\u%04x", static_cast<unsigned>(c));
    return escaped;
  }
  return "";
}

}  // namespace

std::string printable(const std::string& text) {
  std::string shown;
  shown.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    std::size_t length = 0;
    const std::string escaped = escaped_at(text, i, length);
    if (escaped.empty()) {
      shown.append(text, i, length);
    } else {
      shown += escaped;
    }
    i += length;
  }
  return shown;
}

bool has_control_characters(const std::string& text) {
  for (std::size_t i = 0; i < text.size();) {
    std::size_t length = 0;
    if (!escaped_at(text, i, length).empty()) return true;
    i += length;
  }
  return false;
}

}  // namespace iteragpu
