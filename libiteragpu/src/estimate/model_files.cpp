#include "estimate/model_files.hpp"

#include <dirent.h>
#include <errno.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <map>

#include "hub/hub_reference.hpp"
#include "iteragpu/error.hpp"
#include "iteragpu/printable_text.hpp"
#include "mechanics/input_file.hpp"
#include "mechanics/json_output.hpp"
#include "mechanics/quantity_parser.hpp"

namespace iteragpu {

namespace {

std::string joined(const std::string& folder, const std::string& name) {
  return folder.empty() || folder.back() == '/' ? folder + name : folder + "/" + name;
}

class LocalFolder final : public ModelFiles {
 public:
  LocalFolder(std::string folder, ModelOrigin origin) : folder_(std::move(folder)) {
    origin_ = std::move(origin);
  }

  std::vector<std::string> top_level_names() const override {
    const std::string listed = folder_.empty() ? "." : folder_;
    std::unique_ptr<DIR, int (*)(DIR*)> directory(opendir(listed.c_str()), closedir);
    if (!directory) throw InputFileError(listed, "cannot be listed: " + std::string(std::strerror(errno)));
    std::vector<std::string> names;
    while (const dirent* entry = readdir(directory.get())) names.emplace_back(entry->d_name);
    std::sort(names.begin(), names.end());
    return names;
  }
  // A file read once is there for the rest of the process, as it was read.
  bool has(const std::string& name) const override {
    {
      const std::lock_guard<std::mutex> lock(texts_mutex_);
      for (const auto& [key, text] : texts_)
        if (key.first == name) return true;
    }
    struct stat info {};
    return ::stat(display(name).c_str(), &info) == 0;
  }
  std::string display(const std::string& name) const override { return joined(folder_, name); }
  std::string display_whole() const override { return folder_.empty() ? "." : folder_; }
  // Read once: every reader of a configuration (its checks, the workload, the predictor, the
  // measurer) asks for config.json again, and the process reads the file the first time only.
  std::string read_text(const std::string& name, const std::string& what, std::uint64_t limit) const override {
    const std::pair<std::string, std::uint64_t> key{name, limit};
    {
      const std::lock_guard<std::mutex> lock(texts_mutex_);
      const auto read = texts_.find(key);
      if (read != texts_.end()) return read->second;
    }
    std::string text = read_input_file(display(name), what, limit);  // throws: nothing kept
    const std::lock_guard<std::mutex> lock(texts_mutex_);
    return texts_.emplace(key, std::move(text)).first->second;
  }
  CheckpointShardFile read_shard_once(const std::string& name, const std::string& what) const override {
    const InputFile file(display(name), what);
    CheckpointShardFile shard;
    shard.name = name;
    shard.path = display(name);
    shard.file_bytes = file.size();
    shard.header = read_safetensors_header(file);
    return shard;
  }
  std::string weights_folder() const override { return display_whole(); }

 private:
  std::string folder_;
  mutable std::mutex texts_mutex_;
  mutable std::map<std::pair<std::string, std::uint64_t>, std::string> texts_;
};

class FetchedFiles final : public ModelFiles {
 public:
  FetchedFiles(std::vector<std::pair<std::string, FetchedFile>> files, ModelOrigin origin)
      : files_(std::make_move_iterator(files.begin()), std::make_move_iterator(files.end())) {
    origin_ = std::move(origin);
  }

  std::vector<std::string> top_level_names() const override {
    std::vector<std::string> names;
    for (const auto& entry : files_)
      if (entry.first.find('/') == std::string::npos) names.push_back(entry.first);
    return names;
  }
  bool has(const std::string& name) const override { return files_.count(name) != 0; }
  std::string display(const std::string& name) const override { return display_whole() + "/" + name; }
  std::string display_whole() const override { return origin_.given; }
  std::string read_text(const std::string& name, const std::string& what, std::uint64_t limit) const override {
    const FetchedFile& file = find(name, what);
    if (file.size > limit)
      throw InputFileError(display(name), "is larger than " + std::to_string(limit) + " bytes; refused as a " + what);
    return file.bytes;
  }
  CheckpointShardFile read_shard_once(const std::string& name, const std::string& what) const override {
    const FetchedFile& file = find(name, what);
    CheckpointShardFile shard;
    shard.name = name;
    shard.path = display(name);
    shard.file_bytes = file.size;
    const std::string_view bytes(file.bytes);
    const std::uint64_t length =
        safetensors_header_length(bytes.substr(0, kSafetensorsLengthBytes), file.size, shard.path);
    shard.header = parse_safetensors_header(bytes.substr(kSafetensorsLengthBytes, length), file.size, shard.path);
    return shard;
  }
  std::string weights_folder() const override { return ""; }

