// `iteragpu measure` end to end: refusals (exit 2, one line, no file), and with the fake
// plugin the whole path: success, out of memory, interrupt, progress on a terminal only.
#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <algorithm>

#include "process_runner.hpp"
#include "schema_check.hpp"

namespace iteragpu::testing {
namespace {

const std::string kFakePlugin = ITERAGPU_FAKE_BACKEND_PATH;

std::vector<std::string> seed_command(const std::string& output) {
  return {"measure", "--device", "cuda:0", "--batch", "1", "--context", "16", "--width", "64",
          "--dtype", "float32", "--warmup", "1", "--repeats", "2", "--output", output};
}

std::vector<std::string> with(std::vector<std::string> args, std::initializer_list<std::string> more) {
  args.insert(args.end(), more);
  return args;
}

// The seed command with one option's value replaced (or one option added).
std::vector<std::string> seed_command_with(const std::string& output, const std::string& option,
                                           const std::string& value) {
  std::vector<std::string> args = seed_command(output);
  const auto found = std::find(args.begin(), args.end(), option);
  if (found != args.end()) {
    *(found + 1) = value;
  } else {
    args.insert(args.end(), {option, value});
  }
  return args;
}

std::size_t line_count(const std::string& text) {
  return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
}

// Exit 2 with exactly one line on stderr, nothing on stdout, nothing left in `dir`.
void expect_refused(const ProcessResult& r, const TempDir& dir, const std::string& expected_text) {
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(line_count(r.err), 1u) << r.err;
  EXPECT_NE(r.err.find(expected_text), std::string::npos) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_TRUE(list_directory(dir.path()).empty());
}

TEST(MeasureCli, ThisMachineRefusesWithExitTwoAndNoFile) {
  const ProcessResult environment = run_cli({"environment", "--format", "json"});
  if (environment.out.find("\"gpu_runtime_available\": true") != std::string::npos)
    GTEST_SKIP() << "this machine has a GPU: the gpu-labelled tests measure on it";
  TempDir dir;
  const ProcessResult r = run_cli(seed_command(dir.file("mesures-petit-essai.json")));
  // Without the plugin: no backend; with Debian's CPU LibTorch: no GPU.
  expect_refused(r, dir, ITERAGPU_TORCH_BACKEND_BUILT ? "no GPU available" : "no LibTorch backend");
  EXPECT_NE(r.err.find("nothing was measured"), std::string::npos) << r.err;
  // Debian's LibTorch has no CUDA: said in those words, with the README section that fixes it.
  if (ITERAGPU_TORCH_BACKEND_BUILT && environment.out.find("\"cuda_build_version\": null") != std::string::npos) {
    EXPECT_NE(r.err.find("was built without CUDA or ROCm (a CPU-only build)"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("docs/building.md, \"Measuring on a GPU machine\""), std::string::npos) << r.err;
    const ProcessResult text = run_cli({"environment"});
    EXPECT_NE(text.out.find("was built without CUDA or ROCm"), std::string::npos) << text.out;
  }
}

TEST(MeasureCli, ExistingOutputIsRefusedAndUntouched) {
  TempDir dir;
  const std::string output = dir.file("result.json");
  write_file(output, "an earlier result\n");
  const ProcessResult r = run_cli(with(seed_command(output), {"--backend", kFakePlugin}));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(line_count(r.err), 1u) << r.err;
  EXPECT_NE(r.err.find("already exists"), std::string::npos) << r.err;
  EXPECT_EQ(read_file(output), "an earlier result\n");
  EXPECT_EQ(list_directory(dir.path()), std::vector<std::string>{"result.json"});
}

TEST(MeasureCli, BadValuesAreOneLineNamingTheOption) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"--batch", "0"},        {"--batch", "abc"},     {"--batch", "1.5"},
      {"--batch", "1e3"},      {"--batch", "99999999999999999999"},
      {"--context", "-4"},     {"--width", ""},        {"--width", "20000000"},
      {"--hidden", "0"},       {"--dtype", "float64"}, {"--device", "cpu"},
      {"--device", "cuda"},    {"--warmup", "-1"},     {"--repeats", "0"},
      {"--seed", "-1"},        {"--output", ""},
  };
  for (const auto& [option, value] : cases) {
    SCOPED_TRACE(option + " " + value);
    TempDir dir;
    std::vector<std::string> args = seed_command_with(dir.file("result.json"), option, value);
    // "--opt=-1" so that a negative value reaches the checks instead of looking like an option.
    if (!value.empty() && value[0] == '-') {
      const auto at = std::find(args.begin(), args.end(), option);
      *at += "=" + *(at + 1);
      args.erase(at + 1);
    }
    args.insert(args.end(), {"--backend", kFakePlugin});
    const ProcessResult r = run_cli(args);
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_EQ(line_count(r.err), 1u) << r.err;
    EXPECT_EQ(r.err.rfind("iteragpu measure: error: " + option + ":", 0), 0u) << r.err;
    EXPECT_TRUE(list_directory(dir.path()).empty());
  }
  const ProcessResult unknown = run_cli({"measure", "--unknown", "1"});
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_NE(unknown.err.find("--unknown"), std::string::npos) << unknown.err;
}

