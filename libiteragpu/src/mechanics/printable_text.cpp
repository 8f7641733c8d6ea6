#include "iteragpu/printable_text.hpp"

#include <cstdio>

namespace iteragpu {
namespace {

// The length of the control character at text[i] (1 for C0 and DEL, 2 for a C1 character
// encoded as 0xC2 0x80–0x9F), or 0 when there is none there.
std::size_t control_length(const std::string& text, std::size_t i) {
  const unsigned char c = static_cast<unsigned char>(text[i]);
  if (c < 0x20 || c == 0x7f) return 1;
  if (c == 0xc2 && i + 1 < text.size()) {
    const unsigned char next = static_cast<unsigned char>(text[i + 1]);
    if (next >= 0x80 && next <= 0x9f) return 2;
  }
  return 0;
}

}  // namespace

std::string printable(const std::string& text) {
  std::string shown;
  shown.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t length = control_length(text, i);
    if (length == 0) {
      shown += text[i++];
      continue;
    }
    for (std::size_t k = 0; k < length; ++k, ++i) {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\x%02x", static_cast<unsigned char>(text[i]));
      shown += escaped;
    }
  }
  return shown;
}

bool has_control_characters(const std::string& text) {
  for (std::size_t i = 0; i < text.size(); ++i)
    if (control_length(text, i) != 0) return true;
  return false;
}

}  // namespace iteragpu
