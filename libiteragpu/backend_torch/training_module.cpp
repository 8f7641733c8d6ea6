// The training step in LibTorch: fine-tuning steps of a dense decoder-only checkpoint
// (decoder_model.hpp) as a user's own PyTorch loop runs them with transformers 5.17, PEFT and
// torch.optim.AdamW (tests/conformance/training_reference.py is that loop):
//   model = AutoModelForCausalLM.from_pretrained(DIR, dtype, device_map, attn_implementation="sdpa")
//   model = peft.get_peft_model(model, LoraConfig(r, lora_alpha, target_modules, lora_dropout=0.0))
//   model.train(); [model.gradient_checkpointing_enable()]
//   opt = torch.optim.AdamW(trainable parameters)                       # PyTorch's defaults
//   per step: out = model(input_ids=ids, labels=ids); out.loss.backward(); del out
//             opt.step(); opt.zero_grad(set_to_none=True)
// The forward is the decoder's with autograd recording (transformers keeps use_cache=True in
// training, so each forward fills a DynamicCache the output holds until it is dropped; with
// gradient checkpointing each layer runs under PyTorch's non-reentrant checkpoint and there is
// no cache: decoder_model.hpp and activation_checkpoint.hpp), all
// positions' logits and transformers' ForCausalLMLoss; the backward is LibTorch's autograd
// engine, the one Python's loss.backward() runs; AdamW is torch.optim's _multi_tensor_adam
// (foreach, the default on CUDA) op by op. Every tensor lives as long as its Python name.

#include <ATen/ATen.h>
#include <torch/torch.h>
#include <torch/version.h>

#include <cmath>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "decoder_model.hpp"
#include "torch_workload.hpp"
#include "workload/training_payload.hpp"
#include "workload/workload_steps.hpp"

#if ITERAGPU_BACKEND_HAS_CUDA
#include "cuda_device.hpp"
#endif

namespace iteragpu::torch_backend {
namespace {

#if ITERAGPU_DECODER_SUPPORTED

using at::Tensor;

// torch.optim.AdamW's defaults.
constexpr double kLearningRate = 1e-3, kBeta1 = 0.9, kBeta2 = 0.999, kEpsilon = 1e-8, kWeightDecay = 1e-2;
// transformers' ignore_index for the label shifted past the end.
constexpr int64_t kIgnoreIndex = -100;

// nn.init.kaiming_uniform_(tensor, a=math.sqrt(5)) on a CPU float32 tensor: the bound computed
// as torch.nn.init computes it, the values drawn from the CPU generator.
void kaiming_uniform(Tensor& weight) {
  const double negative_slope = std::sqrt(5.0);
  const double gain = std::sqrt(2.0 / (1 + std::pow(negative_slope, 2)));
  const double std_dev = gain / std::sqrt(static_cast<double>(weight.size(1)));  // fan_in
  const double bound = std::sqrt(3.0) * std_dev;
  weight.uniform_(-bound, bound);
}

std::vector<std::string> split_targets(const std::string& text) {
  std::vector<std::string> targets;
  std::stringstream stream(text);
  std::string target;
  while (std::getline(stream, target, ','))
    if (!target.empty()) targets.push_back(target);
  return targets;
}

// AdamW's per-parameter state (Adam._init_group): the step count (a CPU float32 tensor in
// PyTorch, read with .item()), exp_avg and exp_avg_sq.
struct AdamState {
  double step = 0;
  Tensor exp_avg, exp_avg_sq;
};

class TrainingModule final : public TorchWorkload {
 public:
  TrainingModule(TrainingPayload payload, std::uint64_t seed, c10::ScalarType scalar_type, c10::Device device)
      : payload_(std::move(payload)), seed_(seed), model_(payload_.architecture, payload_.tensors, scalar_type, device) {}

  bool run_step(const std::string& step) override {
    if (step == kLoadModelStep) {
      model_.load_weights();
      if (payload_.method == "full") trainable_ = model_.base_parameters();
      if (payload_.gradient_checkpointing) model_.enable_gradient_checkpointing();
    } else if (step == kAddAdaptersStep) {
      add_adapters();
    } else if (step == kCreateInputsStep) {
      create_inputs();
    } else if (step == kForwardStep) {
      forward();
    } else if (step == kBackwardStep) {
      backward();
    } else if (step == kOptimizerStep) {
      optimizer_step();
    } else {
      return false;
    }
    return true;
  }

  void release_output() override {}

  bool report(std::string& text) const override {
    TrainingRunReport report;
    report.attention_backend = model_.prefill_backend();
    report.losses_float32.assign(reinterpret_cast<const char*>(losses_.data()), losses_.size() * sizeof(float));
    for (const Tensor& parameter : model_.base_parameters()) report.parameters += parameter.numel();
    for (const Tensor& adapter : adapters_) report.parameters += adapter.numel();
    for (const Tensor& parameter : trainable_) report.trainable_parameters += parameter.numel();
#if ITERAGPU_BACKEND_HAS_CUDA
    std::uint64_t free_bytes = 0, total_bytes = 0;
    cuda_memory_info(model_.device().index(), free_bytes, total_bytes);
    report.device_used_bytes = total_bytes - free_bytes;
#endif
    text = encode_training_run_report(report);
    return true;
  }

