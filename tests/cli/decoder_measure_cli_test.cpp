// `iteragpu measure --model DIR` end to end with the fake plugin: the checkpoint run's rows in
// the text report and a valid file, and the synthetic MLP's sizes refused beside --model.
#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <algorithm>
#include <string>
#include <vector>

#include "process_runner.hpp"
#include "schema_check.hpp"
#include "tiny_checkpoint.hpp"

namespace iteragpu::testing {
namespace {

const std::string kFakePlugin = ITERAGPU_FAKE_BACKEND_PATH;

std::size_t line_count(const std::string& text) {
  return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
}

TEST(DecoderMeasureCli, CheckpointIsMeasuredWithTheFakePlugin) {
  TempDir dir;
  const std::string model = dir.file("tiny-llama");
  TinyCheckpoint().write(model);
  const std::string output = dir.file("decoder.json");
  const ProcessResult r = run_cli(
      {"measure", "--model", model, "--new-tokens", "2", "--output", output, "--backend", kFakePlugin});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  ASSERT_TRUE(path_exists(output));
  EXPECT_NE(r.out.find("cold prefill"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("warm decode 2"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("warm decode 3"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("LlamaForCausalLM (2 layers"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Result written to " + output), std::string::npos) << r.out;

  const std::string json = read_file(output);
  ASSERT_EQ(schema_violation(json, "measurement.schema.json"), "") << json;
  rapidjson::Document doc;
  doc.Parse(json.c_str());
  // weights_load, inputs, then cold, 1 warm-up and 2 warm sequences of a prefill and 2 decodes.
  EXPECT_EQ(doc["phases"].Size(), 2u + 4 * 3);
  EXPECT_STREQ(doc["decoder_model"]["dtype"].GetString(), "bfloat16");  // the checkpoint's
  EXPECT_EQ(doc["decoder_model"]["new_tokens"].GetInt(), 2);
  EXPECT_STREQ(doc["decoder_run"]["attention_backend"].GetString(), "test-double");
  EXPECT_EQ(doc["decoder_run"]["first_sequence_tokens"].Size(), 3u);  // prefill and 2 decode steps
}

// Several GPUs, one worker each: the summary's figures come from the checkpoint's own rows
// (weights_load, the warm sequences), and every device completes.
TEST(DecoderMeasureCli, EveryDeviceMeasuresTheCheckpointInItsOwnWorker) {
  TempDir dir;
  const std::string model = dir.file("tiny-llama");
  TinyCheckpoint().write(model);
  const std::string output = dir.file("summary.json");
  const ProcessResult r = run_cli({"measure", "--model", model, "--new-tokens", "2", "--device", "all", "--output",
                                   output, "--backend", kFakePlugin},
                                  {{"ITERAGPU_FAKE_BACKEND", "gpus=2"}});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("Complete: yes"), std::string::npos) << r.out;
  EXPECT_TRUE(path_exists(dir.file("summary-cuda0.json")));
  EXPECT_TRUE(path_exists(dir.file("summary-cuda1.json")));
}

TEST(DecoderMeasureCli, WidthBesideModelIsRefused) {
  TempDir dir;
  const std::string model = dir.file("tiny-llama");
  TinyCheckpoint().write(model);
  const std::string output = dir.file("decoder.json");
  const ProcessResult r = run_cli({"measure", "--model", model, "--width", "8", "--output", output});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(line_count(r.err), 1u) << r.err;
  EXPECT_NE(r.err.find("--width"), std::string::npos) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_FALSE(path_exists(output));
  EXPECT_EQ(list_directory(dir.path()), std::vector<std::string>{"tiny-llama"});
}

}  // namespace
}  // namespace iteragpu::testing
