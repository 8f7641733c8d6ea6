#include "estimate/checkpoint_files.hpp"

#include <dirent.h>
#include <errno.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <memory>
#include <unordered_map>

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

std::string folder_of(const std::string& path) {
  const std::size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

std::string joined(const std::string& folder, const std::string& name) {
  return folder.empty() || folder.back() == '/' ? folder + name : folder + "/" + name;
}

// "a, b, c" with at most `shown` names, then how many more.
std::string name_list(const std::vector<std::string>& names, std::size_t shown = 8) {
  std::string text;
  for (std::size_t i = 0; i < names.size() && i < shown; ++i) text += (i ? ", " : "") + names[i];
  if (names.size() > shown) text += " and " + std::to_string(names.size() - shown) + " more";
  return text;
}

// The one file a folder stands for: its index, else its only .safetensors file.
std::string file_in_folder(const std::string& folder) {
  std::unique_ptr<DIR, int (*)(DIR*)> directory(opendir(folder.c_str()), closedir);
  if (!directory) throw InputFileError(folder, "cannot be listed: " + std::string(std::strerror(errno)));
  std::vector<std::string> indexes, files;
  while (const dirent* entry = readdir(directory.get())) {
    const std::string name = entry->d_name;
    if (ends_with(name, kIndexSuffix)) indexes.push_back(name);
    if (ends_with(name, kFileSuffix)) files.push_back(name);
  }
  std::sort(indexes.begin(), indexes.end());
  std::sort(files.begin(), files.end());
  if (indexes.size() == 1) return joined(folder, indexes.front());
  if (indexes.size() > 1)
    throw InputFileError(folder, "holds " + std::to_string(indexes.size()) + " checkpoint indexes (" +
                                     name_list(indexes) + "); name the one to read");
  if (files.size() == 1) return joined(folder, files.front());
  if (files.empty())
    throw InputFileError(folder, "holds no .safetensors file and no *.safetensors.index.json index");
  throw InputFileError(folder, "holds " + std::to_string(files.size()) + " .safetensors files and no index (" +
                                   name_list(files) + "); name the file to read, or the index of a sharded checkpoint");
}

CheckpointShardFile read_shard(const std::string& name, const std::string& path, const std::string& what) {
  const InputFile file(path, what);
  CheckpointShardFile shard;
  shard.name = name;
  shard.path = path;
  shard.file_bytes = file.size();
  shard.header = read_safetensors_header(file);
  return shard;
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

CheckpointFiles read_index(const std::string& index_path) {
  rapidjson::Document document;
  const std::string problem =
      parse_json(read_input_file(index_path, "checkpoint index", kMaxJsonDocumentBytes), document);
  if (!problem.empty()) throw InputFileError(index_path, problem);
  if (!document.IsObject()) throw InputFileError(index_path, "is not a JSON object; expected a checkpoint index");
  CheckpointFiles files;
  files.resolved = index_path;
  files.sharded = true;

  const auto metadata = document.FindMember("metadata");
  if (metadata != document.MemberEnd()) {
    if (!metadata->value.IsObject()) throw InputFileError(index_path, "\"metadata\" is not an object");
    const auto total = metadata->value.FindMember("total_size");
    if (total != metadata->value.MemberEnd() && total->value.IsUint64())
      files.index_total_size = total->value.GetUint64();
  }
  const auto weight_map = document.FindMember("weight_map");
  if (weight_map == document.MemberEnd() || !weight_map->value.IsObject())
    throw InputFileError(index_path, "has no \"weight_map\" object; expected a checkpoint index "
                                     "{\"metadata\": {...}, \"weight_map\": {tensor: shard file}}");
  std::unordered_map<std::string, std::string> shard_of;  // tensor → shard name
  std::map<std::string, std::vector<std::string>> mapped;  // shard name → its tensors, index order
  for (const auto& entry : weight_map->value.GetObject()) {
    const std::string tensor(entry.name.GetString(), entry.name.GetStringLength());
    if (!entry.value.IsString())
      throw InputFileError(index_path, "weight_map value of tensor " + quoted_tensor_name(tensor) +
                                           " is not a string (a shard file name)");
    const std::string shard(entry.value.GetString(), entry.value.GetStringLength());
    if (!stays_beside_index(shard))
      throw InputFileError(index_path, "weight_map maps tensor " + quoted_tensor_name(tensor) + " to " +
                                           quoted_tensor_name(shard) + ", not a file name beside the index");
    shard_of.emplace(tensor, shard);  // each name once: parse_json refuses a member named twice
    mapped[shard].push_back(tensor);
  }
  if (mapped.empty()) throw InputFileError(index_path, "weight_map lists no tensor");

  // Every shard first (a missing one is named as such), then duplicates across shards, then
  // the index against what each shard holds, both ways.
  const std::string what = "shard named by " + base_name(index_path);
  for (const auto& entry : mapped)
    files.shards.push_back(read_shard(entry.first, joined(folder_of(index_path), entry.first), what));
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
      const auto listed = shard_of.find(tensor.name);
      if (listed == shard_of.end())
        throw InputFileError(index_path, "shard " + quoted_tensor_name(shard.name) + " holds tensor " +
                                             quoted_tensor_name(tensor.name) + ", which the index does not list");
      if (listed->second != shard.name)
        throw InputFileError(index_path, "shard " + quoted_tensor_name(shard.name) + " holds tensor " +
                                             quoted_tensor_name(tensor.name) + ", which the index maps to " +
                                             quoted_tensor_name(listed->second));
    }
  for (const auto& [shard_name, tensors] : mapped)
    for (const auto& tensor : tensors)
      if (found_in.find(tensor) == found_in.end())
        throw InputFileError(index_path, "maps tensor " + quoted_tensor_name(tensor) + " to shard " +
                                             quoted_tensor_name(shard_name) + ", which does not hold it");
  return files;
}

}  // namespace

CheckpointFiles read_checkpoint_files(const std::string& path) {
  if (path.empty()) throw InputFileError("(empty name)", "the checkpoint path is empty");
  // stat, not open: a folder is a valid checkpoint; a FIFO or device is then refused by
  // InputFile, which never blocks on it.
  struct stat info {};
  std::string file = path;
  if (::stat(path.c_str(), &info) == 0 && S_ISDIR(info.st_mode)) file = file_in_folder(path);
  if (ends_with(file, ".json")) return read_index(file);

  CheckpointFiles files;
  files.resolved = file;
  files.shards.push_back(read_shard(base_name(file), file, "safetensors checkpoint"));
  return files;
}

}  // namespace iteragpu
