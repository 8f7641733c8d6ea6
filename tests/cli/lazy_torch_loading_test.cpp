// SPEC: `estimate` and `packages` never load LibTorch or the backend plugin. The dynamic
// loader's own trace (LD_DEBUG=files) lists every file a run opens; the positive controls
// show that the same check does see the plugin (and LibTorch) when a command loads them.
#include <gtest/gtest.h>

#include "process_runner.hpp"

namespace iteragpu::testing {
namespace {

const std::string kFakePlugin = ITERAGPU_FAKE_BACKEND_PATH;

// Runs the CLI with the loader's file trace; fails the test if the trace is missing.
ProcessResult traced(const std::vector<std::string>& args,
                     std::map<std::string, std::string> environment = {}) {
  environment["LD_DEBUG"] = "files";
  const ProcessResult r = run_cli(args, environment);
  EXPECT_NE(r.err.find("file=libc.so.6"), std::string::npos)
      << "LD_DEBUG gave no trace; the check below would prove nothing";
  return r;
}

void expect_not_loaded(const ProcessResult& r, const std::vector<std::string>& names) {
  for (const auto& name : names) EXPECT_EQ(r.err.find(name), std::string::npos) << name << " was loaded";
}

const std::vector<std::string> kTorchFiles = {"libtorch", "libc10", "iteragpu_torch_backend",
                                              "iteragpu_fake_backend"};

// Even a plugin named by ITERAGPU_BACKEND is not opened by commands that need no GPU.
const std::map<std::string, std::string> kPluginNamed = {{"ITERAGPU_BACKEND", kFakePlugin}};

TEST(LazyTorchLoading, EstimateLoadsNoTorch) {
  const ProcessResult r = traced({"estimate", "--parameters", "7B", "--bits", "16"}, kPluginNamed);
  EXPECT_EQ(r.exit_code, 0) << r.err.substr(r.err.size() > 2000 ? r.err.size() - 2000 : 0);
  expect_not_loaded(r, kTorchFiles);
}

TEST(LazyTorchLoading, PackagesLoadsNoTorch) {
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"packages", "--list"},
        std::vector<std::string>{"packages", "--gpu", "b200", "--days", "7", "--lots", "2"}}) {
    const ProcessResult r = traced(args, kPluginNamed);
    EXPECT_EQ(r.exit_code, 0) << args.back();
    expect_not_loaded(r, kTorchFiles);
  }
}

TEST(LazyTorchLoading, EnvironmentDoesLoadTheNamedPlugin) {  // the check can fail
  const ProcessResult r = traced({"environment"}, kPluginNamed);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.err.find("iteragpu_fake_backend"), std::string::npos);
}

TEST(LazyTorchLoading, EnvironmentLoadsTheTorchPluginWhenBuilt) {
  if (!ITERAGPU_TORCH_BACKEND_BUILT) GTEST_SKIP() << "this build has no LibTorch backend plugin";
  const ProcessResult r = traced({"environment"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.err.find("libiteragpu_torch_backend.so"), std::string::npos);
  EXPECT_NE(r.err.find("libc10"), std::string::npos);
}

}  // namespace
}  // namespace iteragpu::testing
