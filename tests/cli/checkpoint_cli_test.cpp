// `iteragpu estimate --checkpoint` end to end: text and JSON (validated against
// checkpoint-estimate.schema.json), --by-tensor, folders, exit codes, one-line errors naming
// the file, and inputs that must be refused without hanging (FIFO, directory).
#include <gtest/gtest.h>
#include <rapidjson/document.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdio>

#include "process_runner.hpp"
#include "safetensors_writer.hpp"
#include "schema_check.hpp"

namespace iteragpu::testing {
namespace {

constexpr int kTimedOut = 124;  // timeout(1): the command hung

class CheckpointCli : public ::testing::Test {
 protected:
  void SetUp() override {
    write_safetensors(dir_.file("model-00001-of-00002.safetensors"),
                      {{"model.embed_tokens.weight", "BF16", {1000, 64}}, {"model.norm.weight", "F32", {64}}});
    write_safetensors(dir_.file("model-00002-of-00002.safetensors"), {{"lm_head.weight", "BF16", {1000, 64}}});
    write_file(dir_.file("model.safetensors.index.json"),
               R"({"metadata": {"total_size": 256256}, "weight_map": {
                    "lm_head.weight": "model-00002-of-00002.safetensors",
                    "model.embed_tokens.weight": "model-00001-of-00002.safetensors",
                    "model.norm.weight": "model-00001-of-00002.safetensors"}})");
  }
  // The CLI under timeout(1), so that a command that blocks fails instead of hanging.
  static ProcessResult cli(const std::vector<std::string>& args) {
    std::vector<std::string> argv{"/usr/bin/timeout", "20", ITERAGPU_CLI_PATH};
    argv.insert(argv.end(), args.begin(), args.end());
    return run_process(argv);
  }
  static void expect_refused(const ProcessResult& r, const std::string& expected) {
    EXPECT_NE(r.exit_code, kTimedOut) << "the command hung";
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_EQ(r.out, "");
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_EQ(r.err.rfind("iteragpu estimate: error: ", 0), 0u) << r.err;
    EXPECT_NE(r.err.find(expected), std::string::npos) << r.err;
  }
  TempDir dir_;
};

