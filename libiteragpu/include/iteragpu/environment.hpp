#pragma once
// A diagnostic of the LibTorch/CUDA/GPU stack (SPEC §2). Collects no environment-variable
// values, host names or user names.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "iteragpu/backend.hpp"

namespace iteragpu {

struct EnvironmentRequest {
  std::string device = "cuda:0";  // "cuda:N"
  std::string backend_path;       // explicit plugin file; empty = default search
  std::string output;             // JSON file to create (must not exist); empty = none
};

struct EnvironmentReport {
  std::string iteragpu_version;
  std::string iteragpu_build;
  std::string os_name;         // "Linux"
  std::optional<std::string> os_distribution;  // "Debian GNU/Linux 12 (bookworm)"
  std::string kernel_release;  // uname -r
  std::string architecture;    // "x86_64"
  std::string libc;            // "glibc 2.36"

  bool backend_available = false;  // the plugin (or a caller's backend) was loaded
  std::string backend_path;        // the plugin file; home directory shown as "~"
  // Why there is no stack report: the loader's reason, or the backend's when it could not
  // describe the stack. Empty when `stack` is set.
  std::string backend_error;

  std::optional<StackReport> stack;  // only when the backend is available
  std::string selected_device;       // as requested: "cuda:0"
  int selected_index = 0;
  bool selected_present = false;     // the index exists among the visible GPUs

  std::optional<std::string> nvidia_driver_version;  // from the kernel driver, if exposed
  std::string nvidia_driver_source;                  // where it was read

  // The backend that described the stack is not LibTorch (the test double): its figures
  // are scripted, and every view of them says so.
  // Recorded as the test double; a file written before identities were recorded is not.
  bool from_test_double() const { return stack && stack->backend_identity == kTestDoubleBackend; }
  // Any backend but LibTorch made the report (its figures are not a GPU's); a file written
  // before identities were recorded counts as LibTorch's.
  bool from_other_than_libtorch() const {
    return stack && !stack->backend_identity.empty() && stack->backend_identity != kLibTorchBackend;
  }
  // The selected GPU among those the stack reports; null when there is none.
  const GpuDevice* selected_gpu() const {
    if (!stack) return nullptr;
    for (const GpuDevice& gpu : stack->gpus)
      if (gpu.index == selected_index) return &gpu;
    return nullptr;
  }

  std::string to_json() const;  // schema "iteragpu.environment"
  std::string to_text() const;
};

// How every text view marks figures from a backend other than LibTorch.
inline constexpr const char* kTestDoubleMark =
    "TEST DOUBLE: scripted figures from a stand-in backend, not measured on a GPU";

class Environment {
 public:
  Environment();  // the LibTorch plugin, loaded on first collect()
  explicit Environment(std::shared_ptr<Backend> backend);  // e.g. a test double
  // Throws UsageError for a malformed device. A missing backend or GPU is a valid report.
  // With request.output, the path is refused first if it exists (OutputExists) and the JSON
  // report is then published there atomically (created exclusively, never overwritten).
  EnvironmentReport collect(const EnvironmentRequest& request) const;

 private:
  std::shared_ptr<Backend> backend_;
};

// Why this stack measures no GPU, in words a user can act on: a LibTorch built without CUDA
// or ROCm (CPU only: rebuild against a CUDA PyTorch, the documentation page named) or a GPU
// runtime that sees no device.
std::string no_gpu_reason(const StackReport& stack);
inline constexpr const char* kGpuBuildGuide = "docs/building.md, \"Measuring on a GPU machine\"";

// Parses "cuda:N" (0 ≤ N ≤ 127, no sign or leading zero); throws UsageError naming `field`.
// "cuda" alone is refused: the device is always named explicitly. "cpu" is refused: only
// GPUs are measured.
int parse_device_index(const std::string& device, const std::string& field = "device");

}  // namespace iteragpu