TEST(MeasureCli, OutputIsRequired) {
  const ProcessResult r = run_cli({"measure", "--backend", kFakePlugin});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--output: required"), std::string::npos) << r.err;
}

TEST(MeasureCli, UnloadablePluginIsExitTwoWithTheReason) {
  TempDir dir;
  const ProcessResult r = run_cli(with(seed_command(dir.file("r.json")), {"--backend", "/nonexistent.so"}));
  expect_refused(r, dir, "/nonexistent.so: cannot open shared object file");
}

TEST(MeasureCli, PluginOfAnotherInterfaceVersionIsExitTwo) {
  TempDir dir;
  const ProcessResult r = run_cli(with(seed_command(dir.file("r.json")), {"--backend", kFakePlugin}),
                                  {{"ITERAGPU_FAKE_ABI_VERSION", "0"}});
  expect_refused(r, dir, "interface version 0");
}

TEST(MeasureCli, FakeGpuMeasurementIsPublishedAndValid) {
  TempDir dir;
  const std::string output = dir.file("mesures-petit-essai.json");
  const ProcessResult r = run_cli(with(seed_command(output), {"--backend", kFakePlugin}));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");  // stderr is not a terminal: no progress
  EXPECT_NE(r.out.find("warm_forward"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Result written to " + output), std::string::npos) << r.out;
  EXPECT_EQ(list_directory(dir.path()), std::vector<std::string>{"mesures-petit-essai.json"});
  const std::string json = read_file(output);
  ASSERT_EQ(schema_violation(json, "measurement.schema.json"), "") << json;
  rapidjson::Document doc;
  doc.Parse(json.c_str());
  EXPECT_EQ(doc["phases"].Size(), 6u);
  EXPECT_STREQ(doc["environment"]["libtorch"]["version"].GetString(), "0.0.0+fake");
  // Marked as the test double's in the file and in the text, and never recorded as a run.
  EXPECT_STREQ(doc["environment"]["backend"]["identity"].GetString(), "test-double");
  EXPECT_NE(r.out.find("TEST DOUBLE: scripted figures"), std::string::npos) << r.out;
  const ProcessResult add = run_cli(
      {"results", "add", "--table", dir.file("t.csv"), "--measurement", output, "--gpu", "h200",
       "--days", "7", "--work-unit", "u", "--attempted", "1", "--accepted", "1", "--metric", "m",
       "--threshold", "t", "--observed", "o", "--gpu-mismatch-ok"});
  EXPECT_EQ(add.exit_code, 2);
  EXPECT_NE(add.err.find("was made by the test-double backend"), std::string::npos) << add.err;
  EXPECT_FALSE(path_exists(dir.file("t.csv")));
}

TEST(MeasureCli, JsonFormatPrintsTheFileContent) {
  TempDir dir;
  const std::string output = dir.file("m.json");
  const ProcessResult r =
      run_cli(with(seed_command_with(output, "--warmup", "0"), {"--backend", kFakePlugin, "--format", "json"}));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, read_file(output));
  EXPECT_NE(r.err.find("Result written to " + output), std::string::npos);
  rapidjson::Document doc;
  doc.Parse(r.out.c_str());
  EXPECT_EQ(doc["phases"].Size(), 5u);  // no warmup row
}

TEST(MeasureCli, OutOfMemoryIsExitThreeNamingPhaseAndConfiguration) {
  TempDir dir;
  const ProcessResult r = run_cli(with(seed_command(dir.file("r.json")), {"--backend", kFakePlugin}),
                                  {{"ITERAGPU_FAKE_BACKEND", "fail=forward:2:oom"}});
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_EQ(line_count(r.err), 1u) << r.err;
  EXPECT_NE(r.err.find("out of GPU memory during phase warmup"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("batch 1, context 16, width 64, hidden 256, dtype float32"), std::string::npos);
  EXPECT_TRUE(list_directory(dir.path()).empty());
}

TEST(MeasureCli, MissingGpuOrDeviceOrDtypeIsExitTwo) {
  TempDir dir;
  const std::string output = dir.file("r.json");
  const auto command = [&](const std::string& option, const std::string& value) {
    return with(seed_command_with(output, option, value), {"--backend", kFakePlugin});
  };
  expect_refused(run_cli(command("--device", "cuda:0"), {{"ITERAGPU_FAKE_BACKEND", "gpus=0"}}), dir,
                 "no GPU available");
  expect_refused(run_cli(command("--device", "cuda:4"), {{"ITERAGPU_FAKE_BACKEND", "gpus=2"}}), dir,
                 "cuda:4 does not exist");
  expect_refused(run_cli(command("--dtype", "bfloat16"),
                         {{"ITERAGPU_FAKE_BACKEND", "unsupported_dtype=bfloat16"}}),
                 dir, "--dtype: bfloat16 is not supported on cuda:0");
}

TEST(MeasureCli, InterruptIsExit130AndNoFile) {
  TempDir dir;
  const ProcessResult r = run_cli(with(seed_command(dir.file("r.json")), {"--backend", kFakePlugin}),
                                  {{"ITERAGPU_FAKE_BACKEND", "interrupt=forward:2"}});
  EXPECT_EQ(r.exit_code, 130) << r.err;
  EXPECT_EQ(r.signal_number, 0);  // handled, not killed
  // The second forward (in the warm-up phase) raises SIGINT: the worker stops there, at once.
  EXPECT_NE(r.err.find("interrupted after phase cold_forward"), std::string::npos) << r.err;
  EXPECT_TRUE(list_directory(dir.path()).empty());
}

TEST(MeasureCli, ProgressIsShownOnATerminalOnly) {
  TempDir dir;
  // script(1) gives the command a pseudo-terminal for stdout and stderr.
  std::string command = std::string(ITERAGPU_CLI_PATH);
  for (const auto& arg : with(seed_command(dir.file("r.json")), {"--backend", kFakePlugin}))
    command += " '" + arg + "'";
  const ProcessResult r = run_process({"/usr/bin/script", "-qec", command, "/dev/null"});
  if (r.exit_code == 127 || r.exit_code == -1) GTEST_SKIP() << "script(1) is not usable here";
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("[6/6] warm_forward 2 done"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("[1/6] model_load done"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\033[K"), std::string::npos) << r.out;
}

TEST(MeasureCli, NoColorOrADumbTerminalGetsNoEscapeCodes) {
  for (const char* setting : {"NO_COLOR=1", "TERM=dumb"}) {
    TempDir dir;
    std::string command = std::string(ITERAGPU_CLI_PATH);
    for (const auto& arg : with(seed_command(dir.file("r.json")), {"--backend", kFakePlugin}))
      command += " '" + arg + "'";
    const ProcessResult r =
        run_process({"/usr/bin/env", setting, "/usr/bin/script", "-qec", command, "/dev/null"});
    if (r.exit_code == 127 || r.exit_code == -1) GTEST_SKIP() << "script(1) is not usable here";
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
    EXPECT_EQ(r.out.find('\033'), std::string::npos) << setting << ": " << r.out;
    EXPECT_EQ(r.out.find("model_load done"), std::string::npos) << setting << ": " << r.out;
  }
}

}  // namespace
}  // namespace iteragpu::testing
