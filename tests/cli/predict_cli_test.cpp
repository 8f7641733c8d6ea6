// `iteragpu predict` end to end: with a compute capability (no backend loaded), with a
// device through the fake plugin, and its refusals (exit 2, one line).
#include <gtest/gtest.h>

#include <algorithm>

#include "process_runner.hpp"
#include "schema_check.hpp"

namespace iteragpu::testing {
namespace {

const std::string kFakePlugin = ITERAGPU_FAKE_BACKEND_PATH;

std::size_t line_count(const std::string& text) {
  return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
}

TEST(PredictCli, PredictsForAComputeCapabilityWithoutAGpu) {
  const ProcessResult r = run_cli({"predict", "--compute-capability", "9.0", "--batch", "2",
                                   "--context", "128", "--width", "1024", "--format", "json"},
                                  {{"ITERAGPU_BACKEND", "/nonexistent/plugin.so"}});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(schema_violation(r.out, "prediction.schema.json"), "") << r.out;
  EXPECT_NE(r.out.find("\"end\": 70275072"), std::string::npos);  // cold_forward allocated
}

TEST(PredictCli, TextShowsEveryPhase) {
  const ProcessResult r = run_cli({"predict", "--compute-capability", "8.0", "--warmup", "0"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* phase : {"model_load", "inputs", "cold_forward", "warm_forward"})
    EXPECT_NE(r.out.find(phase), std::string::npos) << phase;
  EXPECT_EQ(r.out.find("warmup "), std::string::npos);
}

TEST(PredictCli, ReadsTheGpuThroughTheBackendWithADevice) {
  const ProcessResult r = run_cli({"predict", "--device", "cuda:0", "--format", "json"},
                                  {{"ITERAGPU_BACKEND", kFakePlugin}});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(schema_violation(r.out, "prediction.schema.json"), "") << r.out;
  EXPECT_NE(r.out.find("\"gpu_name\": \"Fake GPU 0\""), std::string::npos) << r.out;
}

TEST(PredictCli, RefusesWhatItCannotPredictForInOneLine) {
  struct Case {
    std::vector<std::string> args;
    const char* expected;
  } cases[] = {
      {{"predict"}, "--device: required"},
      {{"predict", "--device", "cuda:0", "--compute-capability", "9.0"}, "not both"},
      {{"predict", "--compute-capability", "9"}, "not MAJOR.MINOR"},
      {{"predict", "--compute-capability", "9.x"}, "not MAJOR.MINOR"},
      {{"predict", "--compute-capability", "0.0"}, "not a compute capability of the workspace table"},
      // Well formed, but no GPU has them: no prediction "from the table" for them.
      {{"predict", "--compute-capability", "99.9"}, "expected one of 5.0, 5.2"},
      {{"predict", "--compute-capability", "1.0"}, "not a compute capability of the workspace table"},
      {{"predict", "--compute-capability", "9.0", "--width", "0"}, "--width"},
      {{"predict", "--compute-capability", "9.0", "--dtype", "int8"}, "--dtype"},
      {{"predict", "--device", "cuda:7"}, "cuda:7"},
  };
  for (const Case& c : cases) {
    const ProcessResult r = run_cli(c.args, {{"ITERAGPU_BACKEND", kFakePlugin}});
    EXPECT_EQ(r.exit_code, 2) << c.args.back() << ": " << r.err;
    EXPECT_EQ(line_count(r.err), 1u) << r.err;
    EXPECT_NE(r.err.find(c.expected), std::string::npos) << r.err;
    EXPECT_EQ(r.out, "");
  }
}

}  // namespace
}  // namespace iteragpu::testing
