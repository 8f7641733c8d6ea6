#pragma once
// The seam between the core and LibTorch. All LibTorch code lives in a plugin
// (libiteragpu_torch_backend.so) that implements Backend and is opened with dlopen on first
// GPU use, so `estimate` and `packages` never load LibTorch. Tests implement Backend with a
// test double. Plain C++ types only; failures come back as BackendStatus values, never as
// exceptions, so nothing unwinds across the plugin boundary.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace iteragpu {

// Bumped whenever Backend or the structs below change; the loader refuses a mismatch.
inline constexpr int kBackendAbiVersion = 5;  // 5: WorkloadSpec, run_step, the report as text

// What a backend says it is, recorded with every environment report and measurement so a
// figure can be traced to what produced it. Only kLibTorchBackend measures a real GPU.
inline constexpr const char* kLibTorchBackend = "libtorch";
inline constexpr const char* kTestDoubleBackend = "test-double";  // tests/cpp/fake_backend

struct BackendStatus {
  enum class Code { kOk, kDeviceUnavailable, kUnsupported, kOutOfMemory, kFailed };
  Code code = Code::kOk;
  std::string message;
  bool ok() const { return code == Code::kOk; }
  static BackendStatus Ok() { return {}; }
};

struct GpuDevice {
  int index = 0;
  std::string name;
  int compute_capability_major = 0;
  int compute_capability_minor = 0;
  std::uint64_t total_memory_bytes = 0;
  int multiprocessors = 0;
};

// What the backend knows of the LibTorch/GPU stack.
struct StackReport {
  std::string backend_identity;                     // kLibTorchBackend, kTestDoubleBackend
  std::string torch_version;                        // "1.13.1", "2.11.0+cu130"
  std::optional<std::string> cuda_build_version;    // CUDA runtime LibTorch was built with
  std::optional<std::string> hip_build_version;     // HIP version of a ROCm build
  std::optional<std::string> cudnn_version;
  bool gpu_runtime_available = false;
  std::vector<GpuDevice> gpus;
  // Free/total memory of the selected device as the runtime reports it (cudaMemGetInfo).
  std::optional<std::uint64_t> selected_free_bytes;
  std::optional<std::uint64_t> selected_total_bytes;
  // The workspaces LibTorch gives cuBLAS and cuBLASLt on the selected device
  // (at::cuda::getChosenWorkspaceSize, getCUDABlasLtWorkspaceSize), read without allocating.
  std::optional<std::uint64_t> cublas_workspace_bytes;
  std::optional<std::uint64_t> cublaslt_workspace_bytes;
};

// This process's caching-allocator counters for the selected device.
struct AllocatorCounters {
  std::uint64_t allocated_bytes = 0;
  std::uint64_t reserved_bytes = 0;
  std::uint64_t peak_allocated_bytes = 0;  // since the last reset_peaks()
  std::uint64_t peak_reserved_bytes = 0;
};

// What the backend runs: a workload named by its kind, with a payload that only the workload
// reads. A new workload adds a core workload (libiteragpu/src/workload/), which plans its
// steps and writes the payload, and a plugin module (libiteragpu/backend_torch/), which reads
// the payload and runs the steps; neither this header nor the phase protocol changes.
struct WorkloadSpec {
  int device_index = 0;
  std::string kind;               // the workload's registered name: "synthetic-mlp", "decoder"
  std::string dtype = "float32";  // float32 | float16 | bfloat16
  std::uint64_t seed = 0;
  // The workload's own description (its sizes, a checkpoint's tensors), written by its core
  // side and read by its plugin module with one codec; opaque to the protocol and this ABI.
  std::string payload;
};

// One measurement session on one device. PhaseMeasurer calls, for every phase:
// synchronize, read_counters (baseline), reset_peaks, [start_gpu_timer, the phase's work,
// stop_gpu_timer], synchronize, read_counters (end and peaks), gpu_timer_seconds.
class Backend {
 public:
  virtual ~Backend() = default;

  // Fills `report`; `device_index` < 0 means no device selected. Never fails for lack of
  // a GPU: that is a valid report (gpu_runtime_available = false).
  virtual BackendStatus describe(int device_index, StackReport& report) = 0;

  // Selects the device and checks that it exists and can run the dtype, and that the backend
  // has the workload `spec.kind` and can read its payload. Allocates nothing on the device
  // that the phases would count.
  virtual BackendStatus open(const WorkloadSpec& spec) = 0;
  virtual BackendStatus synchronize() = 0;
  virtual BackendStatus read_counters(AllocatorCounters& counters) = 0;
  virtual BackendStatus reset_peaks() = 0;
  virtual BackendStatus start_gpu_timer() = 0;
  virtual BackendStatus stop_gpu_timer() = 0;
  // GPU time between the last start/stop pair (call after synchronize).
  virtual BackendStatus gpu_timer_seconds(double& seconds) = 0;

  // One step of the opened workload, by the name its phase plan gives it ("load_model",
  // "create_inputs", "forward"); what a step does is the workload's business. An output a
  // step leaves (a forward's) stays alive until release_output(). kUnsupported for a step
  // the workload does not have.
  virtual BackendStatus run_step(const std::string& step) = 0;
  virtual BackendStatus release_output() = 0;
  // Frees what the workload holds on the device. The allocator cache is left as it is.
  virtual void close() = 0;
  // What the run produced besides the counters, as the workload's own text (JSON), which its
  // core side reads; taken when the session closes. kUnsupported when the workload reports
  // nothing (the synthetic MLP).
  virtual BackendStatus run_report(std::string& report) = 0;
};

// The plugin's C entry points (exported by libiteragpu_torch_backend.so).
extern "C" {
using BackendAbiVersionFn = int (*)();
using BackendCreateFn = Backend* (*)();
}
inline constexpr const char* kBackendAbiVersionSymbol = "iteragpu_backend_abi_version";
inline constexpr const char* kBackendCreateSymbol = "iteragpu_backend_create";
inline constexpr const char* kBackendPluginFileName = "libiteragpu_torch_backend.so";

// Where the plugin was looked for and what happened.
struct BackendLoadResult {
  std::shared_ptr<Backend> backend;  // null when it could not be loaded
  std::string path;                  // the file loaded or tried; empty when none was found
  std::string error;                 // the loader's reason when backend is null
};

// Opens the LibTorch backend plugin once per process (later calls return the same
// result). `explicit_path` (or, when empty, the ITERAGPU_BACKEND environment variable)
// names the plugin file; otherwise it is looked for beside the executable or Python module
// that holds the core, then in ../lib/iteragpu/ from there.
const BackendLoadResult& load_torch_backend(const std::string& explicit_path = "");

}  // namespace iteragpu
