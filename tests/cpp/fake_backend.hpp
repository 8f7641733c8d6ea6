#pragma once
// A scripted test double of the LibTorch backend: N fake GPUs, a caching allocator whose
// counters grow by the bytes each operation would allocate, a log of every call (to assert
// the protocol's exact order), and failures injected per call. It also checks the contract
// PhaseMeasurer must keep (open first, no forward while an output is alive, timers in
// pairs) and reports a breach as a failure, so a protocol bug cannot go unnoticed. Each
// fake GPU is told apart in what a measurement records: GPU N is named "Fake GPU N" and its
// first forward keeps a workspace N × 512 bytes larger than GPU 0's.
// Header only: used in-process by the unit tests and wrapped as a plugin file
// (fake_backend_plugin.cpp) for the end-to-end tests.

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "iteragpu/backend.hpp"

namespace iteragpu::testing {

class FakeBackend : public Backend {
 public:
  static constexpr std::uint64_t kSegmentBytes = 2 * 1024 * 1024;    // reserved grows by these
  static constexpr std::uint64_t kWorkspaceBytes = 1024 * 1024;      // GPU 0's, from the 1st forward
  static constexpr std::uint64_t kGpuTotalBytes = 80ULL * 1024 * 1024 * 1024;
  static constexpr double kGpuEventSeconds = 0.00025;

  struct InjectedFailure {
    std::string call;     // "open", "load_model", "forward", "synchronize", ...
    int occurrence = 1;   // the n-th call of that name (1-based)
    BackendStatus::Code code = BackendStatus::Code::kFailed;
    std::string message = "injected failure";
    int device_index = -1;  // -1: any; else only once open() was asked for that device
  };

  struct Script {
    int gpu_count = 1;
    std::string torch_version = "0.0.0+fake";
    std::set<std::string> unsupported_dtypes;  // open() answers kUnsupported for these
    std::vector<InjectedFailure> failures;
    bool has_gpu_timer = true;                  // false: gpu_timer_seconds is kUnsupported
    // Each fake GPU's memory: an allocation that would take reserved beyond it fails with
    // kOutOfMemory, as cudaMalloc would; free memory is reported as this minus reserved.
    std::uint64_t memory_bytes = kGpuTotalBytes;
    std::function<void(const std::string& call)> on_call;  // e.g. to request an interrupt
  };

  FakeBackend() = default;
  explicit FakeBackend(Script script) : script_(std::move(script)) {}

  // What happened, for the tests.
  std::vector<std::string> calls;
  std::vector<std::string> contract_breaches;
  std::uint64_t allocated() const { return allocated_; }
  std::uint64_t reserved() const { return reserved_; }
  bool output_alive() const { return output_alive_; }
  const ModelSpec& spec() const { return spec_; }

  // Bytes of one tensor of `elements` values of the opened dtype, rounded up like the CUDA
  // caching allocator (multiples of 512).
  std::uint64_t tensor_bytes(std::int64_t elements) const {
    const std::uint64_t raw = static_cast<std::uint64_t>(elements) * dtype_bytes();
    return (raw + 511) / 512 * 512;
  }
  std::uint64_t output_bytes() const { return tensor_bytes(spec_.batch * spec_.context * spec_.width); }
  // Kept from the first forward on; differs per device so that each GPU's counters show
  // which GPU they came from.
  static std::uint64_t workspace_bytes(int device_index) {
    return kWorkspaceBytes + 512 * static_cast<std::uint64_t>(device_index);
  }

