// torch.utils.checkpoint's non-reentrant checkpoint (see activation_checkpoint.hpp), after
// _checkpoint_without_reentrant_generator, _checkpoint_hook and _recomputation_hook of
// torch/utils/checkpoint.py.

#include "activation_checkpoint.hpp"

#include <torch/csrc/autograd/engine.h>
#include <torch/csrc/autograd/saved_variable_hooks.h>
#include <torch/torch.h>

#include <cstddef>
#include <exception>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace iteragpu::torch_backend {
namespace {

using at::Tensor;
using torch::autograd::SavedVariableHooks;

// What one packed tensor becomes: empty from the forward, the recomputed tensor from the
// recomputation until it is unpacked (Python's _Holder and its _Handle in frame.recomputed).
struct Holder {
  Tensor recomputed;
};

// The metadata the default determinism check compares: shape, dtype, device.
struct PackedMetadata {
  std::vector<int64_t> sizes;
  c10::ScalarType dtype;
  c10::Device device;
  explicit PackedMetadata(const Tensor& tensor)
      : sizes(tensor.sizes().vec()), dtype(tensor.scalar_type()), device(tensor.device()) {}
  bool operator==(const PackedMetadata& other) const {
    return sizes == other.sizes && dtype == other.dtype && device == other.device;
  }
};

// Raised by the recomputation's last pack (Python's _StopRecomputationError): early stop.
struct StopRecomputation : std::exception {
  const char* what() const noexcept override { return "checkpoint recomputation stopped early"; }
};

// One checkpointed call (Python's _CheckpointFrame).
class CheckpointFrame : public std::enable_shared_from_this<CheckpointFrame> {
 public:
  CheckpointFrame(std::function<Tensor(const Tensor&)> function, Tensor input)
      : function_(std::move(function)), input_(std::move(input)) {}

  Tensor run_forward();
  // The forward's pack: a new holder, weakly remembered by position.
  std::shared_ptr<Holder> pack(const Tensor& tensor) {
    auto holder = std::make_shared<Holder>();
    holders_.push_back(holder);
    metadata_.emplace_back(tensor);
    return holder;
  }
  // The recomputation's pack: the tensor goes to the holder at the same position, if it lives.
  void keep_recomputed(const Tensor& tensor) {
    const std::size_t index = recomputed_count_++;
    if (index >= holders_.size())
      throw std::runtime_error("torch.utils.checkpoint: the recomputation saved more tensors than the forward");
    if (!(PackedMetadata(tensor) == metadata_[index]))
      throw std::runtime_error("torch.utils.checkpoint: a recomputed tensor's shape, dtype or device differs from "
                               "the forward's (tensor " + std::to_string(index) + ")");
    if (std::shared_ptr<Holder> holder = holders_[index].lock()) holder->recomputed = tensor;
    if (recomputed_count_ == holders_.size()) throw StopRecomputation();
  }
  // The first unpack recomputes; each unpack hands its tensor over.
  Tensor unpack(Holder& holder) {
    if (!recomputed_) recompute();
    if (!holder.recomputed.defined())
      throw std::runtime_error("torch.utils.checkpoint: a saved tensor was unpacked twice (backward through the "
                               "graph a second time is not supported)");
    return std::move(holder.recomputed);
  }

 private:
  void recompute();

  std::function<Tensor(const Tensor&)> function_;  // with what it captured
  Tensor input_;                                    // _NoopSaveInputs' saved tensor
  std::vector<std::weak_ptr<Holder>> holders_;      // frame.weak_holders
  std::vector<PackedMetadata> metadata_;            // frame.x_metadatas
  std::size_t recomputed_count_ = 0;
  bool recomputed_ = false;
};

// Which checkpoint this thread's saved tensors belong to: the one whose forward runs (main
// thread), or the one being recomputed (the autograd engine's device thread).
thread_local std::shared_ptr<CheckpointFrame> forward_frame;
thread_local std::shared_ptr<CheckpointFrame> recomputing_frame;

// A saved tensor of the forward: only a holder, which keeps the checkpoint alive.
class PackedHooks final : public SavedVariableHooks {
 public:
  explicit PackedHooks(std::shared_ptr<CheckpointFrame> frame) : frame_(std::move(frame)) {}
  void call_pack_hook(const Tensor& tensor) override { holder_ = frame_->pack(tensor); }
  Tensor call_unpack_hook() override { return frame_->unpack(*holder_); }

