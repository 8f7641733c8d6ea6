// FakeBackend as a plugin file, so the end-to-end tests can run `iteragpu measure
// --backend <this file>` without a GPU. Scripted by ITERAGPU_FAKE_BACKEND, entries separated
// by ';':
//   gpus=N                      number of fake GPUs (default 1)
//   fail=CALL:N:CODE            the N-th CALL answers CODE (oom, device, unsupported, failed)
//   fail_device=D:CALL:N:CODE   the same, only in a process that opens device cuda:D
//   unsupported_dtype=DTYPE     open() refuses DTYPE
//   interrupt=CALL:N            the N-th CALL raises SIGINT, as a user's Ctrl-C would
//   delay=CALL:MS               every CALL first sleeps MS milliseconds (a slow GPU)
//   memory=BYTES                each fake GPU's memory (allocations beyond it: out of memory)
// ITERAGPU_FAKE_ABI_VERSION overrides the interface version it declares (to test refusal).

#include <chrono>
#include <csignal>
#include <memory>
#include <cstdlib>
#include <sstream>
#include <thread>

#include "fake_backend.hpp"

namespace {

using iteragpu::BackendStatus;
using iteragpu::testing::FakeBackend;

std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> parts;
  std::stringstream stream(text);
  for (std::string part; std::getline(stream, part, separator);)
    if (!part.empty()) parts.push_back(part);
  return parts;
}

BackendStatus::Code code_named(const std::string& name) {
  if (name == "oom") return BackendStatus::Code::kOutOfMemory;
  if (name == "device") return BackendStatus::Code::kDeviceUnavailable;
  if (name == "unsupported") return BackendStatus::Code::kUnsupported;
  return BackendStatus::Code::kFailed;
}

FakeBackend::Script script_from_environment() {
  FakeBackend::Script script;
  std::vector<std::function<void(const std::string&)>> hooks;  // run on every call
  const char* text = std::getenv("ITERAGPU_FAKE_BACKEND");
  for (const std::string& entry : split(text ? text : "", ';')) {
    const auto eq = entry.find('=');
    const std::string key = entry.substr(0, eq);
    const std::string value = eq == std::string::npos ? "" : entry.substr(eq + 1);
    const std::vector<std::string> fields = split(value, ':');
    if (key == "gpus") {
      script.gpu_count = std::stoi(value);
    } else if (key == "memory") {
      script.memory_bytes = std::stoull(value);
    } else if (key == "unsupported_dtype") {
      script.unsupported_dtypes.insert(value);
    } else if (key == "fail" && fields.size() == 3) {
      script.failures.push_back({fields[0], std::stoi(fields[1]), code_named(fields[2]),
                                 "injected " + fields[2] + " in " + fields[0]});
    } else if (key == "fail_device" && fields.size() == 4) {
      FakeBackend::InjectedFailure failure{fields[1], std::stoi(fields[2]), code_named(fields[3]),
                                           "injected " + fields[3] + " in " + fields[1] + " on cuda:" + fields[0]};
      failure.device_index = std::stoi(fields[0]);
      script.failures.push_back(failure);
    } else if (key == "interrupt" && fields.size() == 2) {
      const std::string call = fields[0];
      const int occurrence = std::stoi(fields[1]);
      auto seen = std::make_shared<int>(0);
      hooks.push_back([call, occurrence, seen](const std::string& name) {
        if (name == call && ++*seen == occurrence) std::raise(SIGINT);
      });
    } else if (key == "delay" && fields.size() == 2) {
      const std::string call = fields[0];
      const std::chrono::milliseconds pause(std::stoi(fields[1]));
      hooks.push_back([call, pause](const std::string& name) {
        if (name == call) std::this_thread::sleep_for(pause);
      });
    }
  }
  if (!hooks.empty())
    script.on_call = [hooks](const std::string& name) {
      for (const auto& hook : hooks) hook(name);
    };
  return script;
}

}  // namespace

extern "C" __attribute__((visibility("default"))) int iteragpu_backend_abi_version() {
  const char* forced = std::getenv("ITERAGPU_FAKE_ABI_VERSION");
  return forced ? std::atoi(forced) : iteragpu::kBackendAbiVersion;
}

extern "C" __attribute__((visibility("default"))) iteragpu::Backend* iteragpu_backend_create() {
  try {
    return new FakeBackend(script_from_environment());
  } catch (...) {
    return nullptr;
  }
}
