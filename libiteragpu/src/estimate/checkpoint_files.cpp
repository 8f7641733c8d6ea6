#include "estimate/checkpoint_files.hpp"

#include <errno.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <memory>
#include <unordered_map>

#include "estimate/model_files.hpp"
#include "mechanics/json_input.hpp"

namespace iteragpu {
namespace {

constexpr const char* kIndexSuffix = ".safetensors.index.json";
constexpr const char* kFileSuffix = ".safetensors";

bool ends_with(const std::string& text, const std::string& suffix) {
  return text.size() > suffix.size() && text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string base_name(const std::string& path) {
  const std::size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// "" for a name without a folder: the files beside it are named without a prefix.
std::string folder_of(const std::string& path) {
  const std::size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return "";
  return slash == 0 ? "/" : path.substr(0, slash);
}

// "a, b, c" with at most `shown` names, then how many more.
std::string name_list(const std::vector<std::string>& names, std::size_t shown = 8) {
  std::string text;
  for (std::size_t i = 0; i < names.size() && i < shown; ++i) text += (i ? ", " : "") + names[i];
  if (names.size() > shown) text += " and " + std::to_string(names.size() - shown) + " more";
  return text;
}

// The one file a folder stands for: its index, else its only .safetensors file.
std::string file_in_folder(const ModelFiles& folder) {
  std::vector<std::string> indexes, files;
  for (const std::string& name : folder.top_level_names()) {
    if (ends_with(name, kIndexSuffix)) indexes.push_back(name);
    if (ends_with(name, kFileSuffix)) files.push_back(name);
  }
  const std::string whole = folder.display_whole();
  if (indexes.size() == 1) return indexes.front();
  if (indexes.size() > 1)
    throw InputFileError(whole, "holds " + std::to_string(indexes.size()) + " checkpoint indexes (" +
                                    name_list(indexes) + "); name the one to read");
  if (files.size() == 1) return files.front();
  if (files.empty())
    throw InputFileError(whole, "holds no .safetensors file and no *.safetensors.index.json index");
  throw InputFileError(whole, "holds " + std::to_string(files.size()) + " .safetensors files and no index (" +
                                  name_list(files) + "); name the file to read, or the index of a sharded checkpoint");
}

// A shard name from an index: a relative path that stays beside the index.
bool stays_beside_index(const std::string& name) {
  if (name.empty() || name.front() == '/') return false;
  std::size_t start = 0;
  for (;;) {
    const std::size_t slash = name.find('/', start);
    const std::string part = name.substr(start, slash == std::string::npos ? std::string::npos : slash - start);
    if (part == ".." || part.empty()) return false;
    if (slash == std::string::npos) return true;
    start = slash + 1;
  }
}

CheckpointFiles read_index(const ModelFiles& folder, const std::string& index_name) {
  const std::string index_path = folder.display(index_name);
  const CheckpointIndex index =
      parse_checkpoint_index(folder.read_text(index_name, "checkpoint index", kMaxJsonDocumentBytes), index_path);
  CheckpointFiles files;
  files.resolved = index_path;
  files.sharded = true;
  files.index_total_size = index.total_size;

  // Every shard first (a missing one is named as such), then duplicates across shards, then
  // the index against what each shard holds, both ways.
  const std::string what = "shard named by " + base_name(index_path);
  for (const auto& entry : index.tensors_of_shard) files.shards.push_back(folder.read_shard(entry.first, what));
  std::unordered_map<std::string, std::string> found_in;  // tensor → shard that holds it
  for (const auto& shard : files.shards)
    for (const auto& tensor : shard.header.tensors) {
      const auto [where, inserted] = found_in.emplace(tensor.name, shard.name);
      if (!inserted)
        throw InputFileError(index_path, "tensor " + quoted_tensor_name(tensor.name) + " is in two shards, " +
                                             quoted_tensor_name(where->second) + " and " +
                                             quoted_tensor_name(shard.name));
    }
  for (const auto& shard : files.shards)
    for (const auto& tensor : shard.header.tensors) {
      const auto listed = index.shard_of_tensor.find(tensor.name);
      if (listed == index.shard_of_tensor.end())
        throw InputFileError(index_path, "shard " + quoted_tensor_name(shard.name) + " holds tensor " +
                                             quoted_tensor_name(tensor.name) + ", which the index does not list");
      if (listed->second != shard.name)
        throw InputFileError(index_path, "shard " + quoted_tensor_name(shard.name) + " holds tensor " +
                                             quoted_tensor_name(tensor.name) + ", which the index maps to " +
                                             quoted_tensor_name(listed->second));
    }
  for (const auto& [shard_name, tensors] : index.tensors_of_shard)
    for (const auto& tensor : tensors)
      if (found_in.find(tensor) == found_in.end())
        throw InputFileError(index_path, "maps tensor " + quoted_tensor_name(tensor) + " to shard " +
                                             quoted_tensor_name(shard_name) + ", which does not hold it");
  return files;
}

}  // namespace

CheckpointIndex parse_checkpoint_index(const std::string& text, const std::string& index_path) {
  rapidjson::Document document;
  const std::string problem = parse_json(text, document);
  if (!problem.empty()) throw InputFileError(index_path, problem);
  if (!document.IsObject()) throw InputFileError(index_path, "is not a JSON object; expected a checkpoint index");
  CheckpointIndex index;
  const auto metadata = document.FindMember("metadata");
  if (metadata != document.MemberEnd()) {
    if (!metadata->value.IsObject()) throw InputFileError(index_path, "\"metadata\" is not an object");
    const auto total = metadata->value.FindMember("total_size");
    if (total != metadata->value.MemberEnd() && total->value.IsUint64()) index.total_size = total->value.GetUint64();
  }
  const auto weight_map = document.FindMember("weight_map");
  if (weight_map == document.MemberEnd() || !weight_map->value.IsObject())
    throw InputFileError(index_path, "has no \"weight_map\" object; expected a checkpoint index "
                                     "{\"metadata\": {...}, \"weight_map\": {tensor: shard file}}");
  for (const auto& entry : weight_map->value.GetObject()) {
    const std::string tensor(entry.name.GetString(), entry.name.GetStringLength());
    if (!entry.value.IsString())
      throw InputFileError(index_path, "weight_map value of tensor " + quoted_tensor_name(tensor) +
                                           " is not a string (a shard file name)");
    const std::string shard(entry.value.GetString(), entry.value.GetStringLength());
    if (!stays_beside_index(shard))
      throw InputFileError(index_path, "weight_map maps tensor " + quoted_tensor_name(tensor) + " to " +
                                           quoted_tensor_name(shard) + ", not a file name beside the index");
    index.shard_of_tensor.emplace(tensor, shard);  // each name once: parse_json refuses a member named twice
    index.tensors_of_shard[shard].push_back(tensor);
  }
  if (index.tensors_of_shard.empty()) throw InputFileError(index_path, "weight_map lists no tensor");
  return index;
}

CheckpointFiles read_checkpoint_files(const ModelFiles& folder) {
  const std::string file = file_in_folder(folder);
  if (ends_with(file, ".json")) return read_index(folder, file);
  CheckpointFiles files;
  files.resolved = folder.display(file);
  files.shards.push_back(folder.read_shard(file, "safetensors checkpoint"));
  return files;
}

CheckpointFiles read_checkpoint_files(const std::string& path) {
  if (path.empty()) throw InputFileError("(empty name)", "the checkpoint path is empty");
  // stat, not open: a folder is a valid checkpoint; a FIFO or device is then refused by
  // InputFile, which never blocks on it.
  struct stat info {};
  if (::stat(path.c_str(), &info) == 0 && S_ISDIR(info.st_mode))
    return read_checkpoint_files(*local_model_files(path, ModelOrigin{}));
  const auto beside = local_model_files(folder_of(path), ModelOrigin{});
  if (ends_with(path, ".json")) return read_index(*beside, base_name(path));
  CheckpointFiles files;
  files.resolved = path;
  files.shards.push_back(beside->read_shard(base_name(path), "safetensors checkpoint"));
  return files;
}

}  // namespace iteragpu
