#pragma once
// The files of a checkpoint wherever they are, read through one interface: a local folder
// (a path, or a snapshot folder of the Hugging Face cache), or a Hub repository's config.json,
// index and safetensors headers fetched once over HTTP and held in memory. The readers
// (checkpoint_files.cpp, decoder_checkpoint.cpp) never know which.

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "estimate/checkpoint_files.hpp"
#include "hub/hub_reference.hpp"
#include "iteragpu/model_origin.hpp"

namespace iteragpu {

class JsonWriter;

class ModelFiles {
 public:
  virtual ~ModelFiles() = default;
  const ModelOrigin& origin() const { return origin_; }

  // The names of the files at the top of the snapshot, sorted.
  virtual std::vector<std::string> top_level_names() const = 0;
  virtual bool has(const std::string& name) const = 0;
  // How messages name a file: its path, or "org/name@revision/file" for the Hub.
  virtual std::string display(const std::string& name) const = 0;
  // How messages name the whole: the folder, or "org/name@revision".
  virtual std::string display_whole() const = 0;
  // A small file whole (config.json, an index), at most `limit` bytes.
  virtual std::string read_text(const std::string& name, const std::string& what, std::uint64_t limit) const = 0;
  // A safetensors file's size and header (never its data), read and checked once: a
  // prediction reads the checkpoint at each step that needs it, the headers come from memory.
  CheckpointShardFile read_shard(const std::string& name, const std::string& what) const;
  // The folder on this machine whose files hold the weights; empty when only headers were read.
  virtual std::string weights_folder() const = 0;

 protected:
  virtual CheckpointShardFile read_shard_once(const std::string& name, const std::string& what) const = 0;
  ModelOrigin origin_;

 private:
  mutable std::mutex shards_mutex_;
  mutable std::map<std::string, CheckpointShardFile> shards_;
};

// A local folder's files (`folder` as written; "" stands for the current folder without a prefix).
std::unique_ptr<const ModelFiles> local_model_files(const std::string& folder, ModelOrigin origin);

// A Hub snapshot held in memory: each file's first bytes (all of a small file, the length
// and header of a safetensors file) and its size.
struct FetchedFile {
  std::string bytes;
  std::uint64_t size = 0;
};
std::unique_ptr<const ModelFiles> fetched_model_files(std::vector<std::pair<std::string, FetchedFile>> files,
                                                      ModelOrigin origin);

// How a model is reached when it is named by a Hub id.
struct HubAccess {
  long timeout_ms = 10000;  // per HTTP request (--timeout)
};

// `model` as the user gave it: a path that exists, else a Hub id (cache, then the Hub).
// `field` names the option in messages ("model", "checkpoint"). UsageError for an id that
// names nothing that can be read (404, gated, offline and not cached), HubUnreachable when
// the network fails. A path is returned as it is, its errors left to the readers.
std::shared_ptr<const ModelFiles> open_model_files(const std::string& model, const std::string& field,
                                                   const HubAccess& access);

// A Hub repository's config.json, index and safetensors headers at one commit, fetched over
// HTTP (hub_checkpoint.cpp); UsageError(field) or HubUnreachable as open_model_files says.
std::unique_ptr<const ModelFiles> fetch_hub_model_files(const HubReference& reference, const HubSettings& settings,
                                                        const std::string& field);

// --timeout's seconds per HTTP request: a decimal above 0, at most 600; UsageError(field).
long parse_hub_timeout_ms(const std::string& text, const std::string& field);

// `"model_source": {"read_from": "hub" | "huggingface_cache", "repository", "revision",
// "commit", "location"}`: the record of a model named by a Hub id.
void write_model_source(JsonWriter& json, const ModelOrigin& origin);

}  // namespace iteragpu
