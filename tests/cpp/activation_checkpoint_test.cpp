// The plugin's activation checkpoint (libiteragpu/backend_torch/activation_checkpoint.cpp) on
// LibTorch's CPU: what a fine-tuning step with --gradient-checkpointing relies on besides the
// allocator (which only the GPU conformance can check). Each checkpointed layer gives the
// gradients it gives without the checkpoint, keeps none of its intermediates after its
// forward (only its input), recomputes each layer once in the backward and stops at the last
// saved tensor (early stop: the layer's last op is not run again).
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <utility>
#include <vector>

#include "activation_checkpoint.hpp"

namespace iteragpu::testing {
namespace {

using at::Tensor;
using torch_backend::checkpoint;

// A residual layer: x + w2 · silu(w1 · x)², counting its runs and its last op's runs.
struct Layer {
  Tensor w1, w2;
  int runs = 0, last_op_runs = 0;
  std::vector<c10::weak_intrusive_ptr<c10::StorageImpl>> intermediates;  // of the latest run
  Tensor operator()(const Tensor& x) {
    ++runs;
    intermediates.clear();
    Tensor hidden = at::silu(at::linear(x, w1));
    intermediates.emplace_back(hidden.storage().getWeakStorageImpl());
    Tensor squared = hidden * hidden;
    intermediates.emplace_back(squared.storage().getWeakStorageImpl());
    Tensor out = at::linear(squared, w2);
    ++last_op_runs;  // the residual add saves nothing: never reached by a recomputation
    return x + out;
  }
};

std::pair<Tensor, Tensor> gradients(std::vector<Layer>& layers, const Tensor& input, bool checkpointed) {
  for (Layer& layer : layers) {
    layer.w1.mutable_grad().reset();
    layer.w2.mutable_grad().reset();
  }
  Tensor hidden = input;
  for (Layer& layer : layers)
    hidden = checkpointed ? checkpoint([&layer](const Tensor& x) { return layer(x); }, hidden) : layer(hidden);
  hidden.pow(2).sum().backward();
  return {layers[0].w1.grad().clone(), layers.back().w2.grad().clone()};
}

class ActivationCheckpoint : public ::testing::Test {
 protected:
  void SetUp() override {
    torch::manual_seed(7);
    for (int index = 0; index < 3; ++index)
      layers_.push_back({torch::randn({32, 16}, torch::requires_grad()), torch::randn({16, 32}, torch::requires_grad())});
    torch_backend::install_checkpointing_engine();
  }
  std::vector<Layer> layers_;
  Tensor input_ = torch::randn({4, 16});  // no grad: as a LoRA step's embeddings
};

TEST_F(ActivationCheckpoint, GradientsAreThoseWithoutIt) {
  const auto plain = gradients(layers_, input_, false);
  const auto checkpointed = gradients(layers_, input_, true);
  EXPECT_TRUE(at::equal(plain.first, checkpointed.first));
  EXPECT_TRUE(at::equal(plain.second, checkpointed.second));
}

TEST_F(ActivationCheckpoint, EachLayerRunsAgainOnceUpToItsLastSavedTensor) {
  gradients(layers_, input_, true);
  for (const Layer& layer : layers_) {
    EXPECT_EQ(layer.runs, 2);          // the forward and one recomputation
    EXPECT_EQ(layer.last_op_runs, 1);  // early stop: the residual add only in the forward
  }
}

TEST_F(ActivationCheckpoint, TheForwardKeepsNoIntermediate) {
  Layer& layer = layers_[0];
  Tensor output = checkpoint([&layer](const Tensor& x) { return layer(x); }, input_);
  ASSERT_TRUE(output.requires_grad());
  for (const auto& intermediate : layer.intermediates) EXPECT_TRUE(intermediate.expired());
  // Without the checkpoint the graph keeps them for the backward.
  Tensor plain = layer(input_);
  EXPECT_FALSE(layer.intermediates.front().expired());
}

TEST_F(ActivationCheckpoint, WithGradOffItIsTheFunctionItself) {
  torch::NoGradGuard no_grad;
  Layer& layer = layers_[0];
  Tensor output = checkpoint([&layer](const Tensor& x) { return layer(x); }, input_);
  EXPECT_FALSE(output.requires_grad());
  EXPECT_EQ(layer.runs, 1);
}

}  // namespace
}  // namespace iteragpu::testing
