#pragma once
// Files iteragpu writes (results, tables, reports) are complete or absent: each is written
// to a temporary file beside it and moved into place when complete.

namespace iteragpu {

// Removes the temporary files this process is writing. Async-signal-safe: for a handler of
// SIGINT/SIGTERM/SIGHUP that then ends the process. (After a SIGKILL, the next writer of the
// same file removes what was left.)
void remove_live_temporary_files() noexcept;

// Whether this process has put its result in place (a file published, a table replaced), or
// was told that another process did (note_output_committed: a measurement worker published
// the result). From then on the work is done: the handler of an interrupting signal lets the
// command finish and report success rather than end it with a status that says nothing was
// done. The flag and the file appear together: those signals are blocked while both change.
// Async-signal-safe.
bool output_committed() noexcept;
void note_output_committed() noexcept;

}  // namespace iteragpu
