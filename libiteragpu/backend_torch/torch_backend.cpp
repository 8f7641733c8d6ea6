// iteragpu::Backend implemented with LibTorch: the device, its allocator counters and timers;
// what runs inside the phases is a TorchWorkload (torch_workload.hpp), the only code of the
// project that touches tensors, picked by the spec's kind among the registered ones. Built as
// the plugin libiteragpu_torch_backend.so; the core opens it with dlopen and talks to it
// through the two extern "C" entry points at the end of this file. Every method
// catches what LibTorch throws and returns a BackendStatus, so nothing unwinds into the core.

#include <ATen/ATen.h>
#include <ATen/detail/CUDAHooksInterface.h>
#include <torch/cuda.h>
#include <torch/torch.h>
#include <torch/version.h>

#include <exception>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "iteragpu/backend.hpp"
#include "torch_workload.hpp"

#if ITERAGPU_BACKEND_HAS_CUDA
#include "cuda_device.hpp"
#endif
#if defined(USE_ROCM) && __has_include(<hip/hip_version.h>)
#include <hip/hip_version.h>
#define ITERAGPU_HAVE_HIP_VERSION 1
#endif

namespace iteragpu::torch_backend {
namespace {

using Code = BackendStatus::Code;

#if defined(USE_ROCM)
constexpr bool kRocmBuild = true;  // HIP behind the CUDA names (cuda:N, c10::cuda)
#else
constexpr bool kRocmBuild = false;
#endif

BackendStatus status(Code code, std::string message) {
  BackendStatus result;
  result.code = code;
  result.message = std::move(message);
  return result;
}

// LibTorch messages can span several lines; the core prints one.
std::string one_line(std::string text) {
  for (char& c : text) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  while (!text.empty() && text.back() == ' ') text.pop_back();
  return text;
}

bool mentions_out_of_memory(const std::string& message) {
  return message.find("out of memory") != std::string::npos;
}

// Runs `work` (returning void, or a BackendStatus for refusals it finds itself), mapping
// LibTorch's exceptions onto statuses: the caching allocator's OutOfMemoryError (and any
// error that says "out of memory") → kOutOfMemory, anything else → kFailed, naming `what`
// was being done.
template <typename Work>
BackendStatus guarded(const char* what, Work&& work) noexcept {
  try {
    try {
      if constexpr (std::is_void_v<decltype(work())>) {
        work();
        return BackendStatus::Ok();
      } else {
        return work();
      }
    } catch (const c10::OutOfMemoryError& error) {
      return status(Code::kOutOfMemory, one_line(error.what_without_backtrace()));
    } catch (const c10::Error& error) {
      std::string message = one_line(error.what_without_backtrace());
      const Code code = mentions_out_of_memory(message) ? Code::kOutOfMemory : Code::kFailed;
      return status(code, std::string(what) + ": " + message);
    } catch (const std::bad_alloc&) {
      return status(Code::kFailed, std::string(what) + ": host memory exhausted");
    } catch (const std::exception& error) {
      return status(Code::kFailed, std::string(what) + ": " + one_line(error.what()));
    } catch (...) {
      return status(Code::kFailed, std::string(what) + ": unknown exception from LibTorch");
    }
  } catch (...) {  // building the status itself failed (no memory left for a string)
    BackendStatus failed;
    failed.code = Code::kFailed;
    return failed;
  }
}

// CUDA versions as CUDART_VERSION encodes them: 13000 → "13.0", 12080 → "12.8".
std::string cuda_version_text(long version) {
  return std::to_string(version / 1000) + "." + std::to_string((version % 1000) / 10);
}

// cuDNN 9 encodes major·10000 + minor·100 + patch; cuDNN 8 and earlier major·1000 + minor·100
// + patch.
std::string cudnn_version_text(long version) {
  const long major_unit = version >= 90000 ? 10000 : 1000;
  return std::to_string(version / major_unit) + "." +
         std::to_string((version % major_unit) / 100) + "." + std::to_string(version % 100);
}

std::optional<c10::ScalarType> scalar_type_of(const std::string& dtype) {
  if (dtype == "float32") return c10::ScalarType::Float;
  if (dtype == "float16") return c10::ScalarType::Half;
  if (dtype == "bfloat16") return c10::ScalarType::BFloat16;
  return std::nullopt;
}

// What this LibTorch was built with, for messages: "(built with CUDA 13.0)".
std::string build_note() {
  try {
    if (kRocmBuild) return "(a ROCm build)";
    const auto& hooks = at::detail::getCUDAHooks();
    if (hooks.hasCUDART()) return "(built with CUDA " + cuda_version_text(hooks.versionCUDART()) + ")";
  } catch (...) {  // the CPU build's hooks throw: it has no CUDA
  }
  return "(built without CUDA)";
}

class TorchBackend final : public Backend {
 public:
  BackendStatus describe(int device_index, StackReport& report) override {
    return guarded("describe", [&] {
      report = StackReport{};
      report.backend_identity = kLibTorchBackend;
      report.torch_version = TORCH_VERSION;
      fill_build_versions(report);
      report.gpu_runtime_available = torch::cuda::is_available();
#if ITERAGPU_BACKEND_HAS_CUDA
      if (report.gpu_runtime_available) {
        report.gpus = cuda_devices();
        if (device_index >= 0 && device_index < static_cast<int>(report.gpus.size())) {
          std::uint64_t free_bytes = 0, total_bytes = 0;
          cuda_memory_info(device_index, free_bytes, total_bytes);
          report.selected_free_bytes = free_bytes;
          report.selected_total_bytes = total_bytes;
          const BlasWorkspaceSizes workspaces = cuda_blas_workspace_sizes(device_index);
          report.cublas_workspace_bytes = workspaces.cublas_bytes;
          report.cublaslt_workspace_bytes = workspaces.cublaslt_bytes;
        }
      }
#else
      (void)device_index;
#endif
    });
  }

