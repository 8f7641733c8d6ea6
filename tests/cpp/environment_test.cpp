// Environment against the FakeBackend test double, device-name parsing, privacy of the
// report, and the plugin loader's once-per-process rule.
#include <gtest/gtest.h>
#include <rapidjson/document.h>
#include <pwd.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>

#include "fake_backend.hpp"
#include "iteragpu/environment.hpp"
#include "iteragpu/error.hpp"
#include "process_runner.hpp"
#include "schema_check.hpp"

extern char** environ;

namespace iteragpu::testing {
namespace {

std::shared_ptr<FakeBackend> fake_with_gpus(int count) {
  FakeBackend::Script script;
  script.gpu_count = count;
  return std::make_shared<FakeBackend>(script);
}

EnvironmentRequest request_for(const std::string& device) {
  EnvironmentRequest request;
  request.device = device;
  return request;
}

// The words (letters, digits, '-', '_', '.') of a text.
std::vector<std::string> words_of(const std::string& text) {
  std::vector<std::string> words;
  std::string word;
  for (char c : text + " ") {
    if (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.') {
      word += c;
    } else if (!word.empty()) {
      words.push_back(word);
      word.clear();
    }
  }
  return words;
}

TEST(ParseDeviceIndex, AcceptsCudaN) {
  EXPECT_EQ(parse_device_index("cuda:0"), 0);
  EXPECT_EQ(parse_device_index("cuda:7"), 7);
  EXPECT_EQ(parse_device_index("cuda:127"), 127);
}

TEST(ParseDeviceIndex, RefusesEverythingElseNamingTheField) {
  for (const char* bad : {"cuda", "cpu", "cuda:-1", "cuda:01", "cuda:128", "cuda:1a", "CUDA:0",
                          "", "cuda: 1", "gpu:0", "cuda:0 ", "mps", "cuda:99999999999"}) {
    try {
      parse_device_index(bad, "device");
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const UsageError& e) {
      EXPECT_EQ(e.field(), "device");
      EXPECT_NE(std::string(e.what()).find("cuda:N"), std::string::npos) << e.what();
    }
  }
  try {
    parse_device_index("cpu");
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("only GPUs are measured"), std::string::npos);
  }
}

TEST(Environment, ReportsEveryVisibleGpuAndTheSelectedOne) {
  const EnvironmentReport report = Environment(fake_with_gpus(2)).collect(request_for("cuda:1"));
  ASSERT_TRUE(report.stack.has_value());
  EXPECT_TRUE(report.backend_available);
  EXPECT_EQ(report.stack->gpus.size(), 2u);
  EXPECT_TRUE(report.selected_present);
  EXPECT_EQ(report.selected_index, 1);
  EXPECT_EQ(report.stack->selected_total_bytes, FakeBackend::kGpuTotalBytes);
  EXPECT_FALSE(report.iteragpu_version.empty());
  EXPECT_FALSE(report.os_name.empty());
  EXPECT_FALSE(report.kernel_release.empty());
  EXPECT_NE(report.libc.find("glibc"), std::string::npos);

  const std::string json = report.to_json();
  ASSERT_EQ(schema_violation(json, "environment.schema.json"), "") << json;
  rapidjson::Document doc;
  doc.Parse(json.c_str());
  EXPECT_EQ(doc["gpus"].Size(), 2u);
  EXPECT_STREQ(doc["gpus"][1]["name"].GetString(), "Fake GPU 1");
  EXPECT_STREQ(doc["gpus"][1]["compute_capability"].GetString(), "9.0");
  EXPECT_STREQ(doc["libtorch"]["cuda_build_version"].GetString(), "12.8");
  EXPECT_EQ(doc["selected_device"]["runtime_total_bytes"].GetUint64(), FakeBackend::kGpuTotalBytes);
  EXPECT_TRUE(doc["backend"]["error"].IsNull());

  const std::string text = report.to_text();
  EXPECT_NE(text.find("Fake GPU 1"), std::string::npos);
  EXPECT_NE(text.find("CUDA runtime LibTorch was built with (not the driver): 12.8"), std::string::npos) << text;
}

TEST(Environment, NoGpuIsAValidReport) {
  const EnvironmentReport report = Environment(fake_with_gpus(0)).collect(request_for("cuda:0"));
  ASSERT_TRUE(report.stack.has_value());
  EXPECT_FALSE(report.stack->gpu_runtime_available);
  EXPECT_FALSE(report.selected_present);
  const std::string json = report.to_json();
  ASSERT_EQ(schema_violation(json, "environment.schema.json"), "") << json;
  rapidjson::Document doc;
  doc.Parse(json.c_str());
  EXPECT_TRUE(doc["gpus"].IsArray());  // known to be empty, not unknown
  EXPECT_EQ(doc["gpus"].Size(), 0u);
  EXPECT_FALSE(doc["libtorch"]["gpu_runtime_available"].GetBool());
  EXPECT_TRUE(doc["selected_device"]["runtime_free_bytes"].IsNull());
  EXPECT_NE(report.to_text().find("no GPU available"), std::string::npos);
}

TEST(Environment, AbsentIndexIsNotPresentAndHasNoMemoryFigures) {
  const EnvironmentReport report = Environment(fake_with_gpus(2)).collect(request_for("cuda:5"));
  EXPECT_FALSE(report.selected_present);
  EXPECT_FALSE(report.stack->selected_free_bytes.has_value());
  EXPECT_EQ(schema_violation(report.to_json(), "environment.schema.json"), "");
  EXPECT_NE(report.to_text().find("not present among the visible GPUs"), std::string::npos);
}

TEST(Environment, ABackendThatCannotDescribeIsReportedNotHidden) {
  FakeBackend::Script script;
  script.failures.push_back({"describe", 1, BackendStatus::Code::kFailed, "driver mismatch"});
  const EnvironmentReport report =
      Environment(std::make_shared<FakeBackend>(script)).collect(request_for("cuda:0"));
  EXPECT_TRUE(report.backend_available);
  EXPECT_FALSE(report.stack.has_value());
  EXPECT_NE(report.backend_error.find("driver mismatch"), std::string::npos);
  EXPECT_EQ(schema_violation(report.to_json(), "environment.schema.json"), "");
}

TEST(Environment, MalformedDeviceIsAUsageErrorBeforeTheBackend) {
  auto backend = fake_with_gpus(1);
  EXPECT_THROW(Environment(backend).collect(request_for("cuda")), UsageError);
  EXPECT_TRUE(backend->calls.empty());
}

TEST(Environment, NoHostNameUserNameOrEnvironmentValues) {
  ASSERT_EQ(setenv("ITERAGPU_TEST_PRIVATE_VALUE", "do-not-report-7f3a9c", 1), 0);
  const EnvironmentReport report = Environment(fake_with_gpus(1)).collect(request_for("cuda:0"));
  const std::string output = report.to_json() + report.to_text();
  char host[256] = {};
  ASSERT_EQ(gethostname(host, sizeof host - 1), 0);
  const std::vector<std::string> words = words_of(output);
  const auto has_word = [&](const std::string& w) {
    return std::find(words.begin(), words.end(), w) != words.end();
  };
  EXPECT_FALSE(has_word(host)) << "host name '" << host << "' in the report";
  if (std::string(host).size() >= 6) EXPECT_EQ(output.find(host), std::string::npos);
  if (const passwd* user = getpwuid(getuid())) EXPECT_FALSE(has_word(user->pw_name)) << user->pw_name;
  for (char** entry = environ; *entry; ++entry) {
    const std::string text(*entry);
    const std::string value = text.substr(text.find('=') + 1);
    if (value.size() >= 12) EXPECT_EQ(output.find(value), std::string::npos) << text;
  }
  EXPECT_EQ(output.find("do-not-report-7f3a9c"), std::string::npos);
  unsetenv("ITERAGPU_TEST_PRIVATE_VALUE");
}

TEST(Environment, OutputFileIsTheJsonAndNeverOverwritten) {
  TempDir dir;
  auto backend = fake_with_gpus(1);
  EnvironmentRequest request = request_for("cuda:0");
  request.output = dir.file("environment.json");
  const EnvironmentReport report = Environment(backend).collect(request);
  EXPECT_EQ(read_file(request.output), report.to_json());

  auto second = fake_with_gpus(1);
  EXPECT_THROW(Environment(second).collect(request), OutputExists);
  EXPECT_TRUE(second->calls.empty());  // refused before the backend was asked anything
  EXPECT_EQ(list_directory(dir.path()), std::vector<std::string>{"environment.json"});
}

// The only test that loads a plugin in this process: a process holds one plugin for good.
TEST(BackendLoader, OpensOnePluginPerProcessAndExplainsFailures) {
  const BackendLoadResult& missing = load_torch_backend("/nonexistent/iteragpu-plugin.so");
  EXPECT_EQ(missing.backend, nullptr);
  EXPECT_NE(missing.error.find("/nonexistent/iteragpu-plugin.so"), std::string::npos) << missing.error;
  EXPECT_NE(missing.error.find("No such file"), std::string::npos) << missing.error;  // dlerror()

  const BackendLoadResult& loaded = load_torch_backend(ITERAGPU_FAKE_BACKEND_PATH);
  ASSERT_NE(loaded.backend, nullptr) << loaded.error;
  StackReport stack;
  EXPECT_TRUE(loaded.backend->describe(0, stack).ok());
  EXPECT_EQ(stack.torch_version, "0.0.0+fake");
  EXPECT_EQ(load_torch_backend(ITERAGPU_FAKE_BACKEND_PATH).backend, loaded.backend);
  EXPECT_EQ(load_torch_backend().backend, loaded.backend);  // the default is what is loaded

  const BackendLoadResult& other = load_torch_backend(ITERAGPU_DATA_DIR "/../no-other-plugin.so");
  EXPECT_EQ(other.backend, nullptr);
  EXPECT_NE(other.error.find("already loaded"), std::string::npos) << other.error;
}

}  // namespace
}  // namespace iteragpu::testing
