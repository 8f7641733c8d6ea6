// Hub ids in process: which texts are ids (the rest are paths), the environment
// huggingface_hub reads with its defaults, the cache's refs and snapshots, and --timeout. The
// HTTP side runs against a real server in tests/hub/test_hub.py.

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <map>
#include <optional>
#include <string>

#include "estimate/model_files.hpp"
#include "hub/http_fetch.hpp"
#include "hub/hub_reference.hpp"
#include "iteragpu/error.hpp"
#include "process_runner.hpp"

namespace iteragpu {
namespace {

TEST(HubReference, TakesOrgNameWithAnOptionalRevision) {
  const auto plain = parse_hub_reference("Qwen/Qwen2.5-7B-Instruct");
  ASSERT_TRUE(plain);
  EXPECT_EQ(plain->repository, "Qwen/Qwen2.5-7B-Instruct");
  EXPECT_EQ(plain->revision, "main");
  const auto tagged = parse_hub_reference("meta-llama/Llama-3.1-8B@refs/pr/12");
  ASSERT_TRUE(tagged);
  EXPECT_EQ(tagged->repository, "meta-llama/Llama-3.1-8B");
  EXPECT_EQ(tagged->revision, "refs/pr/12");
}

TEST(HubReference, LeavesPathsAndMalformedIdsToBePaths) {
  for (const char* text : {"llama", "./llama", "/models/llama", "models/llama/extra", "a/b.safetensors",
                           "a/model.safetensors.index.json", "org/-name", "org/name-", "org/na--me", "org/na..me",
                           "org/name@", "org/name@a..b", "org/name@/x", "org/na me", "or\ng/name", "org/name@v 1",
                           ""})
    EXPECT_FALSE(parse_hub_reference(text)) << text;
  EXPECT_FALSE(parse_hub_reference(std::string(48, 'a') + "/" + std::string(48, 'b')));  // 97 characters
  EXPECT_TRUE(parse_hub_reference(std::string(47, 'a') + "/" + std::string(48, 'b')));
}

TEST(HubReference, KnowsACommitHash) {
  EXPECT_TRUE(is_commit_hash("0123456789abcdef0123456789abcdef01234567"));
  EXPECT_FALSE(is_commit_hash("0123456789ABCDEF0123456789abcdef01234567"));
  EXPECT_FALSE(is_commit_hash("main"));
}

// Sets environment variables for one test and restores them.
using Variables = std::map<std::string, std::optional<std::string>>;

class Environment {
 public:
  explicit Environment(const Variables& values) {
    for (const auto& [name, value] : values) {
      const char* old = getenv(name.c_str());
      saved_[name] = old ? std::optional<std::string>(old) : std::nullopt;
      if (value)
        setenv(name.c_str(), value->c_str(), 1);
      else
        unsetenv(name.c_str());
    }
  }
  ~Environment() {
    for (const auto& [name, value] : saved_) {
      if (value)
        setenv(name.c_str(), value->c_str(), 1);
      else
        unsetenv(name.c_str());
    }
  }

