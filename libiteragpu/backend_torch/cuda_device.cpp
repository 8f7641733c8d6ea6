#include "cuda_device.hpp"

#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>
#include <ATen/cuda/CUDAEvent.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>

namespace iteragpu::torch_backend {
namespace {

// device_count() and the device arguments are size_t/int in LibTorch 1.13 and an 8-bit
// DeviceIndex in 2.x: convert in one place.
c10::DeviceIndex as_device_index(int device_index) {
  return static_cast<c10::DeviceIndex>(device_index);
}

// Index 0 of each statistic array is the aggregate over the small and large pools
// (StatType::AGGREGATE, an enum that LibTorch 2.11 no longer has).
constexpr std::size_t kAggregateStat = 0;

std::uint64_t as_bytes(std::int64_t value) {
  return value > 0 ? static_cast<std::uint64_t>(value) : 0;
}

}  // namespace

std::vector<GpuDevice> cuda_devices() {
  std::vector<GpuDevice> devices;
  const int count = static_cast<int>(c10::cuda::device_count());
  for (int index = 0; index < count; ++index) {
    const cudaDeviceProp* properties = at::cuda::getDeviceProperties(as_device_index(index));
    GpuDevice device;
    device.index = index;
    device.name = properties->name;
    device.compute_capability_major = properties->major;
    device.compute_capability_minor = properties->minor;
    device.total_memory_bytes = static_cast<std::uint64_t>(properties->totalGlobalMem);
    device.multiprocessors = properties->multiProcessorCount;
    devices.push_back(std::move(device));
  }
  return devices;
}

void cuda_memory_info(int device_index, std::uint64_t& free_bytes, std::uint64_t& total_bytes) {
  c10::cuda::CUDAGuard guard(as_device_index(device_index));
  std::size_t free_memory = 0;
  std::size_t total_memory = 0;
  C10_CUDA_CHECK(cudaMemGetInfo(&free_memory, &total_memory));
  free_bytes = free_memory;
  total_bytes = total_memory;
}

BlasWorkspaceSizes cuda_blas_workspace_sizes(int device_index) {
  // Both read the current device's properties: make it the selected one.
  c10::cuda::CUDAGuard guard(as_device_index(device_index));
  BlasWorkspaceSizes sizes;
  sizes.cublas_bytes = at::cuda::getChosenWorkspaceSize();
  sizes.cublaslt_bytes = at::cuda::getCUDABlasLtWorkspaceSize();
  return sizes;
}

void cuda_select_device(int device_index) {
  c10::cuda::set_device(as_device_index(device_index));
  // An empty tensor runs LibTorch's lazy CUDA initialisation (which sets up the caching
  // allocator, whose counters cannot be read before) without allocating any bytes.
  (void)at::empty({0}, at::TensorOptions().device(at::kCUDA, as_device_index(device_index)));
}

AllocatorCounters cuda_allocator_counters(int device_index) {
  const auto stats = c10::cuda::CUDACachingAllocator::getDeviceStats(as_device_index(device_index));
  AllocatorCounters counters;
  counters.allocated_bytes = as_bytes(stats.allocated_bytes[kAggregateStat].current);
  counters.reserved_bytes = as_bytes(stats.reserved_bytes[kAggregateStat].current);
  counters.peak_allocated_bytes = as_bytes(stats.allocated_bytes[kAggregateStat].peak);
  counters.peak_reserved_bytes = as_bytes(stats.reserved_bytes[kAggregateStat].peak);
  return counters;
}

void cuda_reset_peaks(int device_index) {
  c10::cuda::CUDACachingAllocator::resetPeakStats(as_device_index(device_index));
}

struct CudaEventTimer::Events {
  // cudaEventDefault: timing enabled (CUDAEvent's own default disables it).
  at::cuda::CUDAEvent start{cudaEventDefault};
  at::cuda::CUDAEvent stop{cudaEventDefault};
};

CudaEventTimer::CudaEventTimer(int device_index)
    : device_index_(device_index), events_(std::make_unique<Events>()) {}

CudaEventTimer::~CudaEventTimer() = default;

void CudaEventTimer::start() {
  events_->start.record(c10::cuda::getCurrentCUDAStream(as_device_index(device_index_)));
}

void CudaEventTimer::stop() {
  events_->stop.record(c10::cuda::getCurrentCUDAStream(as_device_index(device_index_)));
}

double CudaEventTimer::elapsed_seconds() const {
  return static_cast<double>(events_->start.elapsed_time(events_->stop)) / 1000.0;
}

}  // namespace iteragpu::torch_backend
