// `iteragpu compare` end to end: files written by the core (fake backend) and the real H200
// files, every --format, and every refusal as one line with exit 2.
#include <gtest/gtest.h>

#include <algorithm>

#include "fake_backend.hpp"
#include "iteragpu/phase_measurer.hpp"
#include "process_runner.hpp"
#include "schema_check.hpp"

namespace iteragpu::testing {
namespace {

#define EXPECT_CONTAINS(text, part) EXPECT_NE((text).find(part), std::string::npos) << (text)

const std::string kResults = ITERAGPU_SOURCE_DIR "/examples/results/";
// A real H200 run of a Llama 8B checkpoint (bfloat16, batch 4, context 4096, 16 new tokens).
const std::string kCheckpointRun = ITERAGPU_SOURCE_DIR "/examples/results/llama-8b-bfloat16-h200.json";

class CompareCli : public ::testing::Test {
 protected:
  // A float32 and a bfloat16 measurement of the same shape, written as measure writes them.
  void SetUp() override {
    for (const char* dtype : {"float32", "bfloat16"}) {
      MeasureRequest request;
      request.dtype = dtype;
      request.output = dir_.file(std::string(dtype) + ".json");
      PhaseMeasurer(std::make_shared<FakeBackend>()).measure(MeasureConfiguration::parse(request));
    }
  }
  std::string f32() const { return dir_.file("float32.json"); }
  std::string bf16() const { return dir_.file("bfloat16.json"); }
  TempDir dir_;
};

TEST_F(CompareCli, TextExplainsFloat32AgainstBfloat16) {
  const ProcessResult r = run_cli({"compare", f32(), bf16()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_CONTAINS(r.out, "Comparison of 2 measurements (ratios are to [1])\n  [1] " + f32() + ": Fake GPU 0, float32");
  EXPECT_CONTAINS(r.out, "[2] against [1]: configuration differs in dtype (float32 → bfloat16)");
  EXPECT_CONTAINS(r.out, "parameter bytes ×0.500");
  for (const char* title : {"Configuration", "Synthetic model", "Environment", "Peak bytes per phase",
                            "Warm forward times"})
    EXPECT_CONTAINS(r.out, title);
}

// Scripted figures are marked as every other view marks them, beside a real H200 file that is not.
TEST_F(CompareCli, MarksTestDoubleMeasurements) {
  for (const char* format : {"text", "markdown"}) {
    const ProcessResult r = run_cli({"compare", "--format", format, f32(), kResults + "mesures-float32.json"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const std::size_t first = r.out.find("[1] ");
    const std::size_t second = r.out.find("[2] ");
    ASSERT_NE(second, std::string::npos) << r.out;
    const std::string first_line = r.out.substr(first, r.out.find('\n', first) - first);
    const std::string second_line = r.out.substr(second, r.out.find('\n', second) - second);
    EXPECT_CONTAINS(first_line, "TEST DOUBLE: scripted figures");
    EXPECT_EQ(second_line.find("TEST DOUBLE"), std::string::npos) << second_line;
  }
}

TEST_F(CompareCli, EveryFormat) {
  const ProcessResult json = run_cli({"compare", f32(), bf16(), "--format", "json"});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  EXPECT_EQ(schema_violation(json.out, "comparison.schema.json"), "") << json.out;
  EXPECT_CONTAINS(json.out, "\"source\": \"" + bf16() + "\"");

  const ProcessResult csv = run_cli({"compare", "--format", "csv", f32(), bf16()});
  ASSERT_EQ(csv.exit_code, 0) << csv.err;
  EXPECT_EQ(csv.out.rfind("section,name,label,unit,same,value_1,value_2,ratio_2\n", 0), 0u) << csv.out;
  EXPECT_CONTAINS(csv.out, "configuration,dtype,dtype,,false,float32,bfloat16,\n");

  const ProcessResult markdown = run_cli({"compare", f32(), bf16(), "--format", "markdown"});
  ASSERT_EQ(markdown.exit_code, 0) << markdown.err;
  EXPECT_CONTAINS(markdown.out, "| ≠ dtype | float32 | bfloat16 |  |\n");
}

TEST_F(CompareCli, ThreeFilesAndTheRealH200Ones) {
  const ProcessResult r = run_cli({"compare", kResults + "mesures.json", kResults + "mesures-petit-essai.json",
                                   kResults + "mesures-tous-cuda0.json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_CONTAINS(r.out, "[3] against [1]: ");
  EXPECT_CONTAINS(r.out, "GPU NVIDIA H200");
  EXPECT_CONTAINS(r.out, "[3]/[1]");
}

TEST_F(CompareCli, RefusalsAreOneLineAndExitTwo) {
  write_file(dir_.file("not-json.json"), "{\"schema\": ");
  struct Case {
    std::vector<std::string> args;
    std::string expected;
  } cases[] = {
      {{"compare"}, "at least two measurements, got 0"},
      {{"compare", f32()}, "at least two measurements, got 1"},
      {{"compare", f32(), dir_.file("missing.json")}, dir_.file("missing.json") + ": "},
      {{"compare", f32(), dir_.file("not-json.json")}, dir_.file("not-json.json") + ": not an iteragpu measurement (not valid JSON"},
      {{"compare", f32(), kResults + "mesures-tous.json"}, "this is a multi-device summary: use the per-device measurement files"},
      {{"compare", f32(), kResults + "environment.json"}, "'iteragpu.environment', not \"iteragpu.measurement\""},
      {{"compare", f32(), dir_.path()}, dir_.path() + ": "},
      {{"compare", f32(), bf16(), "--format", "xml"}, "--format: 'xml' is not an output format; expected text, json, markdown or csv"},
      {{"compare", f32(), bf16(), "--sort", "x"}, "unrecognised option"},
      {{"compare", f32(), kCheckpointRun},
       "cannot compare a synthetic-MLP measurement with a checkpoint measurement: " + f32() +
           " measured the synthetic MLP, " + kCheckpointRun + " a checkpoint (LlamaForCausalLM)"},
  };
  for (const Case& c : cases) {
    const ProcessResult r = run_cli(c.args);
    EXPECT_EQ(r.exit_code, 2) << c.expected << ": " << r.err;
    EXPECT_EQ(r.out, "") << c.expected;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_EQ(r.err.rfind("iteragpu compare: error: ", 0), 0u) << r.err;
    EXPECT_CONTAINS(r.err, c.expected);
  }
}

// Two checkpoint measurements: the checkpoint's rows, its phases and rates, in every format.
TEST_F(CompareCli, CheckpointMeasurements) {
  const ProcessResult text = run_cli({"compare", kCheckpointRun, kCheckpointRun});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_CONTAINS(text.out, "NVIDIA H200, LlamaForCausalLM (32 layers, hidden 4096), bfloat16, batch 4, context 4096, 16 new tokens\n");
  for (const char* part : {"Checkpoint\n", "    parameter bytes          16,060,522,496", "Memory per phase\n",
                           "weights_load peak allocated", "decode peak allocated (largest of the steps)",
                           "device memory in use at the end (driver)", "228.8 tokens/s", "decode tokens/s ×1.000"})
    EXPECT_CONTAINS(text.out, part);
  EXPECT_EQ(text.out.find("Synthetic model"), std::string::npos) << text.out;
  const ProcessResult json = run_cli({"compare", kCheckpointRun, kCheckpointRun, "--format", "json"});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  EXPECT_EQ(schema_violation(json.out, "comparison.schema.json"), "");
  EXPECT_CONTAINS(json.out, "\"unit\": \"tokens_per_second\"");
  const ProcessResult csv = run_cli({"compare", kCheckpointRun, kCheckpointRun, "--format", "csv"});
  EXPECT_CONTAINS(csv.out, "times,decode_tokens_per_second,decode (batch over a decode step),tokens_per_second,true,"
                           "228.80291828970158,228.80291828970158,1\n");
}

TEST_F(CompareCli, HelpAndTheCommandList) {
  const ProcessResult help = run_cli({"compare", "--help"});
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_CONTAINS(help.out, "Usage: iteragpu compare A.json B.json ...");
  EXPECT_CONTAINS(help.out, "markdown");
  EXPECT_CONTAINS(run_cli({"--help"}).out, "  compare ");
}

}  // namespace
}  // namespace iteragpu::testing