  void release() noexcept override {
    try {
      loss_ = logits_ = input_ids_ = Tensor();
      states_.clear();
      trainable_.clear();
      adapters_.clear();
      model_.release();
    } catch (...) {  // releasing tensors does not throw in practice; never unwind from here
    }
  }

  ~TrainingModule() override { release(); }

 private:
  // peft.get_peft_model(model, LoraConfig(r, lora_alpha, target_modules, lora_dropout=0.0)):
  // for each targeted projection in module order, lora.Linear's update_layer builds
  // nn.Linear(in, r) and nn.Linear(r, out) on the CPU in float32 (each initialised by its
  // reset_parameters: kaiming-uniform), re-initialises A kaiming-uniform and B to zeros, and
  // moves both to the base layer's device and dtype; then PeftModel casts every adapter
  // weight of a half-precision dtype to float32 (autocast_adapter_dtype=True), the new
  // tensor made before the old one is freed; only the adapters stay trainable.
  void add_adapters() {
    if (!model_.loaded()) throw std::logic_error("the model must be loaded first");
    torch::NoGradGuard no_grad;
    const std::vector<std::string> targets = split_targets(payload_.lora_targets);
    const auto targeted = [&](const char* name) {
      for (const std::string& target : targets)
        if (target == name) return true;
      return false;
    };
    std::vector<Projection*> adapted;
    for (DecoderLayer& layer : model_.layers()) {
      const std::pair<const char*, Projection*> projections[] = {
          {"q_proj", &layer.q},       {"k_proj", &layer.k},   {"v_proj", &layer.v},     {"o_proj", &layer.o},
          {"gate_proj", &layer.gate}, {"up_proj", &layer.up}, {"down_proj", &layer.down}};
      for (const auto& [name, projection] : projections)
        if (targeted(name)) adapted.push_back(projection);
    }
    if (adapted.empty()) throw std::runtime_error("no projection of the model matches the LoRA targets");
    const int64_t rank = payload_.lora_rank;
    for (Projection* projection : adapted) {
      const int64_t in = projection->weight.size(1), out = projection->weight.size(0);
      Tensor a = at::empty({rank, in}, at::TensorOptions().dtype(at::kFloat));
      kaiming_uniform(a);
      Tensor b = at::empty({out, rank}, at::TensorOptions().dtype(at::kFloat));
      kaiming_uniform(b);
      kaiming_uniform(a);
      b.zero_();
      projection->lora_a = a.to(model_.device(), model_.scalar_type());
      projection->lora_b = b.to(model_.device(), model_.scalar_type());
      projection->lora_scaling = payload_.lora_alpha / static_cast<double>(rank);
    }
    const bool half = model_.scalar_type() == at::kBFloat16 || model_.scalar_type() == at::kHalf;
    for (Projection* projection : adapted) {
      if (half) {
        projection->lora_a = projection->lora_a.to(at::kFloat);
        projection->lora_b = projection->lora_b.to(at::kFloat);
      }
      projection->lora_a.requires_grad_(true);
      projection->lora_b.requires_grad_(true);
      adapters_.push_back(projection->lora_a);
      adapters_.push_back(projection->lora_b);
    }
    for (Tensor& parameter : model_.base_parameters()) parameter.requires_grad_(false);
    trainable_ = adapters_;
  }

  // torch.cuda.manual_seed(seed); torch.randint(0, vocab, (batch, context), device=...).
  void create_inputs() {
    at::Generator generator = seeded_device_generator(model_.device(), seed_);
    input_ids_ = at::randint(0, payload_.architecture.vocab_size, {payload_.batch, payload_.context}, generator,
                             at::TensorOptions().dtype(at::kLong).device(model_.device()));
  }

  // out = model(input_ids=ids, labels=ids): the output keeps the loss, the logits and the cache.
  void forward() {
    if (!model_.loaded() || !input_ids_.defined()) throw std::logic_error("the model and the inputs must exist first");
    if (trainable_.empty()) throw std::logic_error("nothing to train: the adapters must be added first");
    Tensor hidden = model_.hidden_states(input_ids_);
    logits_ = model_.logits(hidden, LogitsKept::kAll);
    loss_ = causal_lm_loss(logits_);
    hidden = Tensor();  // LlamaForCausalLM.forward returns: `outputs` lets the last hidden states go
    losses_.push_back(loss_.item<float>());
  }

