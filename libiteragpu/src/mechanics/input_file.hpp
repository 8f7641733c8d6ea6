#pragma once
// How every reader of the core opens a path: catalogs, results tables, measurement files,
// kit manifests and members, checkpoints. One mechanism, so that no reader can hang or grow
// without bound:
// - opened with O_NONBLOCK | O_NOCTTY: a FIFO or a terminal never blocks the open;
// - the type is checked on the open descriptor (no race with a stat of the name): only a
//   regular file is read; a directory, FIFO, device or socket is refused by name;
// - whole-file reads stop at a limit, so a file that grows cannot take the memory;
// - symbolic links are followed unless the caller refuses them (a lab kit's members).
// Failures are InputFileError: "PATH: reason", exit 2 from the CLI.

#include <cstdint>
#include <string>

#include "iteragpu/error.hpp"

namespace iteragpu {

class InputFileError : public DataFileError {
 public:
  InputFileError(const std::string& path, const std::string& reason)
      : DataFileError(path + ": " + reason), path_(path), reason_(reason) {}
  const std::string& path() const { return path_; }
  const std::string& reason() const { return reason_; }

 private:
  std::string path_;
  std::string reason_;
};

class InputFile {
 public:
  enum class Links { kFollow, kRefuse };

  // Opens `path` for reading (see above). `what` names the file in messages ("results
  // table", "measurement").
  InputFile(const std::string& path, const std::string& what, Links links = Links::kFollow);
  ~InputFile();
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;

  int descriptor() const { return fd_; }
  std::uint64_t size() const { return size_; }
  const std::string& path() const { return path_; }

  // The whole content; refused (InputFileError) beyond `max_bytes`.
  std::string read_all(std::uint64_t max_bytes) const;
  // Exactly `length` bytes at `offset` (pread); InputFileError when the file is shorter.
  std::string read_at(std::uint64_t offset, std::size_t length) const;

 private:
  std::string path_;
  std::string what_;
  int fd_ = -1;
  std::uint64_t size_ = 0;
};

// Limits for whole-file reads, generous for real files and far below the machine's memory.
inline constexpr std::uint64_t kMaxTableBytes = 256ULL << 20;        // CSV catalog, results table
inline constexpr std::uint64_t kMaxJsonDocumentBytes = 64ULL << 20;  // measurement, manifest

// The content of `path` (see InputFile), at most `max_bytes`.
std::string read_input_file(const std::string& path, const std::string& what, std::uint64_t max_bytes);

}  // namespace iteragpu