 private:
  const FetchedFile& find(const std::string& name, const std::string& what) const {
    const auto file = files_.find(name);
    if (file == files_.end()) throw InputFileError(display(name), "no such file in the repository (" + what + ")");
    return file->second;
  }
  std::map<std::string, FetchedFile> files_;
};

bool exists(const std::string& path) {
  struct stat info {};
  return ::stat(path.c_str(), &info) == 0;
}

// Whether a cache snapshot holds config.json and every weights file, so that nothing need
// be fetched: its index and each shard the index names, else model.safetensors.
bool snapshot_is_complete(const ModelFiles& snapshot) {
  if (!snapshot.has("config.json")) return false;
  if (snapshot.has("model.safetensors.index.json")) {
    try {
      const CheckpointIndex index = parse_checkpoint_index(
          snapshot.read_text("model.safetensors.index.json", "checkpoint index", kMaxJsonDocumentBytes),
          snapshot.display("model.safetensors.index.json"));
      for (const auto& shard : index.tensors_of_shard)
        if (!snapshot.has(shard.first)) return false;
      return true;
    } catch (const DataFileError&) {
      return true;  // read as it is: the reader then names what is wrong with it
    }
  }
  return snapshot.has("model.safetensors");
}

}  // namespace

CheckpointShardFile ModelFiles::read_shard(const std::string& name, const std::string& what) const {
  {
    const std::lock_guard<std::mutex> lock(shards_mutex_);
    const auto read = shards_.find(name);
    if (read != shards_.end()) return read->second;
  }
  CheckpointShardFile shard = read_shard_once(name, what);  // throws: nothing kept
  const std::lock_guard<std::mutex> lock(shards_mutex_);
  return shards_.emplace(name, std::move(shard)).first->second;
}

std::unique_ptr<const ModelFiles> local_model_files(const std::string& folder, ModelOrigin origin) {
  return std::make_unique<LocalFolder>(folder, std::move(origin));
}

std::unique_ptr<const ModelFiles> fetched_model_files(std::vector<std::pair<std::string, FetchedFile>> files,
                                                      ModelOrigin origin) {
  return std::make_unique<FetchedFiles>(std::move(files), std::move(origin));
}

std::shared_ptr<const ModelFiles> open_model_files(const std::string& model, const std::string& field,
                                                   const HubAccess& access) {
  ModelOrigin origin;
  origin.given = model;
  origin.location = model;
  const std::optional<HubReference> reference = model.empty() || exists(model) ? std::nullopt : parse_hub_reference(model);
  if (!reference) return local_model_files(model, origin);

  HubSettings settings = HubSettings::from_environment();
  settings.timeout_ms = access.timeout_ms;
  origin.repository = reference->repository;
  origin.revision = reference->revision;
  if (const auto cached = find_cached_snapshot(settings, *reference)) {
    origin.kind = ModelOrigin::Kind::kHuggingFaceCache;
    origin.commit = cached->commit;
    origin.location = cached->folder;
    auto snapshot = local_model_files(cached->folder, origin);
    if (snapshot_is_complete(*snapshot)) return snapshot;
  }
  if (settings.offline)
    throw UsageError(field, printable(model) + ": not a folder here, and not complete in the Hugging Face cache (" +
                                printable(settings.cache_folder) + "); HF_HUB_OFFLINE forbids reading it from the Hub");
  return fetch_hub_model_files(*reference, settings, field);
}

long parse_hub_timeout_ms(const std::string& text, const std::string& field) {
  const auto refuse = [&] {
    return UsageError(field, quoted_for_message(text) + " is not a timeout; expected seconds per HTTP request, a "
                                                        "decimal above 0 and at most 600 with at most 3 decimals, such "
                                                        "as 10 or 2.5");
  };
  Decimal seconds;
  try {
    seconds = parse_decimal(text, field, /*allow_negative=*/false);
  } catch (const UsageError&) {
    throw refuse();  // the same syntax, worded for a timeout
  }
  const Decimal milliseconds = exact::normalized(exact::multiply(seconds, BigInt(1000)));
  if (milliseconds.scale != 0 || milliseconds.mantissa <= 0 || milliseconds.mantissa > 600'000) throw refuse();
  return milliseconds.mantissa.convert_to<long>();
}

void write_model_source(JsonWriter& json, const ModelOrigin& origin) {
  json.key("model_source").begin_object();
  json.key("read_from").value(origin.kind == ModelOrigin::Kind::kHub ? "hub" : "huggingface_cache");
  json.key("repository").value(origin.repository).key("revision").value(origin.revision);
  json.key("commit").value(origin.commit).key("location").value(origin.location);
  json.end_object();
}

std::string ModelOrigin::text() const {
  if (kind == Kind::kPath) return "";
  std::string text = "Model: " + repository + (revision == "main" ? "" : " @ " + revision) + ", commit " + commit;
  if (kind == Kind::kHuggingFaceCache) return text + " (the Hugging Face cache: " + location + ")";
  return text + " (the Hugging Face Hub at " + location + ": config.json and safetensors headers only)";
}

std::string ModelOrigin::heading_line() const {
  return is_hub_id() ? printable(text()) + "\n" : std::string();
}

std::string ModelOrigin::traffic_text() const {
  if (kind != Kind::kHub) return "read " + given + " from " + location + " (no network)";
  char seconds_text[32];
  std::snprintf(seconds_text, sizeof seconds_text, "%.3f", seconds);
  return "read " + repository + " at commit " + commit + " from " + location + ": " + std::to_string(requests) +
         " HTTP requests, " + std::to_string(bytes) + " bytes, " + seconds_text + " s";
}

}  // namespace iteragpu
