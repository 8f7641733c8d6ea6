#pragma once
// Whether a stream may carry terminal control sequences (the progress line's "\r\033[K"):
// only a terminal, and never when NO_COLOR is set (https://no-color.org) or TERM is "dumb".
// The CLI and the Python module both ask here, so logs and pipes never get escape codes.

#include <unistd.h>

#include <cstdlib>
#include <cstring>

namespace iteragpu {

inline bool may_use_escape_codes(int fd) {
  const char* no_color = std::getenv("NO_COLOR");
  if (no_color != nullptr && no_color[0] != '\0') return false;
  const char* term = std::getenv("TERM");
  if (term != nullptr && std::strcmp(term, "dumb") == 0) return false;
  return isatty(fd) == 1;
}

}  // namespace iteragpu