  BackendStatus open(const WorkloadSpec& spec) override {
    close();
    last_report_.reset();
    // What to run is checked before where: the workload and its payload need no device.
    TorchWorkloadBuilder build;
    if (BackendStatus decoded = decode_workload(spec, build); !decoded.ok()) return decoded;
    const std::string device_name = "cuda:" + std::to_string(spec.device_index);
    if (!torch::cuda::is_available()) {
      return status(Code::kDeviceUnavailable, std::string("no GPU runtime available: LibTorch ") +
                                                  TORCH_VERSION + " reports no CUDA device " +
                                                  build_note());
    }
    const auto scalar_type = scalar_type_of(spec.dtype);
    if (!scalar_type) {
      return status(Code::kUnsupported, "unknown dtype '" + spec.dtype +
                                            "' (accepted: float32, float16, bfloat16)");
    }
#if ITERAGPU_BACKEND_HAS_CUDA
    return guarded("open", [&]() -> BackendStatus {
      const std::vector<GpuDevice> devices = cuda_devices();
      const int count = static_cast<int>(devices.size());
      if (spec.device_index < 0 || spec.device_index >= count) {
        return status(Code::kDeviceUnavailable,
                      device_name + " does not exist: LibTorch sees " + std::to_string(count) +
                          " CUDA device" + (count == 1 ? "" : "s") +
                          (count > 0 ? " (cuda:0 to cuda:" + std::to_string(count - 1) + ")"
                                     : std::string()));
      }
      const GpuDevice& device = devices[static_cast<std::size_t>(spec.device_index)];
      // bfloat16 arithmetic needs Ampere (compute capability 8.0) or newer; ROCm devices
      // report their architecture differently and are left to LibTorch.
      if (*scalar_type == c10::ScalarType::BFloat16 && !kRocmBuild &&
          device.compute_capability_major < 8) {
        return status(Code::kUnsupported,
                      "bfloat16 needs compute capability 8.0 or newer; " + device_name + " (" +
                          device.name + ") has " + std::to_string(device.compute_capability_major) +
                          "." + std::to_string(device.compute_capability_minor));
      }
      cuda_select_device(spec.device_index);
      device_index_ = spec.device_index;
      workload_ = build(*scalar_type,
                        c10::Device(c10::DeviceType::CUDA, static_cast<c10::DeviceIndex>(spec.device_index)));
      timer_ = std::make_unique<CudaEventTimer>(spec.device_index);
      opened_ = true;
      return BackendStatus::Ok();
    });
#else
    // A CPU-only LibTorch reports no CUDA device, so this is never reached.
    return status(Code::kDeviceUnavailable, "this LibTorch backend was built without CUDA");
#endif
  }

  BackendStatus synchronize() override {
    if (!opened_) return not_open();
    return guarded("synchronize", [&] { torch::cuda::synchronize(device_index_); });
  }

  BackendStatus read_counters(AllocatorCounters& counters) override {
    if (!opened_) return not_open();
#if ITERAGPU_BACKEND_HAS_CUDA
    return guarded("read_counters", [&] { counters = cuda_allocator_counters(device_index_); });
#else
    (void)counters;
    return not_open();
#endif
  }

  BackendStatus reset_peaks() override {
    if (!opened_) return not_open();
#if ITERAGPU_BACKEND_HAS_CUDA
    return guarded("reset_peaks", [&] { cuda_reset_peaks(device_index_); });
#else
    return not_open();
#endif
  }

  BackendStatus start_gpu_timer() override {
    if (!opened_) return not_open();
#if ITERAGPU_BACKEND_HAS_CUDA
    return guarded("start_gpu_timer", [&] { timer_->start(); });
#else
    return not_open();
#endif
  }

