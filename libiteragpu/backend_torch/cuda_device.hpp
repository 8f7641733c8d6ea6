#pragma once
// The CUDA-only half of the LibTorch backend: device properties, free memory, the caching
// allocator's counters and GPU event timing. Compiled only against a Torch package that has
// CUDA (ITERAGPU_BACKEND_HAS_CUDA). Failures are thrown as c10::Error; torch_backend.cpp
// turns them into BackendStatus values.

#include <cstdint>
#include <memory>
#include <vector>

#include "iteragpu/backend.hpp"

namespace iteragpu::torch_backend {

// Every visible device, in index order.
std::vector<GpuDevice> cuda_devices();

// Free and total memory of one device, as cudaMemGetInfo reports them.
void cuda_memory_info(int device_index, std::uint64_t& free_bytes, std::uint64_t& total_bytes);

// Makes `device_index` the current device and initialises the caching allocator for it, so
// that its counters can be read before the first tensor exists. Allocates nothing.
void cuda_select_device(int device_index);

// The workspace sizes LibTorch chooses for cuBLAS and cuBLASLt on the device (its defaults
// per GPU architecture, or CUBLAS_WORKSPACE_CONFIG / CUBLASLT_WORKSPACE_SIZE). Reading them
// allocates nothing.
struct BlasWorkspaceSizes {
  std::uint64_t cublas_bytes = 0;
  std::uint64_t cublaslt_bytes = 0;
};
BlasWorkspaceSizes cuda_blas_workspace_sizes(int device_index);

// This process's caching-allocator counters for the device (aggregate over both pools).
AllocatorCounters cuda_allocator_counters(int device_index);
void cuda_reset_peaks(int device_index);

// Two timing events recorded on the device's current stream around a phase's work.
class CudaEventTimer {
 public:
  explicit CudaEventTimer(int device_index);
  ~CudaEventTimer();
  CudaEventTimer(const CudaEventTimer&) = delete;
  CudaEventTimer& operator=(const CudaEventTimer&) = delete;

  void start();
  void stop();
  // Seconds between the last start() and stop(); the device must have been synchronized.
  double elapsed_seconds() const;

 private:
  struct Events;
  int device_index_;
  std::unique_ptr<Events> events_;
};

}  // namespace iteragpu::torch_backend
