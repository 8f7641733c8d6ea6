// A Hub repository's checkpoint read over HTTP without its weights: config.json at the
// revision asked, which names the commit (X-Repo-Commit); then, at that commit so every file
// comes from one snapshot, the index and model.safetensors' first bytes in parallel; then
// every shard's first bytes in parallel, and the rest of any header longer than that. The
// same first read as huggingface_hub's get_safetensors_metadata (100,000 bytes a file).

#include <chrono>

#include "estimate/model_files.hpp"
#include "hub/http_fetch.hpp"
#include "hub/hub_reference.hpp"
#include "iteragpu/error.hpp"
#include "iteragpu/printable_text.hpp"
#include "mechanics/input_file.hpp"

namespace iteragpu {

namespace {

constexpr std::uint64_t kFirstBytes = 100'000;
constexpr const char* kIndexName = "model.safetensors.index.json";
constexpr const char* kSingleName = "model.safetensors";

class HubReader {
 public:
  HubReader(const HubReference& reference, const HubSettings& settings, std::string field)
      : reference_(reference), settings_(settings), field_(std::move(field)) {
    http_.timeout_ms = settings.timeout_ms;
    http_.token = settings.token;
    shown_ = printable(reference.text());
  }

  HttpFetch whole(const std::string& revision, const std::string& name, std::uint64_t limit) const {
    return {url(revision, name), shown_ + "/" + printable(name), std::nullopt, 0, limit};
  }
  HttpFetch range(const std::string& revision, const std::string& name, std::uint64_t first,
                  std::uint64_t last) const {
    return {url(revision, name), shown_ + "/" + printable(name), first, last, 0};
  }
  std::vector<HttpAnswer> fetch(const std::vector<HttpFetch>& fetches) { return fetch_all(fetches, http_, totals_); }

  // An answer that is not a success, as the Hub means it.
  [[noreturn]] void refuse(const HttpAnswer& answer, const std::string& name) const {
    const std::string what = shown_ + "/" + printable(name);
    const std::string page = settings_.endpoint + "/" + reference_.repository;
    const std::string status = "HTTP " + std::to_string(answer.status);
    const std::string& code = answer.error_code;
    if (code == "GatedRepo" && answer.status == 401)
      throw UsageError(field_, what + ": a gated repository (" + status + "); set HF_TOKEN to a token of an account "
                                      "with access (or log in with `hf auth login`), after asking for access at " +
                                      page);
    if (code == "GatedRepo" || answer.status == 403)
      throw UsageError(field_, what + ": the token from " +
                                   (settings_.token_source.empty() ? std::string("nowhere") : settings_.token_source) +
                                   " has no access to this gated repository (" + status + "); ask for access at " +
                                   page);
    if (code == "RepoNotFound" || (answer.status == 401 && code.empty()))
      throw UsageError(field_, printable(reference_.repository) + ": no such repository on " + settings_.endpoint +
                                   " (" + status + "; a private one needs HF_TOKEN), and no folder of that name here");
    if (code == "RevisionNotFound")
      throw UsageError(field_, printable(reference_.repository) + ": no revision '" + printable(reference_.revision) +
                                   "' (" + status + "); expected a branch, a tag or a commit");
    if (answer.status == 404)
      throw UsageError(field_, what + ": no such file in the repository (" + status + ")");
    throw HubUnreachable(what + ": the Hub answered " + status +
                         (answer.status == 429 || answer.status >= 500 ? "; try again later" : ""));
  }

  ModelOrigin origin(const std::string& commit, double seconds) const {
    ModelOrigin origin;
    origin.kind = ModelOrigin::Kind::kHub;
    origin.given = reference_.text();
    origin.repository = reference_.repository;
    origin.revision = reference_.revision;
    origin.commit = commit;
    origin.location = settings_.endpoint;
    origin.requests = totals_.requests;
    origin.bytes = totals_.bytes;
    origin.seconds = seconds;
    return origin;
  }
  const std::string& shown() const { return shown_; }

 private:
  std::string url(const std::string& revision, const std::string& name) const {
    return settings_.endpoint + "/" + url_encoded(reference_.repository, true) + "/resolve/" +
           url_encoded(revision, false) + "/" + url_encoded(name, true);
  }

