#pragma once
// Text that came from outside (a file, the command line, the environment, the GPU runtime) as
// a text view may print it: every control character (C0, DEL, and C1 in UTF-8) written as
// \xNN, so an escape sequence cannot change a terminal and a line break cannot forge a line
// of output. The one rule for every text and Markdown view and every error line.

#include <string>

namespace iteragpu {

std::string printable(const std::string& text);

// Whether `text` holds anything printable() would escape.
bool has_control_characters(const std::string& text);

}  // namespace iteragpu