 private:
  std::map<std::string, std::optional<std::string>> saved_;
};

const std::map<std::string, std::optional<std::string>> kNoHubVariables = {
    {"HF_ENDPOINT", std::nullopt},  {"HF_HOME", std::nullopt},         {"HF_HUB_CACHE", std::nullopt},
    {"HUGGINGFACE_HUB_CACHE", std::nullopt}, {"HF_TOKEN", std::nullopt}, {"HUGGING_FACE_HUB_TOKEN", std::nullopt},
    {"HF_TOKEN_PATH", std::nullopt}, {"HF_HUB_OFFLINE", std::nullopt}, {"XDG_CACHE_HOME", std::nullopt}};

TEST(HubSettings, UseHuggingFaceHubsDefaults) {
  Environment environment(kNoHubVariables);
  Environment home(Variables{{"HOME", "/home/renter"}});
  const HubSettings settings = HubSettings::from_environment();
  EXPECT_EQ(settings.endpoint, "https://huggingface.co");
  EXPECT_EQ(settings.cache_folder, "/home/renter/.cache/huggingface/hub");
  EXPECT_FALSE(settings.offline);
}

TEST(HubSettings, ReadTheVariablesInHuggingFaceHubsOrder) {
  testing::TempDir dir;
  testing::write_file(dir.file("token"), "hf_from_file\n");
  Environment environment(kNoHubVariables);
  {
    Environment set(Variables{{"HF_HOME", dir.path()}, {"HF_ENDPOINT", "http://mirror.example/"}, {"HF_HUB_OFFLINE", "yes"}});
    const HubSettings settings = HubSettings::from_environment();
    EXPECT_EQ(settings.endpoint, "http://mirror.example");
    EXPECT_EQ(settings.cache_folder, dir.path() + "/hub");
    EXPECT_EQ(settings.token, "hf_from_file");
    EXPECT_EQ(settings.token_source, dir.file("token"));
    EXPECT_TRUE(settings.offline);
  }
  {
    Environment set(Variables{{"HF_HOME", dir.path()}, {"HUGGINGFACE_HUB_CACHE", "/legacy"}, {"HUGGING_FACE_HUB_TOKEN", "hf_old"},
                     {"HF_HUB_OFFLINE", "0"}});
    const HubSettings settings = HubSettings::from_environment();
    EXPECT_EQ(settings.cache_folder, "/legacy");
    EXPECT_EQ(settings.token, "hf_old");
    EXPECT_FALSE(settings.offline);
  }
  {
    Environment set(Variables{{"HF_HUB_CACHE", "/new"}, {"HUGGINGFACE_HUB_CACHE", "/legacy"}, {"HF_TOKEN", "hf_new"},
                     {"HUGGING_FACE_HUB_TOKEN", "hf_old"}, {"XDG_CACHE_HOME", "/xdg"}});
    const HubSettings settings = HubSettings::from_environment();
    EXPECT_EQ(settings.cache_folder, "/new");
    EXPECT_EQ(settings.token, "hf_new");
    EXPECT_EQ(settings.token_source, "HF_TOKEN");
  }
}

TEST(HubCache, FindsASnapshotByRefOrByCommit) {
  testing::TempDir dir;
  const std::string commit = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
  const std::string repository = dir.file("models--org--name");
  for (const std::string& folder : {repository, repository + "/refs", repository + "/refs/refs",
                                    repository + "/refs/refs/pr", repository + "/snapshots",
                                    repository + "/snapshots/" + commit})
    ASSERT_EQ(mkdir(folder.c_str(), 0755), 0) << folder;
  testing::write_file(repository + "/refs/main", commit);  // huggingface_hub writes no newline
  testing::write_file(repository + "/refs/refs/pr/1", commit + "\n");
  HubSettings settings;
  settings.cache_folder = dir.path();
  for (const char* revision : {"main", "refs/pr/1", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"}) {
    const auto snapshot = find_cached_snapshot(settings, {"org/name", revision});
    ASSERT_TRUE(snapshot) << revision;
    EXPECT_EQ(snapshot->commit, commit);
    EXPECT_EQ(snapshot->folder, repository + "/snapshots/" + commit);
  }
  EXPECT_FALSE(find_cached_snapshot(settings, {"org/name", "v2"}));
  EXPECT_FALSE(find_cached_snapshot(settings, {"org/other", "main"}));
  EXPECT_FALSE(find_cached_snapshot(settings, {"org/name", "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"}));
}

TEST(HubCache, RefusesARefThatIsAFifoInsteadOfWaitingOnIt) {
  testing::TempDir dir;
  const std::string repository = dir.file("models--org--name");
  for (const std::string& folder : {repository, repository + "/refs"}) ASSERT_EQ(mkdir(folder.c_str(), 0755), 0);
  ASSERT_EQ(mkfifo((repository + "/refs/main").c_str(), 0644), 0);
  HubSettings settings;
  settings.cache_folder = dir.path();
  EXPECT_FALSE(find_cached_snapshot(settings, {"org/name", "main"}));  // returns: no writer is waited for
}

TEST(HubTimeout, TakesSecondsToTheMillisecond) {
  EXPECT_EQ(parse_hub_timeout_ms("10", "timeout"), 10000);
  EXPECT_EQ(parse_hub_timeout_ms("2.5", "timeout"), 2500);
  EXPECT_EQ(parse_hub_timeout_ms("0.001", "timeout"), 1);
  EXPECT_EQ(parse_hub_timeout_ms("600", "timeout"), 600000);
  for (const char* bad : {"0", "0.0", "600.001", "601", "-1", "1e3", "1.", ".5", "1.2345", "", " 1", "1 s", "nan"}) {
    try {
      parse_hub_timeout_ms(bad, "timeout");
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const UsageError& error) {
      EXPECT_EQ(error.field(), "timeout");
      EXPECT_NE(std::string(error.what()).find("is not a timeout"), std::string::npos) << error.what();
    }
  }
}

TEST(HubUrl, EncodesEveryByteButUnreservedOnes) {
  EXPECT_EQ(url_encoded("refs/pr/1", false), "refs%2Fpr%2F1");
  EXPECT_EQ(url_encoded("sub dir/model.safetensors", true), "sub%20dir/model.safetensors");
  EXPECT_EQ(url_encoded("Qwen2.5-7B_x~", false), "Qwen2.5-7B_x~");
  EXPECT_EQ(url_encoded("\xc3\xa9?#%", false), "%C3%A9%3F%23%25");
}

TEST(OpenModelFiles, ReadsAnExistingPathAsAPathEvenWhenItLooksLikeAnId) {
  testing::TempDir dir;
  ASSERT_EQ(mkdir(dir.file("org").c_str(), 0755), 0);
  ASSERT_EQ(mkdir(dir.file("org/name").c_str(), 0755), 0);
  Environment offline(Variables{{"HF_HUB_OFFLINE", "1"}, {"HF_HUB_CACHE", dir.file("cache")}});
  const auto files = open_model_files(dir.file("org/name"), "model", {});
  EXPECT_FALSE(files->origin().is_hub_id());
  EXPECT_EQ(files->weights_folder(), dir.file("org/name"));
  // The same text from elsewhere is an id; offline and not cached, it is refused in one line.
  try {
    open_model_files("org/name-not-here", "model", {});
    ADD_FAILURE() << "an id neither here nor cached was accepted offline";
  } catch (const UsageError& error) {
    EXPECT_EQ(error.field(), "model");
    EXPECT_NE(std::string(error.what()).find("HF_HUB_OFFLINE forbids reading it from the Hub"), std::string::npos);
  }
}

}  // namespace
}  // namespace iteragpu
