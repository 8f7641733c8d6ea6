#include "hub/hub_reference.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdlib>

#include "mechanics/input_file.hpp"

namespace iteragpu {
namespace {

constexpr std::size_t kMaxRepositoryIdLength = 96;  // huggingface_hub's REPO_ID_MAX_LENGTH

bool is_id_character(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
}

// One part of an id, as validate_repo_id accepts it.
bool is_id_part(const std::string& part) {
  if (part.empty() || !std::all_of(part.begin(), part.end(), is_id_character)) return false;
  for (char edge : {part.front(), part.back()})
    if (edge == '-' || edge == '.') return false;
  return part.find("--") == std::string::npos && part.find("..") == std::string::npos;
}

std::string environment(const char* name) {
  const char* value = std::getenv(name);
  return value ? std::string(value) : std::string();
}

bool is_true(std::string value) {
  std::transform(value.begin(), value.end(), value.begin(), [](unsigned char c) { return std::toupper(c); });
  return value == "1" || value == "ON" || value == "YES" || value == "TRUE";
}

std::string home_folder() {
  const std::string home = environment("HOME");
  return home.empty() ? std::string("/") : home;
}

bool is_folder(const std::string& path) {
  struct stat info {};
  return ::stat(path.c_str(), &info) == 0 && S_ISDIR(info.st_mode);
}

// The first line of a small text file (a cache's ref, the token file), whitespace trimmed;
// empty when there is none. Read as every input is (InputFile): a FIFO or a device in its
// place is refused, not waited on.
std::string first_line(const std::string& path, const char* what) {
  constexpr std::uint64_t kMaxLineFileBytes = 64 * 1024;
  std::string line;
  try {
    line = read_input_file(path, what, kMaxLineFileBytes);
  } catch (const InputFileError&) {
    return "";  // absent or unreadable: as if not there, as huggingface_hub takes it
  }
  line = line.substr(0, line.find('\n'));
  const auto space = [](unsigned char c) { return std::isspace(c) != 0; };
  line.erase(line.begin(), std::find_if_not(line.begin(), line.end(), space));
  line.erase(std::find_if_not(line.rbegin(), line.rend(), space).base(), line.end());
  return line;
}

}  // namespace

bool is_commit_hash(const std::string& revision) {
  return revision.size() == 40 && std::all_of(revision.begin(), revision.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

std::optional<HubReference> parse_hub_reference(const std::string& text) {
  HubReference reference;
  const std::size_t at = text.find('@');
  reference.repository = text.substr(0, at);
  reference.revision = at == std::string::npos ? "main" : text.substr(at + 1);
  if (reference.repository.size() > kMaxRepositoryIdLength || reference.revision.empty()) return std::nullopt;
  // A revision is a git ref name: no control characters, spaces, "..", or a leading '/'.
  for (unsigned char c : reference.revision)
    if (c < 0x21 || c == 0x7f || c == '\\' || c == '~' || c == '^' || c == ':' || c == '?' || c == '*' || c == '[')
      return std::nullopt;
  if (reference.revision.find("..") != std::string::npos || reference.revision.front() == '/') return std::nullopt;
  // "org/name" only: a bare name is taken for a path (the Hub serves legacy bare names
  // under an org now), and so is anything that ends as a checkpoint file does.
  const std::size_t slash = reference.repository.find('/');
  if (slash == std::string::npos) return std::nullopt;
  for (const char* suffix : {".safetensors", ".json"}) {
    const std::string end(suffix);
    const std::string& r = reference.repository;
    if (r.size() >= end.size() && r.compare(r.size() - end.size(), end.size(), end) == 0) return std::nullopt;
  }
  const std::string owner = reference.repository.substr(0, slash), name = reference.repository.substr(slash + 1);
  if (!is_id_part(owner) || !is_id_part(name)) return std::nullopt;
  return reference;
}

HubSettings HubSettings::from_environment() {
  HubSettings settings;
  std::string endpoint = environment("HF_ENDPOINT");
  while (!endpoint.empty() && endpoint.back() == '/') endpoint.pop_back();
  if (!endpoint.empty()) settings.endpoint = endpoint;

  std::string hf_home = environment("HF_HOME");
  if (hf_home.empty()) {
    const std::string xdg = environment("XDG_CACHE_HOME");
    hf_home = (xdg.empty() ? home_folder() + "/.cache" : xdg) + "/huggingface";
  }
  settings.cache_folder = environment("HF_HUB_CACHE");
  if (settings.cache_folder.empty()) settings.cache_folder = environment("HUGGINGFACE_HUB_CACHE");
  if (settings.cache_folder.empty()) settings.cache_folder = hf_home + "/hub";

  for (const char* variable : {"HF_TOKEN", "HUGGING_FACE_HUB_TOKEN"}) {
    settings.token = environment(variable);
    if (!settings.token.empty()) {
      settings.token_source = variable;
      break;
    }
  }
  if (settings.token.empty()) {
    std::string token_file = environment("HF_TOKEN_PATH");
    if (token_file.empty()) token_file = hf_home + "/token";
    settings.token = first_line(token_file, "token file");
    if (!settings.token.empty()) settings.token_source = token_file;
  }
  settings.offline = is_true(environment("HF_HUB_OFFLINE"));
  return settings;
}

std::optional<CachedSnapshot> find_cached_snapshot(const HubSettings& settings, const HubReference& reference) {
  std::string folder_name = "models--" + reference.repository;
  for (std::size_t slash; (slash = folder_name.find('/')) != std::string::npos;)
    folder_name.replace(slash, 1, "--");
  const std::string repository_folder = settings.cache_folder + "/" + folder_name;
  CachedSnapshot snapshot;
  snapshot.commit = is_commit_hash(reference.revision) ? reference.revision
                                                       : first_line(repository_folder + "/refs/" + reference.revision,
                                                                    "Hugging Face cache ref");
  if (!is_commit_hash(snapshot.commit)) return std::nullopt;
  snapshot.folder = repository_folder + "/snapshots/" + snapshot.commit;
  if (!is_folder(snapshot.folder)) return std::nullopt;
  return snapshot;
}

}  // namespace iteragpu