  BackendStatus stop_gpu_timer() override {
    if (!opened_) return not_open();
#if ITERAGPU_BACKEND_HAS_CUDA
    return guarded("stop_gpu_timer", [&] { timer_->stop(); });
#else
    return not_open();
#endif
  }

  BackendStatus gpu_timer_seconds(double& seconds) override {
    if (!opened_) return not_open();
#if ITERAGPU_BACKEND_HAS_CUDA
    return guarded("gpu_timer_seconds", [&] { seconds = timer_->elapsed_seconds(); });
#else
    (void)seconds;
    return not_open();
#endif
  }

  BackendStatus run_step(const std::string& step) override {
    if (!opened_) return not_open();
    return guarded(step.c_str(), [&]() -> BackendStatus {
      if (workload_->run_step(step)) return BackendStatus::Ok();
      return status(Code::kUnsupported, "the workload has no step " + step);
    });
  }

  BackendStatus release_output() override {
    if (!workload_) return BackendStatus::Ok();
    return guarded("release_output", [&] { workload_->release_output(); });
  }

  // The report is taken when the session closes: after the last phase, before the tensors go.
  BackendStatus run_report(std::string& report) override {
    if (!last_report_) return status(Code::kUnsupported, "the workload reported nothing");
    return guarded("run_report", [&] { report = *last_report_; });
  }

  void close() override {
    // Tensors go back to the caching allocator; its cache is deliberately left as it is.
    try {
      if (workload_) {
        std::string report;
        if (workload_->report(report)) last_report_ = std::move(report);
      }
      if (workload_) workload_->release();
      workload_.reset();
#if ITERAGPU_BACKEND_HAS_CUDA
      timer_.reset();  // its events go while the CUDA runtime is surely still there
#endif
      opened_ = false;
    } catch (...) {  // releasing tensors does not throw in practice; never unwind from close
    }
  }

  ~TorchBackend() override { close(); }

 private:
  static BackendStatus not_open() {
    return status(Code::kFailed, "the backend was not opened on a device (call open first)");
  }

  static void fill_build_versions(StackReport& report) {
    const auto& hooks = at::detail::getCUDAHooks();
#if defined(USE_ROCM)
    // ROCm builds reuse the CUDA hooks and device names; their runtime is HIP, not CUDA.
    (void)hooks;
#if defined(ITERAGPU_HAVE_HIP_VERSION)
    report.hip_build_version = std::to_string(HIP_VERSION_MAJOR) + "." +
                               std::to_string(HIP_VERSION_MINOR) + "." +
                               std::to_string(HIP_VERSION_PATCH);
#endif
#else
    try {
      if (hooks.hasCUDART()) report.cuda_build_version = cuda_version_text(hooks.versionCUDART());
    } catch (const c10::Error&) {  // the CPU build's hooks throw
    }
    try {  // throws when LibTorch was built without cuDNN
      report.cudnn_version = cudnn_version_text(hooks.versionCuDNN());
    } catch (const c10::Error&) {
    }
#endif
  }

  // The registered workload `spec.kind` reads the spec's payload into `build`.
  static BackendStatus decode_workload(const WorkloadSpec& spec, TorchWorkloadBuilder& build) {
    return guarded("open", [&]() -> BackendStatus {
      const auto& workloads = registered_workloads();
      const auto found = workloads.find(spec.kind);
      if (found == workloads.end()) {
        std::string kinds;
        for (const auto& workload : workloads) kinds += (kinds.empty() ? "" : ", ") + workload.first;
        return status(Code::kUnsupported,
                      "this plugin has no workload " + one_line(spec.kind) + " (it has: " + kinds + ")");
      }
      std::string malformed;
      build = found->second(spec, malformed);
      if (!build) return status(Code::kFailed, "the " + spec.kind + " payload is malformed: " + one_line(malformed));
      return BackendStatus::Ok();
    });
  }

  bool opened_ = false;
  int device_index_ = 0;
  std::unique_ptr<TorchWorkload> workload_;  // what runs inside the phases, once open
  std::optional<std::string> last_report_;    // the workload's report, kept after close
#if ITERAGPU_BACKEND_HAS_CUDA
  std::unique_ptr<CudaEventTimer> timer_;
#endif
};

}  // namespace
}  // namespace iteragpu::torch_backend

#define ITERAGPU_BACKEND_EXPORT extern "C" __attribute__((visibility("default")))

ITERAGPU_BACKEND_EXPORT int iteragpu_backend_abi_version() { return iteragpu::kBackendAbiVersion; }

ITERAGPU_BACKEND_EXPORT iteragpu::Backend* iteragpu_backend_create() {
  try {
    return new iteragpu::torch_backend::TorchBackend();
  } catch (...) {  // never let an exception cross the C boundary
    return nullptr;
  }
}
