// `iteragpu environment` end to end on this machine (no GPU) and with the fake plugin.
#include <gtest/gtest.h>
#include <pwd.h>
#include <rapidjson/document.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>

#include "process_runner.hpp"
#include "schema_check.hpp"

namespace iteragpu::testing {
namespace {

const std::string kFakePlugin = ITERAGPU_FAKE_BACKEND_PATH;

rapidjson::Document parsed(const std::string& json) {
  rapidjson::Document doc;
  doc.Parse(json.c_str());
  EXPECT_FALSE(doc.HasParseError()) << json;
  return doc;
}

std::size_t line_count(const std::string& text) {
  return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
}

TEST(EnvironmentCli, ThisMachineGivesAValidReport) {
  const ProcessResult r = run_cli({"environment", "--device", "cuda:0", "--format", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  ASSERT_EQ(schema_violation(r.out, "environment.schema.json"), "") << r.out;
  const rapidjson::Document doc = parsed(r.out);
  if (ITERAGPU_TORCH_BACKEND_BUILT) {
    ASSERT_TRUE(doc["backend"]["available"].GetBool()) << r.out;
    EXPECT_STREQ(doc["backend"]["identity"].GetString(), "libtorch");  // the real plugin
    const std::string version = doc["libtorch"]["version"].GetString();
    EXPECT_FALSE(version.empty());
    // "1.13.1" (Debian's CPU LibTorch here), "2.11.0+cu130" on the GPU machine.
    EXPECT_TRUE(std::isdigit(static_cast<unsigned char>(version[0])) && version.find('.') != std::string::npos)
        << version;
    EXPECT_EQ(doc["gpus"].Size() > 0, doc["libtorch"]["gpu_runtime_available"].GetBool());
  } else {
    EXPECT_FALSE(doc["backend"]["available"].GetBool());
    EXPECT_NE(std::string(doc["backend"]["error"].GetString()).find("built without the LibTorch plugin, which measuring needs"),
              std::string::npos);
    EXPECT_TRUE(doc["libtorch"].IsNull());
    EXPECT_TRUE(doc["backend"]["identity"].IsNull());
  }
}

TEST(EnvironmentCli, TextIsTheDefault) {
  const ProcessResult r = run_cli({"environment"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("NVIDIA kernel driver:"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("LibTorch backend:"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("not the NVIDIA driver version"), std::string::npos) << r.out;
}

TEST(EnvironmentCli, UnloadablePluginIsReportedWithTheLoadersReason) {
  const ProcessResult r = run_cli({"environment", "--backend", "/nonexistent.so", "--format", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_EQ(schema_violation(r.out, "environment.schema.json"), "") << r.out;
  const rapidjson::Document doc = parsed(r.out);
  EXPECT_FALSE(doc["backend"]["available"].GetBool());
  const std::string error = doc["backend"]["error"].GetString();
  EXPECT_NE(error.find("/nonexistent.so"), std::string::npos) << error;
  EXPECT_NE(error.find("cannot open shared object file"), std::string::npos) << error;
}

TEST(EnvironmentCli, FakePluginByOptionAndByEnvironmentVariable) {
  for (const bool by_option : {true, false}) {
    SCOPED_TRACE(by_option ? "--backend" : "ITERAGPU_BACKEND");
    std::vector<std::string> args = {"environment", "--device", "cuda:1", "--format", "json"};
    std::map<std::string, std::string> environment = {{"ITERAGPU_FAKE_BACKEND", "gpus=2"}};
    if (by_option) {
      args.insert(args.end(), {"--backend", kFakePlugin});
    } else {
      environment["ITERAGPU_BACKEND"] = kFakePlugin;
    }
    const ProcessResult r = run_cli(args, environment);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    ASSERT_EQ(schema_violation(r.out, "environment.schema.json"), "") << r.out;
    const rapidjson::Document doc = parsed(r.out);
    EXPECT_TRUE(doc["backend"]["available"].GetBool());
    EXPECT_STREQ(doc["libtorch"]["version"].GetString(), "0.0.0+fake");
    EXPECT_STREQ(doc["backend"]["identity"].GetString(), "test-double");
    EXPECT_EQ(doc["gpus"].Size(), 2u);
    EXPECT_TRUE(doc["selected_device"]["present"].GetBool());
  }
}

TEST(EnvironmentCli, PluginOfAnotherInterfaceVersionIsRefused) {
  const ProcessResult r = run_cli({"environment", "--backend", kFakePlugin},
                                  {{"ITERAGPU_FAKE_ABI_VERSION", "999"}});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("interface version 999 but this iteragpu needs version"), std::string::npos)
      << r.out;
}

TEST(EnvironmentCli, HomeDirectoryIsNotWrittenOut) {
  const passwd* user = getpwuid(getuid());
  ASSERT_NE(user, nullptr);
  const std::string home = user->pw_dir;
  if (home.size() < 2) GTEST_SKIP() << "home directory is /";
  const ProcessResult r = run_cli({"environment", "--backend", home + "/iteragpu-no-plugin.so"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("~/iteragpu-no-plugin.so"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find(home + "/"), std::string::npos) << r.out;
}

TEST(EnvironmentCli, OutputFileIsNewAndHoldsTheJson) {
  TempDir dir;
  const std::string output = dir.file("environment.json");
  const ProcessResult r = run_cli({"environment", "--format", "json", "--output", output});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(read_file(output), r.out);
  EXPECT_EQ(list_directory(dir.path()), std::vector<std::string>{"environment.json"});

  const ProcessResult again = run_cli({"environment", "--output", output});
  EXPECT_EQ(again.exit_code, 2);
  EXPECT_EQ(line_count(again.err), 1u) << again.err;
  EXPECT_NE(again.err.find("already exists"), std::string::npos) << again.err;
  EXPECT_EQ(read_file(output), r.out);  // untouched

  const ProcessResult missing_directory = run_cli({"environment", "--output", dir.file("no/such.json")});
  EXPECT_EQ(missing_directory.exit_code, 2);
  EXPECT_EQ(line_count(missing_directory.err), 1u) << missing_directory.err;
}

TEST(EnvironmentCli, BadDeviceIsOneLineAndExitTwo) {
  for (const char* device : {"cpu", "cuda", "cuda:x", "cuda:-1"}) {
    const ProcessResult r = run_cli({"environment", "--device", device});
    EXPECT_EQ(r.exit_code, 2) << device;
    EXPECT_EQ(line_count(r.err), 1u) << r.err;
    EXPECT_NE(r.err.find("--device"), std::string::npos) << r.err;
    EXPECT_EQ(r.out, "");
  }
}

TEST(EnvironmentCli, HelpExitsZero) {
  const ProcessResult r = run_cli({"environment", "--help"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("--backend"), std::string::npos);
}

}  // namespace
}  // namespace iteragpu::testing
