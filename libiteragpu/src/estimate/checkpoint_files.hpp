#pragma once
// Which files a checkpoint path names, and their safetensors headers, cross-checked.
//
// A path is a .safetensors file, a sharded checkpoint's index (*.safetensors.index.json:
// {"metadata": {...}, "weight_map": {tensor: shard file}}), or a folder holding exactly one
// such index (else exactly one .safetensors file). For an index, every shard it names is read
// and must hold exactly the tensors the index maps to it; no tensor may be in two shards.
// Only headers are read. Failures are InputFileError "PATH: reason" (DataFileError, exit 2).

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "estimate/safetensors_header.hpp"

namespace iteragpu {

struct CheckpointShardFile {
  std::string name;  // as the index names it, or the file's own name
  std::string path;  // as opened
  std::uint64_t file_bytes = 0;
  SafetensorsHeader header;
};

struct CheckpointFiles {
  std::string resolved;  // the .safetensors file or the index that was read
  bool sharded = false;  // read through an index
  std::optional<std::uint64_t> index_total_size;  // the index's metadata.total_size, if an integer
  std::vector<CheckpointShardFile> shards;        // sorted by name
};

CheckpointFiles read_checkpoint_files(const std::string& path);

}  // namespace iteragpu
