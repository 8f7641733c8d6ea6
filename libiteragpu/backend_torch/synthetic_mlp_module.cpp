// The synthetic MLP in LibTorch: Linear(width→hidden) → GELU → Linear(hidden→width), built,
// seeded and run with the ATen ops PyTorch runs for it from Python. Its allocations are
// written down for the predictor in libiteragpu/src/workload/synthetic_model.cpp.

#include <ATen/ATen.h>
#include <torch/torch.h>

#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include "torch_workload.hpp"
#include "workload/synthetic_mlp_payload.hpp"

namespace iteragpu::torch_backend {
namespace {

class SyntheticMlpModule final : public ForwardWorkload {
 public:
  SyntheticMlpModule(const SyntheticMlpPayload& payload, std::uint64_t seed, c10::ScalarType scalar_type,
                     c10::Device device)
      : payload_(payload), seed_(seed), scalar_type_(scalar_type), device_(device) {}

  void load_model() override {
    torch::NoGradGuard no_grad;
    // As torch.nn.Sequential(Linear, GELU, Linear) seeded, then .to(dtype), then
    // .to(device) from Python: kaiming-uniform weights and uniform biases drawn on the CPU,
    // converted on the CPU, then each parameter copied to the device in registration order
    // (weight, bias of the first layer, then of the second): the device holds exactly the
    // four parameter tensors.
    torch::manual_seed(seed_);
    torch::nn::Linear expand(payload_.width, payload_.hidden);
    torch::nn::Linear project(payload_.hidden, payload_.width);
    for (torch::nn::Linear* layer : {&expand, &project}) (*layer)->to(scalar_type_);
    for (torch::nn::Linear* layer : {&expand, &project}) (*layer)->to(device_);
    expand_ = std::move(expand);
    project_ = std::move(project);
  }

  void create_inputs() override {
    at::Generator generator = seeded_device_generator(device_, seed_);
    input_ = torch::randn({payload_.batch, payload_.context, payload_.width}, generator,
                          torch::TensorOptions().dtype(scalar_type_).device(device_));
  }

  bool ready() const override { return expand_ && project_ && input_.defined(); }

  void forward() override {
    c10::InferenceMode inference;
    // The ATen ops torch.nn.Linear and torch.nn.GELU call from Python: at::linear (for a
    // contiguous 3-D input: a view to 2-D and at::addmm with the bias fused into the GEMM)
    // and at::gelu (exact, approximate="none"). torch::nn::Linear's C++ forward takes
    // another path for 3-D inputs (a GEMM, then a separate bias add), so it is not used.
    // One named tensor, reassigned, as nn.Sequential does: the pre-activation is freed
    // once GELU has read it, before the second layer allocates.
    torch::Tensor hidden = at::linear(input_, expand_->weight, expand_->bias);
    hidden = at::gelu(hidden);
    output_ = at::linear(hidden, project_->weight, project_->bias);
  }

  void release_output() override { output_ = torch::Tensor(); }

  void release() noexcept override {
    try {
      output_ = torch::Tensor();
      input_ = torch::Tensor();
      expand_ = nullptr;
      project_ = nullptr;
    } catch (...) {  // releasing tensors does not throw in practice; never unwind from here
    }
  }

  ~SyntheticMlpModule() override { release(); }

 private:
  SyntheticMlpPayload payload_;
  std::uint64_t seed_;
  c10::ScalarType scalar_type_;
  c10::Device device_;
  torch::nn::Linear expand_{nullptr};   // width → hidden
  torch::nn::Linear project_{nullptr};  // hidden → width
  torch::Tensor input_;
  torch::Tensor output_;
};

const TorchWorkloadRegistrar kRegistered(
    kSyntheticMlpKind, module_builder<SyntheticMlpModule, SyntheticMlpPayload, decode_synthetic_mlp_payload>);

}  // namespace
}  // namespace iteragpu::torch_backend
