#pragma once
// Files iteragpu writes (results, tables, reports) are complete or absent: each is written
// to a temporary file beside it and moved into place when complete.

namespace iteragpu {

// Removes the temporary files this process is writing. Async-signal-safe: for a handler of
// SIGINT/SIGTERM/SIGHUP that then ends the process. (After a SIGKILL, the next writer of the
// same file removes what was left.)
void remove_live_temporary_files() noexcept;

}  // namespace iteragpu