TEST_F(CheckpointCli, ShardedIndexAsJsonMatchesTheSchema) {
  const ProcessResult r = cli({"estimate", "--checkpoint", dir_.file("model.safetensors.index.json"),
                               "--reserve-gib", "2", "--format", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(schema_violation(r.out, "checkpoint-estimate.schema.json"), "");
  rapidjson::Document doc;
  doc.Parse(r.out.c_str());
  ASSERT_FALSE(doc.HasParseError());
  EXPECT_STREQ(doc["checkpoint"]["layout"].GetString(), "sharded");
  EXPECT_EQ(doc["checkpoint"]["index_total_size"].GetUint64(), 256256u);
  EXPECT_EQ(doc["shards"].Size(), 2u);
  EXPECT_EQ(doc["tensor_count"].GetUint64(), 3u);
  EXPECT_STREQ(doc["parameters"].GetString(), "128064");
  EXPECT_STREQ(doc["weights"]["bytes"].GetString(), "256256");
  EXPECT_STREQ(doc["weights"]["gib"].GetString(), "0.0002386569976806640625");
  EXPECT_STREQ(doc["total"]["gib"].GetString(), "2.0002386569976806640625");
  EXPECT_STREQ(doc["dtypes"][0]["dtype"].GetString(), "BF16");
  EXPECT_STREQ(doc["dtypes"][0]["memory"]["bytes"].GetString(), "256000");
  EXPECT_STREQ(doc["dtypes"][1]["dtype"].GetString(), "F32");
  EXPECT_FALSE(doc.HasMember("tensors"));
  EXPECT_TRUE(doc["reserve_is_assumption"].GetBool());
}

TEST_F(CheckpointCli, ByTensorListsEveryTensorInTextAndJson) {
  const ProcessResult text = cli({"estimate", "--checkpoint", dir_.path(), "--by-tensor"});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  for (const char* expected : {"model.embed_tokens.weight", "lm_head.weight", "[1000, 64]", "128,000",
                               "model-00002-of-00002.safetensors", "Not included: activations, KV cache"})
    EXPECT_NE(text.out.find(expected), std::string::npos) << expected << "\n" << text.out;
  const ProcessResult json = cli({"estimate", "--checkpoint", dir_.path(), "--by-tensor", "--format", "json"});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  EXPECT_EQ(schema_violation(json.out, "checkpoint-estimate.schema.json"), "");
  rapidjson::Document doc;
  doc.Parse(json.out.c_str());
  ASSERT_TRUE(doc.HasMember("tensors"));
  ASSERT_EQ(doc["tensors"].Size(), 3u);
  EXPECT_STREQ(doc["tensors"][2]["name"].GetString(), "lm_head.weight");
  EXPECT_EQ(doc["tensors"][2]["bytes"].GetUint64(), 128000u);
  EXPECT_STREQ(doc["tensors"][2]["shard"].GetString(), "model-00002-of-00002.safetensors");
}

TEST_F(CheckpointCli, FolderFormsAndASingleFile) {
  // A folder with one index reads the index.
  const ProcessResult sharded = cli({"estimate", "--checkpoint", dir_.path()});
  ASSERT_EQ(sharded.exit_code, 0) << sharded.err;
  EXPECT_NE(sharded.out.find("model.safetensors.index.json (sharded: 2 shards)"), std::string::npos) << sharded.out;
  // A folder with one .safetensors file and no index reads that file.
  TempDir single;
  write_safetensors(single.file("model.safetensors"), {{"w", "I8", {64, 64}}, {"s", "F16", {64}}});
  const ProcessResult file = cli({"estimate", "--checkpoint", single.path(), "--format", "json"});
  ASSERT_EQ(file.exit_code, 0) << file.err;
  EXPECT_EQ(schema_violation(file.out, "checkpoint-estimate.schema.json"), "");
  EXPECT_NE(file.out.find("\"layout\": \"single file\""), std::string::npos);
  EXPECT_NE(file.out.find("\"bytes\": \"4224\""), std::string::npos) << file.out;
  // Two files and no index: which one is meant is not guessed.
  write_safetensors(single.file("other.safetensors"), {{"w", "I8", {1}}});
  expect_refused(cli({"estimate", "--checkpoint", single.path()}),
                 single.path() + ": holds 2 .safetensors files and no index (model.safetensors, other.safetensors)");
}

TEST_F(CheckpointCli, FifoIsRefusedWithoutHanging) {
  const std::string fifo = dir_.file("pipe.safetensors");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  expect_refused(cli({"estimate", "--checkpoint", fifo}), fifo + ": is a FIFO (named pipe), not a regular file");
  // Named by an index as a shard: refused the same way.
  write_file(dir_.file("p.safetensors.index.json"), R"({"weight_map": {"x": "pipe.safetensors"}})");
  expect_refused(cli({"estimate", "--checkpoint", dir_.file("p.safetensors.index.json")}), fifo + ": is a FIFO");
}

TEST_F(CheckpointCli, DirectoriesAreRefusedWhereAFileIsNeeded) {
  TempDir folder;
  ASSERT_EQ(mkdir(folder.file("model.safetensors").c_str(), 0700), 0);
  expect_refused(cli({"estimate", "--checkpoint", folder.path()}),
                 folder.file("model.safetensors") + ": is a directory, not a regular file");
  TempDir empty;
  expect_refused(cli({"estimate", "--checkpoint", empty.path()}),
                 empty.path() + ": holds no .safetensors file and no *.safetensors.index.json index");
}

TEST_F(CheckpointCli, InvalidCheckpointsExitTwoNamingTheFileAndTheReason) {
  const std::string shard = dir_.file("model-00002-of-00002.safetensors");
  const std::string header = R"({"lm_head.weight": 1})";
  write_file(shard, le64(header.size()) + header);
  expect_refused(cli({"estimate", "--checkpoint", dir_.path()}),
                 shard + ": tensor 'lm_head.weight' is a number, not an object");
  write_file(shard, "short");
  expect_refused(cli({"estimate", "--checkpoint", dir_.path()}), shard + ": is 5 bytes, shorter than the 8-byte");
  std::remove(shard.c_str());
  expect_refused(cli({"estimate", "--checkpoint", dir_.path()}), shard + ": does not exist");
  expect_refused(cli({"estimate", "--checkpoint", dir_.file("nothing.safetensors")}), "does not exist");
}

TEST_F(CheckpointCli, OptionsThatDoNotGoTogether) {
  const std::string index = dir_.file("model.safetensors.index.json");
  expect_refused(cli({"estimate", "--checkpoint", index, "--parameters", "7B"}),
                 "--checkpoint: cannot be combined with --parameters");
  expect_refused(cli({"estimate", "--checkpoint", index, "--bits", "16"}),
                 "--checkpoint: cannot be combined with --bits");
  expect_refused(cli({"estimate", "--parameters", "7B", "--bits", "16", "--by-tensor"}),
                 "--by-tensor: lists the tensors of a checkpoint; give --checkpoint PATH");
  expect_refused(cli({"estimate", "--checkpoint", ""}), "--checkpoint: is empty");
  expect_refused(cli({"estimate", "--checkpoint", index, "--reserve-gib", "-1"}), "--reserve-gib");
  expect_refused(cli({"estimate", "--checkpoint"}), "--checkpoint");
}

TEST_F(CheckpointCli, HelpMentionsTheCheckpointForms) {
  const ProcessResult r = cli({"estimate", "--help"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("--checkpoint"), std::string::npos);
  EXPECT_NE(r.out.find("--by-tensor"), std::string::npos);
  EXPECT_NE(r.out.find(".safetensors.index.json"), std::string::npos);
}

}  // namespace
}  // namespace iteragpu::testing