 private:
  std::shared_ptr<CheckpointFrame> frame_;
  std::shared_ptr<Holder> holder_;
};

// A saved tensor of the recomputation: kept in the forward's holder, and (detached) by the
// recomputed graph until that graph goes.
class RecomputedHooks final : public SavedVariableHooks {
 public:
  explicit RecomputedHooks(std::shared_ptr<CheckpointFrame> frame) : frame_(std::move(frame)) {}
  void call_pack_hook(const Tensor& tensor) override {
    const Tensor kept = tensor.requires_grad() ? tensor.detach() : tensor;
    kept_ = kept.detach();
    frame_->keep_recomputed(kept);
  }
  Tensor call_unpack_hook() override { return kept_; }

 private:
  std::shared_ptr<CheckpointFrame> frame_;
  Tensor kept_;
};

class CheckpointingEngine final : public torch::autograd::Engine {
 public:
  // Never destroyed: once installed it stays the default engine, which LibTorch's own static
  // destructors may still ask for at exit.
  static torch::autograd::Engine& get() {
    static CheckpointingEngine* const engine = new CheckpointingEngine();
    return *engine;
  }
  std::unique_ptr<SavedVariableHooks> get_default_saved_variable_hooks() override {
    if (recomputing_frame) return std::make_unique<RecomputedHooks>(recomputing_frame);
    if (forward_frame) return std::make_unique<PackedHooks>(forward_frame);
    return nullptr;
  }

 private:
  CheckpointingEngine() = default;
};

// Sets a thread's frame for a scope, restoring the previous one however the scope ends.
class FrameScope {
 public:
  FrameScope(std::shared_ptr<CheckpointFrame>& slot, std::shared_ptr<CheckpointFrame> frame)
      : slot_(slot), previous_(std::exchange(slot, std::move(frame))) {}
  ~FrameScope() { slot_ = std::move(previous_); }
  FrameScope(const FrameScope&) = delete;
  FrameScope& operator=(const FrameScope&) = delete;

 private:
  std::shared_ptr<CheckpointFrame>& slot_;
  std::shared_ptr<CheckpointFrame> previous_;
};

Tensor CheckpointFrame::run_forward() {
  FrameScope scope(forward_frame, shared_from_this());
  return function_(input_);
}

// The recomputation runs with grad on (the engine runs the backward with it off) and with no
// RNG state restored: the decoder layer draws no random numbers (attention dropout is 0).
void CheckpointFrame::recompute() {
  {
    at::AutoGradMode grad_on(true);
    FrameScope scope(recomputing_frame, shared_from_this());
    try {
      Tensor output = function_(input_);
    } catch (const StopRecomputation&) {
    }
  }
  recomputed_ = true;
  if (recomputed_count_ != holders_.size())
    throw std::runtime_error("torch.utils.checkpoint: the recomputation saved fewer tensors than the forward (" +
                             std::to_string(recomputed_count_) + " of " + std::to_string(holders_.size()) + ")");
}

}  // namespace

void install_checkpointing_engine() {
  static std::once_flag installed;
  std::call_once(installed, [] { torch::autograd::set_default_engine_stub(&CheckpointingEngine::get); });
}

Tensor checkpoint(std::function<Tensor(const Tensor&)> function, const Tensor& input) {
  if (!at::GradMode::is_enabled()) return function(input);
  auto frame = std::make_shared<CheckpointFrame>(std::move(function), input);
  return frame->run_forward();
}

}  // namespace iteragpu::torch_backend