  // transformers' ForCausalLMLoss: logits.float(); labels padded with ignore_index and shifted
  // by one; cross_entropy(logits.view(-1, vocab), labels.view(-1), ignore_index, "mean").
  Tensor causal_lm_loss(const Tensor& logits) const {
    Tensor upcast = logits.to(at::kFloat);
    Tensor labels = at::constant_pad_nd(input_ids_, {0, 1}, kIgnoreIndex);
    Tensor shift_labels = labels.slice(-1, 1).contiguous();
    const Tensor flat_logits = upcast.view({-1, payload_.architecture.vocab_size});
    const Tensor flat_labels = shift_labels.view(-1);
    return at::cross_entropy_loss(flat_logits, flat_labels, {}, at::Reduction::Mean, kIgnoreIndex, 0.0);
  }

  // out.loss.backward(); del out (CausalLMOutputWithPast frees the loss, the logits, then the cache).
  void backward() {
    if (!loss_.defined()) throw std::logic_error("a forward must come first");
    loss_.backward();
    loss_ = Tensor();
    logits_ = Tensor();
    model_.clear_cache();
  }

  // opt.step() (Adam._init_group, then _multi_tensor_adam with decoupled weight decay,
  // under no_grad); opt.zero_grad(set_to_none=True).
  void optimizer_step() {
    torch::NoGradGuard no_grad;
    if (states_.empty()) states_.resize(trainable_.size());
    {
      std::vector<Tensor> params, grads, exp_avgs, exp_avg_sqs;
      std::vector<AdamState*> states;
      for (std::size_t index = 0; index < trainable_.size(); ++index) {
        const Tensor& parameter = trainable_[index];
        if (!parameter.grad().defined()) continue;
        params.push_back(parameter);
        grads.push_back(parameter.grad());
        AdamState& state = states_[index];
        if (!state.exp_avg.defined()) {
          state.exp_avg = at::zeros_like(parameter, at::MemoryFormat::Preserve);
          state.exp_avg_sq = at::zeros_like(parameter, at::MemoryFormat::Preserve);
        }
        exp_avgs.push_back(state.exp_avg);
        exp_avg_sqs.push_back(state.exp_avg_sq);
        states.push_back(&state);
      }
      if (!params.empty()) adam_update(params, grads, exp_avgs, exp_avg_sqs, states);
    }
    for (Tensor& parameter : trainable_)
      if (parameter.grad().defined()) parameter.mutable_grad().reset();
  }

  // _multi_tensor_adam, capturable=False, amsgrad=False, maximize=False, one device and dtype.
  static void adam_update(std::vector<Tensor>& params, std::vector<Tensor>& grads, std::vector<Tensor>& exp_avgs,
                          std::vector<Tensor>& exp_avg_sqs, const std::vector<AdamState*>& states) {
    for (AdamState* state : states) state->step += 1;
    at::_foreach_mul_(params, 1 - kLearningRate * kWeightDecay);
    at::_foreach_lerp_(exp_avgs, grads, 1 - kBeta1);
    at::_foreach_mul_(exp_avg_sqs, kBeta2);
    at::_foreach_addcmul_(exp_avg_sqs, grads, grads, 1 - kBeta2);
    std::vector<c10::Scalar> step_size, bias_correction2_sqrt;
    for (const AdamState* state : states) {
      const double bias_correction1 = 1 - std::pow(kBeta1, state->step);
      const double bias_correction2 = 1 - std::pow(kBeta2, state->step);
      step_size.emplace_back((kLearningRate / bias_correction1) * -1);
      bias_correction2_sqrt.emplace_back(std::pow(bias_correction2, 0.5));
    }
    std::vector<Tensor> exp_avg_sq_sqrt = at::_foreach_sqrt(exp_avg_sqs);
    at::_foreach_div_(exp_avg_sq_sqrt, bias_correction2_sqrt);
    at::_foreach_add_(exp_avg_sq_sqrt, kEpsilon);
    at::_foreach_addcdiv_(params, exp_avgs, exp_avg_sq_sqrt, step_size);
    while (!exp_avg_sq_sqrt.empty()) exp_avg_sq_sqrt.pop_back();  // as Python frees a list: the last first
  }

  TrainingPayload payload_;
  std::uint64_t seed_;
  DecoderModel model_;  // reads payload_
  std::vector<Tensor> adapters_;   // lora_A, lora_B of each adapted projection, in module order
  std::vector<Tensor> trainable_;  // what AdamW updates, in model.parameters() order
  std::vector<AdamState> states_;  // trainable_'s
  Tensor input_ids_, loss_, logits_;
  std::vector<float> losses_;
};

#else
using TrainingModule = CheckpointModuleUnsupported<TrainingPayload>;
#endif  // ITERAGPU_DECODER_SUPPORTED

const TorchWorkloadRegistrar kRegistered(kTrainingKind,
                                          module_builder<TrainingModule, TrainingPayload, decode_training_payload>);

}  // namespace
}  // namespace iteragpu::torch_backend
