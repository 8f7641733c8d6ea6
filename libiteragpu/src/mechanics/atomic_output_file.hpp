#pragma once
// Result files are new files: never overwritten, never left half-written. The content is
// written to a temporary file beside the target and linked into place only when complete.

#include <string>

namespace iteragpu {

// Checks, before any work, that `path` names nothing yet (not even a dangling symbolic
// link) and that its directory exists and is writable. Throws UsageError (empty path,
// naming `field`), OutputExists, or ResourceUnavailable.
void ensure_output_absent(const std::string& path, const std::string& field = "output");

// Creates `path` with `content`, atomically and exclusively: a temporary file created with
// O_EXCL in the same directory is written, flushed to disk and hard-linked to `path`, which
// fails with OutputExists if `path` appeared meanwhile. On any error the temporary file is
// removed and nothing is left at `path`.
void publish_exclusively(const std::string& path, const std::string& content);

// Replaces (or creates) `path` with `content` atomically: a complete temporary file in the
// same directory, flushed to disk, renamed over `path`. Readers see the old file or the new
// one, never a mix. Through a symbolic link the file it points to is replaced (the link
// stays); the file keeps its permission bits.
void replace_atomically(const std::string& path, const std::string& content);

// `path` with every symbolic link resolved when it exists, else `path` itself.
std::string resolved_existing_path(const std::string& path);

// Temporary files are never left behind: each is removed by its writer on any error, by a
// signal handler (remove_live_temporary_files, iteragpu/output_files.hpp), and after a
// SIGKILL by the next writer of the same file (temporaries whose process is gone).

// An exclusive lock (flock) on the directory holding `path`, held for the object's life:
// processes that update files in that directory take turns. Waits for the lock.
class DirectoryLock {
 public:
  explicit DirectoryLock(const std::string& path);
  ~DirectoryLock();
  DirectoryLock(const DirectoryLock&) = delete;
  DirectoryLock& operator=(const DirectoryLock&) = delete;

 private:
  int fd_ = -1;
};

}  // namespace iteragpu
