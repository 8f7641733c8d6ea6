#pragma once
// What runs inside the phases, in LibTorch: a workload's tensors and forward on the device
// the backend opened. TorchBackend (torch_backend.cpp) owns the device, the allocator
// counters, the timers and the mapping of LibTorch's exceptions onto statuses; a workload
// only builds and runs its tensors, and throws what LibTorch throws. The synthetic MLP
// (synthetic_mlp_module.cpp) is the first one, the counterpart of the core's
// libiteragpu/src/workload/synthetic_model.cpp.

#include <torch/torch.h>

#include <cstdint>
#include <memory>
#include <mutex>

#include "iteragpu/backend.hpp"

namespace iteragpu::torch_backend {

class TorchWorkload {
 public:
  virtual ~TorchWorkload() = default;
  // Builds and seeds the model on the CPU, then moves it to the device.
  virtual void load_model() = 0;
  // Creates the inputs on the device.
  virtual void create_inputs() = 0;
  // True once the model and the inputs exist.
  virtual bool ready() const = 0;
  // One forward under inference mode; its output stays alive until release_output().
  virtual void forward() = 0;
  virtual void release_output() = 0;
  // Frees every tensor it holds (they go back to the caching allocator). Never throws.
  virtual void release() noexcept = 0;
  // What a checkpoint's run produced (tokens, logits, attention backend); false when the
  // workload has nothing to report (the synthetic MLP).
  virtual bool report(RunReport& report) const {
    (void)report;
    return false;
  }
};

// The decoder workload (decoder_module.cpp): a checkpoint run as transformers runs it.
std::unique_ptr<TorchWorkload> make_decoder_module(const ModelSpec& spec, c10::ScalarType scalar_type,
                                                   c10::Device device);

// The workload `spec` describes, on `device`, in `scalar_type`.
std::unique_ptr<TorchWorkload> make_torch_workload(const ModelSpec& spec, c10::ScalarType scalar_type,
                                                   c10::Device device);

// The device's default generator reseeded with `seed`: the same seed gives the same inputs on
// every run.
inline at::Generator seeded_device_generator(c10::Device device, std::uint64_t seed) {
  at::Generator generator = at::globalContext().defaultGenerator(device);
  std::lock_guard<std::mutex> lock(generator.mutex());
  generator.set_current_seed(seed);
  return generator;
}

}  // namespace iteragpu::torch_backend
