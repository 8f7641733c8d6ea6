#pragma once
// Text that came from outside (a file, the command line, the environment, the GPU runtime) as
// a text view may print it: every control character (C0, DEL, and C1 in UTF-8) and every byte
// that is not UTF-8 written as \xNN, every format character (U+202E and the other
// bidirectional controls, zero-width characters, U+2028/U+2029) as \uNNNN, so an escape
// sequence cannot change a terminal, a line break cannot forge a line of output and an
// override cannot reorder one. The one rule for every text and Markdown view and every error
// line, on the command line and in Python's exceptions.

#include <string>

namespace iteragpu {

std::string printable(const std::string& text);

// Whether `text` holds anything printable() would escape. The result is always UTF-8.
bool has_control_characters(const std::string& text);

}  // namespace iteragpu
