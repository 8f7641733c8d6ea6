#pragma once
// Which files a checkpoint path names, and their safetensors headers, cross-checked.
//
// A path is a .safetensors file, a sharded checkpoint's index (*.safetensors.index.json:
// {"metadata": {...}, "weight_map": {tensor: shard file}}), or a folder holding exactly one
// such index (else exactly one .safetensors file). For an index, every shard it names is read
// and must hold exactly the tensors the index maps to it; no tensor may be in two shards.
// Only headers are read. Failures are InputFileError "PATH: reason" (DataFileError, exit 2).

#include <cstdint>
#include <map>
#include <optional>
#include <unordered_map>
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

class ModelFiles;

// A path: a .safetensors file, an index, or a folder holding one.
CheckpointFiles read_checkpoint_files(const std::string& path);
// A folder's or a Hub snapshot's files: its one index, else its one .safetensors file.
CheckpointFiles read_checkpoint_files(const ModelFiles& folder);

// What an index says, checked (a JSON object with a weight_map of shard names that stay
// beside the index); InputFileError "INDEX: reason".
struct CheckpointIndex {
  std::optional<std::uint64_t> total_size;  // metadata.total_size, if an integer
  std::unordered_map<std::string, std::string> shard_of_tensor;
  std::map<std::string, std::vector<std::string>> tensors_of_shard;  // by shard name, index order
};
CheckpointIndex parse_checkpoint_index(const std::string& text, const std::string& index_path);

}  // namespace iteragpu
