// The Hub client end to end from C++, so that the HTTP side (libcurl's callbacks, the range
// checks, the redirects) also runs in the sanitizer build: the CLI against the loopback Hub
// of tests/hub/hub_server.py, on a success and on each transport fault. The full matrix,
// cache and identity included, is tests/hub/test_hub.py.

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <string>
#include <thread>

#include "process_runner.hpp"

namespace iteragpu::testing {
namespace {

std::string python() { return access("/usr/bin/python3", X_OK) == 0 ? "/usr/bin/python3" : "python3"; }

class HubCli : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir();
    const std::string hub = std::string(ITERAGPU_SOURCE_DIR) + "/tests/hub/";
    const ProcessResult written = run_process({python(), hub + "hub_repositories.py", "--root", dir_->file("root")});
    ASSERT_EQ(written.exit_code, 0) << written.err;
    server_ = fork();
    if (server_ == 0) {
      execlp(python().c_str(), python().c_str(), (hub + "hub_server.py").c_str(), "--root", dir_->file("root").c_str(),
             "--port-file", dir_->file("port").c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
    for (int i = 0; i < 200 && !path_exists(dir_->file("port")); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    ASSERT_TRUE(path_exists(dir_->file("port"))) << "the loopback Hub did not start";
    endpoint_ = "http://127.0.0.1:" + std::to_string(std::stoi(read_file(dir_->file("port"))));
  }
  static void TearDownTestSuite() {
    if (server_ > 0) {
      kill(server_, SIGTERM);
      waitpid(server_, nullptr, 0);
    }
    delete dir_;
  }

  static ProcessResult predict(const std::string& model, const std::vector<std::string>& more = {},
                               const std::string& endpoint = "") {
    std::vector<std::string> args = {"predict", "--model", model, "--compute-capability", "9.0"};
    args.insert(args.end(), more.begin(), more.end());
    return run_cli(args, {{"HF_ENDPOINT", endpoint.empty() ? endpoint_ : endpoint},
                          {"HF_HUB_CACHE", dir_->file("no-cache")},
                          {"HF_HOME", dir_->file("no-home")},
                          {"HF_TOKEN", ""},
                          {"HF_HUB_OFFLINE", ""}});
  }
  static void expect_one_line(const ProcessResult& result, int code, const std::string& says) {
    EXPECT_EQ(result.exit_code, code) << result.err;
    EXPECT_EQ(result.out, "");
    EXPECT_NE(result.err.find(says), std::string::npos) << result.err;
    EXPECT_EQ(result.err.find('\n'), result.err.size() - 1) << result.err;
  }

  static TempDir* dir_;
  static pid_t server_;
  static std::string endpoint_;
};

TempDir* HubCli::dir_ = nullptr;
pid_t HubCli::server_ = -1;
std::string HubCli::endpoint_;

TEST_F(HubCli, ReadsAShardedRepositoryOverHttpAndNamesItsCommit) {
  const ProcessResult result = predict("iteragpu-test/tiny-llama-sharded", {"--verbose"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.out.find("\nModel: iteragpu-test/tiny-llama-sharded, commit "), std::string::npos) << result.out;
  // config.json; the index and model.safetensors (404) together; three shards, each a
  // redirect to the storage host and its answer.
  EXPECT_NE(result.err.find(": 9 HTTP requests, "), std::string::npos) << result.err;
}

TEST_F(HubCli, StopsReadingAServerThatIgnoresTheRange) {
  expect_one_line(predict("iteragpu-test/fault-ignore-range"), 4,
                  "iteragpu-test/fault-ignore-range/model.safetensors: sent more than the 100,000 bytes asked (the "
                  "server ignored the range request); stopped reading");
}

TEST_F(HubCli, RefusesACutAnswerAWrongRangeALoopAndASilentServer) {
  expect_one_line(predict("iteragpu-test/fault-truncated"), 4, "the answer was cut short");
  expect_one_line(predict("iteragpu-test/fault-wrong-content-range"), 4, "the answer says 'bytes 1-100000/");
  expect_one_line(predict("iteragpu-test/fault-redirect-loop"), 4, "more than 8 redirects (a redirect loop)");
  expect_one_line(predict("iteragpu-test/fault-stall", {"--timeout", "0.3"}), 4,
                  "no complete answer within 0.3 s (--timeout)");
  expect_one_line(predict("iteragpu-test/fault-no-commit"), 4, "the answer names no commit");
}

TEST_F(HubCli, RefusesWhatTheHubSaysIsNotThere) {
  expect_one_line(predict("iteragpu-test/nothing-here"), 2, "--model: iteragpu-test/nothing-here: no such repository");
  expect_one_line(predict("iteragpu-test/gated-llama"), 2, "a gated repository (HTTP 401)");
  expect_one_line(predict("iteragpu-test/tiny-llama", {}, "http://127.0.0.1:1"), 4, "cannot connect");
}

}  // namespace
}  // namespace iteragpu::testing