  BackendStatus describe(int device_index, StackReport& report) override {
    if (auto status = enter("describe", false); !status.ok()) return status;
    report.backend_identity = kTestDoubleBackend;  // so no view takes its figures for a GPU's
    report.torch_version = script_.torch_version;
    report.cuda_build_version = script_.gpu_count > 0 ? std::optional<std::string>("12.8") : std::nullopt;
    report.gpu_runtime_available = script_.gpu_count > 0;
    for (int i = 0; i < script_.gpu_count; ++i)
      report.gpus.push_back({i, "Fake GPU " + std::to_string(i), 9, 0, script_.memory_bytes, 132});
    if (device_index >= 0 && device_index < script_.gpu_count) {
      report.selected_free_bytes = script_.memory_bytes - reserved_;
      report.selected_total_bytes = script_.memory_bytes;
    }
    return BackendStatus::Ok();
  }

  BackendStatus open(const ModelSpec& spec) override {
    requested_device_ = spec.device_index;
    if (auto status = enter("open", false); !status.ok()) return status;
    if (spec.device_index < 0 || spec.device_index >= script_.gpu_count)
      return {BackendStatus::Code::kDeviceUnavailable,
              "no device cuda:" + std::to_string(spec.device_index)};
    if (script_.unsupported_dtypes.count(spec.dtype))
      return {BackendStatus::Code::kUnsupported, spec.dtype + " does not run on Fake GPU"};
    spec_ = spec;
    opened_ = true;
    return BackendStatus::Ok();
  }

  BackendStatus synchronize() override { return enter("synchronize"); }

  BackendStatus read_counters(AllocatorCounters& counters) override {
    if (auto status = enter("read_counters"); !status.ok()) return status;
    counters = {allocated_, reserved_, peak_allocated_, peak_reserved_};
    return BackendStatus::Ok();
  }

  BackendStatus reset_peaks() override {
    if (auto status = enter("reset_peaks"); !status.ok()) return status;
    peak_allocated_ = allocated_;
    peak_reserved_ = reserved_;
    return BackendStatus::Ok();
  }

  BackendStatus start_gpu_timer() override {
    if (auto status = enter("start_gpu_timer"); !status.ok()) return status;
    if (timer_running_) return breach("start_gpu_timer while the timer runs");
    timer_running_ = true;
    timer_stopped_ = false;
    return BackendStatus::Ok();
  }

  BackendStatus stop_gpu_timer() override {
    if (auto status = enter("stop_gpu_timer"); !status.ok()) return status;
    if (!timer_running_) return breach("stop_gpu_timer without start_gpu_timer");
    timer_running_ = false;
    timer_stopped_ = true;
    return BackendStatus::Ok();
  }

  BackendStatus gpu_timer_seconds(double& seconds) override {
    if (auto status = enter("gpu_timer_seconds"); !status.ok()) return status;
    if (!timer_stopped_) return breach("gpu_timer_seconds without a start/stop pair");
    if (!script_.has_gpu_timer) return {BackendStatus::Code::kUnsupported, "no GPU events"};
    seconds = kGpuEventSeconds;
    return BackendStatus::Ok();
  }

  BackendStatus load_model() override {
    if (auto status = enter("load_model"); !status.ok()) return status;
    if (model_loaded_) return breach("load_model twice");
    for (std::int64_t elements : {spec_.hidden * spec_.width, spec_.hidden, spec_.width * spec_.hidden, spec_.width})
      if (!allocate(tensor_bytes(elements))) return out_of_memory();
    model_loaded_ = true;
    return BackendStatus::Ok();
  }

  BackendStatus create_inputs() override {
    if (auto status = enter("create_inputs"); !status.ok()) return status;
    if (inputs_created_) return breach("create_inputs twice");
    if (!allocate(tensor_bytes(spec_.batch * spec_.context * spec_.width))) return out_of_memory();
    inputs_created_ = true;
    return BackendStatus::Ok();
  }

