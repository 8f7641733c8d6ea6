// `iteragpu measure --device all` and `--device cuda:0,cuda:2` end to end with the fake
// plugin scripted for several GPUs: one process and one result file per GPU, each holding
// its own GPU's counters; a summary file; one failing GPU that does not cost the others;
// refusals before anything starts (exit 2, nothing written); signals passed on.
#include <gtest/gtest.h>
#include <rapidjson/document.h>
#include <unistd.h>

#include <algorithm>
#include <map>

#include "fake_backend.hpp"
#include "process_runner.hpp"
#include "schema_check.hpp"

namespace iteragpu::testing {
namespace {

const std::string kFakePlugin = ITERAGPU_FAKE_BACKEND_PATH;
// The output of one forward of the seed configuration [1, 16, 64] float32.
constexpr std::uint64_t kOutputBytes = 1 * 16 * 64 * 4;

std::vector<std::string> command(const std::string& devices, const std::string& summary,
                                 std::initializer_list<std::string> more = {}) {
  std::vector<std::string> args = {"measure", "--device", devices, "--batch", "1", "--context", "16",
                                   "--width", "64", "--dtype", "float32", "--warmup", "1",
                                   "--repeats", "2", "--output", summary, "--backend", kFakePlugin};
  args.insert(args.end(), more);
  return args;
}

std::map<std::string, std::string> fake(const std::string& script) {
  return {{"ITERAGPU_FAKE_BACKEND", script}};
}

std::size_t line_count(const std::string& text) {
  return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
}

std::vector<std::string> sorted(std::vector<std::string> names) {
  std::sort(names.begin(), names.end());
  return names;
}

rapidjson::Document parsed(const std::string& json) {
  rapidjson::Document doc;
  doc.Parse(json.c_str());
  EXPECT_FALSE(doc.HasParseError()) << json;
  return doc;
}

// A result file: a valid measurement of `index`, whose counters are that fake GPU's.
void expect_result_of_device(const std::string& path, int index) {
  SCOPED_TRACE(path);
  const std::string json = read_file(path);
  ASSERT_EQ(schema_violation(json, "measurement.schema.json"), "") << json;
  const rapidjson::Document doc = parsed(json);
  const std::string device = "cuda:" + std::to_string(index);
  EXPECT_EQ(doc["configuration"]["device"].GetString(), device);
  EXPECT_EQ(doc["environment"]["selected_device"]["device"].GetString(), device);
  EXPECT_EQ(doc["environment"]["selected_device"]["index"].GetInt(), index);
  // cold_forward keeps the output and the device's workspace: only GPU `index` has this one.
  const auto& cold = doc["phases"][2];
  ASSERT_STREQ(cold["phase"].GetString(), "cold_forward");
  EXPECT_EQ(cold["allocated_bytes"]["end"].GetUint64() - cold["allocated_bytes"]["baseline"].GetUint64(),
            FakeBackend::workspace_bytes(index) + kOutputBytes);
}

TEST(MultiGpuMeasureCli, AllDevicesGiveOneResultEachAndASummary) {
  TempDir dir;
  const std::string summary = dir.file("mesures.json");
  const ProcessResult r = run_cli(command("all", summary), fake("gpus=3"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");  // stderr is not a terminal: no progress
  EXPECT_EQ(sorted(list_directory(dir.path())),
            (std::vector<std::string>{"mesures-cuda0.json", "mesures-cuda1.json", "mesures-cuda2.json",
                                      "mesures.json"}));
  for (int index = 0; index < 3; ++index)
    expect_result_of_device(dir.file("mesures-cuda" + std::to_string(index) + ".json"), index);

  const std::string json = read_file(summary);
  ASSERT_EQ(schema_violation(json, "measurement-summary.schema.json"), "") << json;
  const rapidjson::Document doc = parsed(json);
  EXPECT_TRUE(doc["complete"].GetBool());
  EXPECT_FALSE(doc["interrupted"].GetBool());
  EXPECT_EQ(doc["exit_code"].GetInt(), 0);
  EXPECT_STREQ(doc["configuration"]["devices"].GetString(), "all");
  EXPECT_EQ(doc["configuration"]["hidden"].GetInt(), 256);
  const auto& devices = doc["devices"];
  ASSERT_EQ(devices.Size(), 3u);
  const std::uint64_t peak_of_gpu0 = devices[0]["figures"]["peak_allocated_bytes_max"].GetUint64();
  for (rapidjson::SizeType index = 0; index < 3; ++index) {
    SCOPED_TRACE(index);
    const auto& device = devices[index];
    const std::string suffix = std::to_string(index);
    EXPECT_EQ(device["device"].GetString(), "cuda:" + suffix);
    EXPECT_STREQ(device["status"].GetString(), "ok");
    EXPECT_EQ(device["result_file"].GetString(), dir.file("mesures-cuda" + suffix + ".json"));
    EXPECT_TRUE(device["error"].IsNull());
    EXPECT_EQ(device["figures"]["gpu_name"].GetString(), "Fake GPU " + suffix);
    // The seed model's four tensors, each rounded up to 512 bytes by the fake allocator.
    EXPECT_EQ(device["figures"]["model_load_allocated_bytes"].GetInt64(), 65536 + 1024 + 65536 + 512);
    // Read from each GPU's own file: GPU N's workspace is N × 512 bytes larger.
    EXPECT_EQ(device["figures"]["peak_allocated_bytes_max"].GetUint64() - peak_of_gpu0, 512u * index);
  }
  EXPECT_NE(r.out.find("cuda:2   ok"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Fake GPU 1"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Complete: yes"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Summary written to " + summary), std::string::npos) << r.out;
}

TEST(MultiGpuMeasureCli, AListMeasuresOnlyItsDevicesInItsOrder) {
  TempDir dir;
  const std::string summary = dir.file("m.json");
  const ProcessResult r = run_cli(command("cuda:2,cuda:0", summary, {"--format", "json"}), fake("gpus=3"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(sorted(list_directory(dir.path())),
            (std::vector<std::string>{"m-cuda0.json", "m-cuda2.json", "m.json"}));
  expect_result_of_device(dir.file("m-cuda0.json"), 0);
  expect_result_of_device(dir.file("m-cuda2.json"), 2);
  EXPECT_EQ(r.out, read_file(summary));  // stdout holds only the summary JSON
  EXPECT_EQ(r.err, "iteragpu measure: Summary written to " + summary + "\n");
  const rapidjson::Document doc = parsed(r.out);
  ASSERT_EQ(doc["devices"].Size(), 2u);
  EXPECT_STREQ(doc["devices"][0]["device"].GetString(), "cuda:2");
  EXPECT_STREQ(doc["devices"][1]["device"].GetString(), "cuda:0");
  EXPECT_STREQ(doc["configuration"]["devices"].GetString(), "cuda:2,cuda:0");
}

TEST(MultiGpuMeasureCli, OneFailingGpuIsReportedAndTheOthersKept) {
  TempDir dir;
  const std::string summary = dir.file("m.json");
  const ProcessResult r = run_cli(command("all", summary), fake("gpus=3;fail_device=1:forward:2:oom"));
  EXPECT_EQ(r.exit_code, 3) << r.err;  // the failing child's code
  EXPECT_EQ(sorted(list_directory(dir.path())),
            (std::vector<std::string>{"m-cuda0.json", "m-cuda2.json", "m.json"}));
  expect_result_of_device(dir.file("m-cuda0.json"), 0);
  expect_result_of_device(dir.file("m-cuda2.json"), 2);
  EXPECT_EQ(line_count(r.err), 1u) << r.err;
  EXPECT_NE(r.err.find("iteragpu measure: cuda:1 failed (exit 3): out of GPU memory during phase warmup"),
            std::string::npos) << r.err;

  const std::string json = read_file(summary);
  ASSERT_EQ(schema_violation(json, "measurement-summary.schema.json"), "") << json;
  const rapidjson::Document doc = parsed(json);
  EXPECT_FALSE(doc["complete"].GetBool());
  EXPECT_FALSE(doc["interrupted"].GetBool());
  EXPECT_EQ(doc["exit_code"].GetInt(), 3);
  const auto& failed = doc["devices"][1];
  EXPECT_STREQ(failed["status"].GetString(), "failed");
  EXPECT_EQ(failed["exit_code"].GetInt(), 3);
  EXPECT_TRUE(failed["result_file"].IsNull());
  EXPECT_TRUE(failed["figures"].IsNull());
  const std::string error = failed["error"].GetString();
  EXPECT_EQ(error.rfind("out of GPU memory during phase warmup (cuda:1, batch 1", 0), 0u) << error;
  EXPECT_NE(error.find("injected oom in forward on cuda:1"), std::string::npos) << error;
  EXPECT_STREQ(doc["devices"][0]["status"].GetString(), "ok");
  EXPECT_STREQ(doc["devices"][2]["status"].GetString(), "ok");
  EXPECT_NE(r.out.find("Complete: no: 1 of 3 devices failed"), std::string::npos) << r.out;
}

TEST(MultiGpuMeasureCli, ExitCodeIsTheFirstFailureInDeviceOrder) {
  // cuda:0 cannot be opened (exit 2); cuda:2 runs out of memory (exit 3).
  const std::string script = "gpus=3;fail_device=0:open:1:device;fail_device=2:forward:1:oom";
  for (const auto& [devices, expected] :
       std::vector<std::pair<std::string, int>>{{"all", 2}, {"cuda:2,cuda:1,cuda:0", 3}}) {
    SCOPED_TRACE(devices);
    TempDir dir;
    const ProcessResult r = run_cli(command(devices, dir.file("m.json")), fake(script));
    EXPECT_EQ(r.exit_code, expected) << r.err;
    EXPECT_EQ(line_count(r.err), 2u) << r.err;
    EXPECT_EQ(sorted(list_directory(dir.path())), (std::vector<std::string>{"m-cuda1.json", "m.json"}));
    const rapidjson::Document doc = parsed(read_file(dir.file("m.json")));
    EXPECT_EQ(doc["exit_code"].GetInt(), expected);
  }
}

TEST(MultiGpuMeasureCli, ExistingSummaryOrResultFileRefusesEverything) {
  for (const std::string existing : {"m.json", "m-cuda1.json"}) {
    SCOPED_TRACE(existing);
    TempDir dir;
    write_file(dir.file(existing), "an earlier result\n");
    const ProcessResult r = run_cli(command("all", dir.file("m.json")), fake("gpus=3"));
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_EQ(line_count(r.err), 1u) << r.err;
    EXPECT_NE(r.err.find(dir.file(existing) + " already exists"), std::string::npos) << r.err;
    EXPECT_EQ(r.out, "");
    EXPECT_EQ(list_directory(dir.path()), std::vector<std::string>{existing});
    EXPECT_EQ(read_file(dir.file(existing)), "an earlier result\n");
  }
}

TEST(MultiGpuMeasureCli, BadSelectionsAreOneLineAndNothingStarts) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"cuda:0,cuda:0", "cuda:0 is listed twice"},
      {"cuda:0,", "an empty entry"},
      {",cuda:1", "an empty entry"},
      {"all,cuda:1", "all cannot be combined"},
      {"cuda:0,cpu", "'cpu' is not accepted"},
      {"cuda:0,cuda:01", "is not a device"},
      {"cuda:0, cuda:1", "is not a device"},
  };
  for (const auto& [devices, expected] : cases) {
    SCOPED_TRACE(devices);
    TempDir dir;
    const ProcessResult r = run_cli(command(devices, dir.file("m.json")), fake("gpus=3"));
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_EQ(line_count(r.err), 1u) << r.err;
    EXPECT_EQ(r.err.rfind("iteragpu measure: error: --device: ", 0), 0u) << r.err;
    EXPECT_NE(r.err.find(expected), std::string::npos) << r.err;
    EXPECT_TRUE(list_directory(dir.path()).empty());
  }
  TempDir dir;
  std::vector<std::string> args = command("all", dir.file("m.json"));
  *(std::find(args.begin(), args.end(), "--batch") + 1) = "0";
  const ProcessResult bad_batch = run_cli(args, fake("gpus=3"));
  EXPECT_EQ(bad_batch.exit_code, 2);
  EXPECT_EQ(bad_batch.err.rfind("iteragpu measure: error: --batch: ", 0), 0u) << bad_batch.err;
  EXPECT_TRUE(list_directory(dir.path()).empty());
}

TEST(MultiGpuMeasureCli, NoBackendNoGpuOrMissingDeviceIsExitTwoAndNothingWritten) {
  const std::vector<std::tuple<std::string, std::string, std::string, std::string>> cases = {
      {"all", "gpus=3", "/nonexistent.so", "no LibTorch backend: "},
      {"all", "gpus=0", kFakePlugin, "no GPU available"},
      {"cuda:0,cuda:5", "gpus=2", kFakePlugin, "cuda:5 does not exist; this process sees 2 GPUs: cuda:0 to cuda:1"},
      {"all", "gpus=2;fail=describe:1:failed", kFakePlugin, "could not describe the stack"},
  };
  for (const auto& [devices, script, plugin, expected] : cases) {
    SCOPED_TRACE(devices + " " + script + " " + plugin);
    TempDir dir;
    std::vector<std::string> args = command(devices, dir.file("m.json"));
    args.back() = plugin;
    const ProcessResult r = run_cli(args, fake(script));
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_EQ(line_count(r.err), 1u) << r.err;
    EXPECT_NE(r.err.find(expected), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("nothing was measured"), std::string::npos) << r.err;
    EXPECT_TRUE(list_directory(dir.path()).empty());
  }
}

TEST(MultiGpuMeasureCli, ThisMachineWithoutAGpuRefusesAll) {
  const ProcessResult environment = run_cli({"environment", "--format", "json"});
  if (environment.out.find("\"gpu_runtime_available\": true") != std::string::npos)
    GTEST_SKIP() << "this machine has a GPU";
  TempDir dir;
  std::vector<std::string> args = command("all", dir.file("m.json"));
  args.resize(args.size() - 2);  // no --backend: the default search
  const ProcessResult r = run_cli(args);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find(ITERAGPU_TORCH_BACKEND_BUILT ? "no GPU available" : "no LibTorch backend"),
            std::string::npos) << r.err;
  EXPECT_TRUE(list_directory(dir.path()).empty());
}

// SIGTERM to the parent reaches each child once: each stops between phases (exit 130, no
// file, not killed by a second copy), and the summary of the interrupted run is written.
TEST(MultiGpuMeasureCli, SignalsArePassedOnAndTheSummaryIsStillWritten) {
  const std::string own_children = "/proc/" + std::to_string(getpid()) + "/task/" +
                                   std::to_string(getpid()) + "/children";
  if (!path_exists(own_children)) GTEST_SKIP() << "no " << own_children << " here";
  TempDir dir;
  std::string cli = std::string(ITERAGPU_CLI_PATH);
  for (const auto& arg : command("all", dir.file("m.json"))) cli += " '" + arg + "'";
  // Waits (10 s at most) until the parent has its two children, gives them a second to
  // start measuring (each forward takes 1.5 s), then sends the parent SIGTERM.
  const std::string script =
      cli + " & parent=$!; tries=0; "
      "while [ \"$(wc -w < /proc/$parent/task/$parent/children)\" -lt 2 ] && [ $tries -lt 200 ]; "
      "do sleep 0.05; tries=$((tries + 1)); done; "
      "sleep 1; kill -TERM $parent; wait $parent";
  const ProcessResult r = run_process({"/bin/sh", "-c", script}, fake("gpus=2;delay=forward:1500"));
  EXPECT_EQ(r.exit_code, 130) << r.err;
  EXPECT_EQ(list_directory(dir.path()), std::vector<std::string>{"m.json"});
  const std::string json = read_file(dir.file("m.json"));
  ASSERT_EQ(schema_violation(json, "measurement-summary.schema.json"), "") << json;
  const rapidjson::Document doc = parsed(json);
  EXPECT_TRUE(doc["interrupted"].GetBool());
  EXPECT_FALSE(doc["complete"].GetBool());
  EXPECT_EQ(doc["exit_code"].GetInt(), 130);
  for (const auto& device : doc["devices"].GetArray()) {
    EXPECT_EQ(device["exit_code"].GetInt(), 130);  // handled; 143 would be a second SIGTERM
    EXPECT_NE(std::string(device["error"].GetString()).find("interrupted"), std::string::npos);
  }
}

TEST(MultiGpuMeasureCli, ProgressIsOneLinePerDeviceOnATerminalOnly) {
  TempDir dir;
  std::string cli = std::string(ITERAGPU_CLI_PATH);
  for (const auto& arg : command("cuda:0,cuda:1", dir.file("m.json"))) cli += " '" + arg + "'";
  const ProcessResult r = run_process({"/usr/bin/script", "-qec", cli, "/dev/null"}, fake("gpus=2"));
  if (r.exit_code == 127 || r.exit_code == -1) GTEST_SKIP() << "script(1) is not usable here";
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("measuring cuda:0, cuda:1 at the same time"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("iteragpu measure: cuda:0 done ["), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("iteragpu measure: cuda:1 done ["), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("[2/2]"), std::string::npos) << r.out;
  // The children's own progress is not shown: their stderr is a pipe, not the terminal.
  EXPECT_EQ(r.out.find("model_load done"), std::string::npos) << r.out;
}

TEST(MultiGpuMeasureCli, HelpNamesTheSeveralDeviceForms) {
  const ProcessResult r = run_cli({"measure", "--help"});
  ASSERT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("--device all"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("<stem>-cuda<N>.json"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace iteragpu::testing
