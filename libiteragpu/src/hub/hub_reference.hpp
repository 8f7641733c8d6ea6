#pragma once
// A model named by a Hugging Face Hub repository id, "org/name" or "org/name@revision", and
// where huggingface_hub would look for it: the environment variables it reads, with its
// defaults (huggingface_hub's constants.py; the layout of its cache has been the same from
// 0.x to 1.x).

#include <optional>
#include <string>

namespace iteragpu {

struct HubReference {
  std::string repository;  // "org/name"
  std::string revision;    // a branch, a tag, "refs/pr/N" or a 40-hex commit; "main" if not given

  // As a user writes it: "org/name", or "org/name@revision" for another revision than main.
  std::string text() const { return revision == "main" ? repository : repository + "@" + revision; }
};

// The id's parts when `text` is written as a Hub id "org/name[@revision]" (each part as
// huggingface_hub's validate_repo_id accepts it: letters, digits, '-', '_', '.', at most 96
// characters in all, no "--" or "..", not starting or ending with '-' or '.'; not ending in
// .safetensors or .json); nullopt when it cannot be one.
std::optional<HubReference> parse_hub_reference(const std::string& text);

bool is_commit_hash(const std::string& revision);

// How the Hub is reached, read from the environment once per request.
struct HubSettings {
  std::string endpoint = "https://huggingface.co";  // HF_ENDPOINT, without a trailing '/'
  std::string cache_folder;  // HF_HUB_CACHE, else HUGGINGFACE_HUB_CACHE, else $HF_HOME/hub
  std::string token;         // HF_TOKEN, else HUGGING_FACE_HUB_TOKEN, else the token file
  std::string token_source;  // where the token came from, for messages; empty without one
  bool offline = false;      // HF_HUB_OFFLINE: 1, ON, YES or TRUE (any case)
  long timeout_ms = 10000;   // per request (--timeout)

  static HubSettings from_environment();
};

// The snapshot folder of `reference` in the cache, when the cache knows its revision:
// models--org--name/snapshots/<commit>, the commit read from refs/<revision> unless the
// revision is one. The folder may lack files; the caller checks what it needs.
struct CachedSnapshot {
  std::string folder;
  std::string commit;
};
std::optional<CachedSnapshot> find_cached_snapshot(const HubSettings& settings, const HubReference& reference);

}  // namespace iteragpu