  // Linear → GELU → Linear: two hidden-sized intermediates live briefly, the output stays.
  BackendStatus forward() override {
    if (auto status = enter("forward"); !status.ok()) return status;
    if (!model_loaded_ || !inputs_created_) return breach("forward before the model and inputs");
    if (output_alive_) return breach("forward while the previous output is alive");
    if (!workspace_allocated_) {
      if (!allocate(workspace_bytes(spec_.device_index))) return out_of_memory();
      workspace_allocated_ = true;
    }
    const std::uint64_t hidden = tensor_bytes(spec_.batch * spec_.context * spec_.hidden);
    if (!allocate(hidden)) return out_of_memory();
    if (!allocate(hidden)) {
      free(hidden);
      return out_of_memory();
    }
    free(hidden);
    if (!allocate(output_bytes())) {
      free(hidden);
      return out_of_memory();
    }
    free(hidden);
    output_alive_ = true;
    ++forwards_;
    return BackendStatus::Ok();
  }

  BackendStatus release_output() override {
    if (auto status = enter("release_output"); !status.ok()) return status;
    if (!output_alive_) return breach("release_output without an output");
    free(output_bytes());
    output_alive_ = false;
    return BackendStatus::Ok();
  }

  // Frees the model, inputs and output; the cache (reserved) stays, as in LibTorch.
  BackendStatus run_report(RunReport&) override {
    return {BackendStatus::Code::kUnsupported, "the test double runs no checkpoint"};
  }
  void close() override {
    calls.push_back("close");
    if (output_alive_) free(output_bytes());
    if (inputs_created_) free(tensor_bytes(spec_.batch * spec_.context * spec_.width));
    if (model_loaded_)
      for (std::int64_t elements : {spec_.hidden * spec_.width, spec_.hidden, spec_.width * spec_.hidden, spec_.width})
        free(tensor_bytes(elements));
    output_alive_ = inputs_created_ = model_loaded_ = opened_ = false;
  }

  int forwards() const { return forwards_; }

 private:
  // Logs the call, runs the hook, answers an injected failure, and checks the session is open.
  BackendStatus enter(const std::string& call, bool needs_open = true) {
    calls.push_back(call);
    const int occurrence = ++occurrences_[call];
    if (script_.on_call) script_.on_call(call);
    for (const auto& failure : script_.failures)
      if (failure.call == call && failure.occurrence == occurrence &&
          (failure.device_index < 0 || failure.device_index == requested_device_))
        return {failure.code, failure.message};
    if (needs_open && !opened_) return breach(call + " before open");
    return BackendStatus::Ok();
  }

  BackendStatus breach(const std::string& what) {
    contract_breaches.push_back(what);
    return {BackendStatus::Code::kFailed, "contract breach: " + what};
  }

  std::uint64_t dtype_bytes() const { return spec_.dtype == "float32" ? 4 : 2; }

  // False, changing nothing, when the reserved memory would exceed the GPU's.
  bool allocate(std::uint64_t bytes) {
    const std::uint64_t allocated = allocated_ + bytes;
    const std::uint64_t reserved =
        allocated > reserved_ ? (allocated + kSegmentBytes - 1) / kSegmentBytes * kSegmentBytes : reserved_;
    if (reserved > script_.memory_bytes) return false;
    allocated_ = allocated;
    reserved_ = reserved;
    peak_allocated_ = std::max(peak_allocated_, allocated_);
    peak_reserved_ = std::max(peak_reserved_, reserved_);
    return true;
  }
  BackendStatus out_of_memory() const {
    return {BackendStatus::Code::kOutOfMemory,
            "CUDA out of memory (Fake GPU of " + std::to_string(script_.memory_bytes) + " bytes)"};
  }
  void free(std::uint64_t bytes) { allocated_ -= bytes; }

  Script script_;
  std::map<std::string, int> occurrences_;
  ModelSpec spec_;
  int requested_device_ = -1;  // the device open() was last asked for
  bool opened_ = false, model_loaded_ = false, inputs_created_ = false;
  bool output_alive_ = false, workspace_allocated_ = false;
  bool timer_running_ = false, timer_stopped_ = false;
  int forwards_ = 0;
  std::uint64_t allocated_ = 0, reserved_ = 0, peak_allocated_ = 0, peak_reserved_ = 0;
};

}  // namespace iteragpu::testing