  const HubReference& reference_;
  const HubSettings& settings_;
  std::string field_;
  std::string shown_;
  HttpSettings http_;
  HttpTotals totals_;
};

bool succeeded(const HttpAnswer& answer) { return answer.status >= 200 && answer.status < 300; }

}  // namespace

std::unique_ptr<const ModelFiles> fetch_hub_model_files(const HubReference& reference, const HubSettings& settings,
                                                        const std::string& field) {
  const auto start = std::chrono::steady_clock::now();
  HubReader hub(reference, settings, field);

  HttpAnswer config = hub.fetch({hub.whole(reference.revision, "config.json", kMaxJsonDocumentBytes)}).front();
  if (!succeeded(config)) hub.refuse(config, "config.json");
  const std::string commit = config.repo_commit;
  if (!is_commit_hash(commit))
    throw HubUnreachable(hub.shown() + "/config.json: the answer names no commit (X-Repo-Commit: '" +
                         printable(commit) + "'); HF_ENDPOINT must be a Hugging Face Hub");
  if (is_commit_hash(reference.revision) && commit != reference.revision)
    throw HubUnreachable(hub.shown() + "/config.json: asked for commit " + reference.revision + ", the answer is of " +
                         commit);

  std::vector<std::pair<std::string, FetchedFile>> files;
  files.push_back({"config.json", {std::move(config.body), config.file_size}});
  std::vector<HttpAnswer> weights =
      hub.fetch({hub.whole(commit, kIndexName, kMaxJsonDocumentBytes), hub.range(commit, kSingleName, 0, kFirstBytes - 1)});
  std::vector<std::string> shards;
  std::vector<HttpAnswer> firsts;
  if (succeeded(weights[0])) {
    const CheckpointIndex index = parse_checkpoint_index(weights[0].body, hub.shown() + "/" + kIndexName);
    files.push_back({kIndexName, {std::move(weights[0].body), weights[0].file_size}});
    std::vector<HttpFetch> fetches;
    for (const auto& shard : index.tensors_of_shard) {
      shards.push_back(shard.first);
      fetches.push_back(hub.range(commit, shard.first, 0, kFirstBytes - 1));
    }
    firsts = hub.fetch(fetches);
  } else if (weights[0].status == 404 && succeeded(weights[1])) {
    shards.push_back(kSingleName);
    firsts.push_back(std::move(weights[1]));
  } else if (weights[0].status == 404 && weights[1].status == 404) {
    throw UsageError(field, hub.shown() + ": no " + kIndexName + " and no " + kSingleName + " at commit " + commit +
                                "; expected a checkpoint in safetensors format");
  } else {
    hub.refuse(weights[0].status == 404 ? weights[1] : weights[0], weights[0].status == 404 ? kSingleName : kIndexName);
  }

  // Headers longer than the first read: the rest of each, in parallel.
  std::vector<HttpFetch> rests;
  std::vector<std::size_t> rest_of;
  for (std::size_t i = 0; i < shards.size(); ++i) {
    if (!succeeded(firsts[i])) hub.refuse(firsts[i], shards[i]);
    const std::string shown = hub.shown() + "/" + printable(shards[i]);
    const std::string& bytes = firsts[i].body;
    if (bytes.size() < kSafetensorsLengthBytes)
      throw InputFileError(shown, "is " + std::to_string(firsts[i].file_size) +
                                      " bytes, shorter than the 8-byte header length of a safetensors file");
    const std::uint64_t needed =
        kSafetensorsLengthBytes + safetensors_header_length(std::string_view(bytes).substr(0, kSafetensorsLengthBytes),
                                                            firsts[i].file_size, shown);
    if (needed > bytes.size()) {
      rests.push_back(hub.range(commit, shards[i], bytes.size(), needed - 1));
      rest_of.push_back(i);
    } else {
      firsts[i].body.resize(needed);
    }
  }
  std::vector<HttpAnswer> more = hub.fetch(rests);
  for (std::size_t j = 0; j < more.size(); ++j) {
    if (!succeeded(more[j])) hub.refuse(more[j], shards[rest_of[j]]);
    firsts[rest_of[j]].body += more[j].body;
  }
  for (std::size_t i = 0; i < shards.size(); ++i)
    files.push_back({shards[i], {std::move(firsts[i].body), firsts[i].file_size}});

  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return fetched_model_files(std::move(files), hub.origin(commit, seconds));
}

}  // namespace iteragpu
