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
};

struct EnvironmentReport {
  std::string iteragpu_version;
  std::string iteragpu_build;
  std::string os_name;         // "Linux"
  std::string kernel_release;  // uname -r
  std::string architecture;    // "x86_64"
  std::string libc;            // "glibc 2.36"

  bool backend_available = false;
  std::string backend_path;
  std::string backend_error;   // the loader's reason when not available

  std::optional<StackReport> stack;  // only when the backend is available
  std::string selected_device;       // as requested: "cuda:0"
  int selected_index = 0;
  bool selected_present = false;     // the index exists among the visible GPUs

  std::optional<std::string> nvidia_driver_version;  // from the kernel driver, if exposed
  std::string nvidia_driver_source;                  // where it was read

  std::string to_json() const;  // schema "iteragpu.environment"
  std::string to_text() const;
};

class Environment {
 public:
  Environment();  // the LibTorch plugin, loaded on first collect()
  explicit Environment(std::shared_ptr<Backend> backend);  // e.g. a test double
  // Throws UsageError for a malformed device. A missing backend or GPU is a valid report.
  EnvironmentReport collect(const EnvironmentRequest& request) const;

 private:
  std::shared_ptr<Backend> backend_;
};

// Parses "cuda:N" (N ≥ 0); throws UsageError naming `field`.
int parse_device_index(const std::string& device, const std::string& field = "device");

}  // namespace iteragpu
