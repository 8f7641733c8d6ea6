#pragma once
// What runs inside the phases, in LibTorch: a workload's tensors and steps on the device the
// backend opened. TorchBackend (torch_backend.cpp) owns the device, the allocator counters,
// the timers and the mapping of LibTorch's exceptions onto statuses; a workload module reads
// its payload, runs its steps and throws what LibTorch throws. Each module file registers its
// workload by kind (a TorchWorkloadRegistrar at its end), so the backend names none of them:
// the synthetic MLP (synthetic_mlp_module.cpp, the counterpart of the core's
// libiteragpu/src/workload/synthetic_model.cpp) and the decoder (decoder_module.cpp).

#include <torch/torch.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <utility>

#include "iteragpu/backend.hpp"
#include "workload/workload_steps.hpp"

namespace iteragpu::torch_backend {

class TorchWorkload {
 public:
  virtual ~TorchWorkload() = default;
  // Runs one step of the workload's phase plan; false when the workload has no such step.
  virtual bool run_step(const std::string& step) = 0;
  // Frees what the last step left alive (a forward's output).
  virtual void release_output() = 0;
  // Frees every tensor it holds (they go back to the caching allocator). Never throws.
  virtual void release() noexcept = 0;
  // What the run produced, as the workload's report text (its codec); false when the workload
  // reports nothing (the synthetic MLP).
  virtual bool report(std::string& report) const {
    (void)report;
    return false;
  }
};

// A workload of today's steps (workload/workload_steps.hpp): the model built and moved to the
// device, the inputs created, then forwards.
class ForwardWorkload : public TorchWorkload {
 public:
  bool run_step(const std::string& step) final {
    if (step == kLoadModelStep) {
      load_model();
    } else if (step == kCreateInputsStep) {
      create_inputs();
    } else if (step == kForwardStep) {
      if (!ready()) throw std::logic_error("the model and the inputs must exist first");
      forward();
    } else {
      return false;
    }
    return true;
  }

 protected:
  // Builds and seeds the model on the CPU, then moves it to the device.
  virtual void load_model() = 0;
  // Creates the inputs on the device.
  virtual void create_inputs() = 0;
  // True once the model and the inputs exist.
  virtual bool ready() const = 0;
  // One forward under inference mode; its output stays alive until release_output().
  virtual void forward() = 0;
};

// Builds a workload's module on the device, once open() has checked the device and the dtype.
using TorchWorkloadBuilder = std::function<std::unique_ptr<TorchWorkload>(c10::ScalarType, c10::Device)>;
// Reads a spec's payload with the workload's codec: the builder, or, for a malformed payload,
// an empty one and the reason in one line in `malformed`.
using TorchWorkloadDecoder = TorchWorkloadBuilder (*)(const WorkloadSpec& spec, std::string& malformed);

// A module's TorchWorkloadDecoder: reads the spec's payload with the workload's codec
// (`decode`) and gives the builder of Module(payload, seed, scalar type, device).
template <typename Module, typename Payload, std::string (*decode)(const std::string&, Payload&)>
TorchWorkloadBuilder module_builder(const WorkloadSpec& spec, std::string& malformed) {
  Payload payload;
  malformed = decode(spec.payload, payload);
  if (!malformed.empty()) return {};
  return [payload = std::move(payload), seed = spec.seed](c10::ScalarType scalar_type,
                                                          c10::Device device) -> std::unique_ptr<TorchWorkload> {
    return std::make_unique<Module>(payload, seed, scalar_type, device);
  };
}

// The plugin's workloads by kind (WorkloadSpec::kind), sorted by name.
inline std::map<std::string, TorchWorkloadDecoder>& registered_workloads() {
  static std::map<std::string, TorchWorkloadDecoder> workloads;  // filled as the plugin is loaded
  return workloads;
}

// At namespace scope in a module file: registers its workload when the plugin is loaded.
struct TorchWorkloadRegistrar {
  TorchWorkloadRegistrar(const char* kind, TorchWorkloadDecoder decoder) { registered_workloads()[kind] = decoder; }
};

// The device's default generator reseeded with `seed`: the same seed gives the same inputs on
// every run.
inline at::Generator seeded_device_generator(c10::Device device, std::uint64_t seed) {
  at::Generator generator = at::globalContext().defaultGenerator(device);
  std::lock_guard<std::mutex> lock(generator.mutex());
  generator.set_current_seed(seed);
  return generator;
}

}  // namespace iteragpu::torch_backend
