// The decoder workload in LibTorch: a dense decoder-only checkpoint (decoder_model.hpp) run as
// transformers 5.17 runs model(input_ids, past_key_values=DynamicCache(), use_cache=True,
// logits_to_keep=1) under torch.inference_mode() with attn_implementation="sdpa", then the
// greedy token (logits[:, -1, :].argmax(-1, keepdim=True)). The counterpart of the core's
// libiteragpu/src/workload/decoder_workload.cpp.

#include <ATen/ATen.h>
#include <torch/torch.h>
#include <torch/version.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "decoder_model.hpp"
#include "torch_workload.hpp"
#include "workload/decoder_payload.hpp"

#if ITERAGPU_BACKEND_HAS_CUDA
#include "cuda_device.hpp"
#endif

namespace iteragpu::torch_backend {
namespace {

#if ITERAGPU_DECODER_SUPPORTED

using at::Tensor;

class DecoderModule final : public ForwardWorkload {
 public:
  DecoderModule(DecoderPayload payload, std::uint64_t seed, c10::ScalarType scalar_type, c10::Device device)
      : payload_(std::move(payload)), seed_(seed), model_(payload_.architecture, payload_.tensors, scalar_type, device) {}

  void load_model() override { model_.load_weights(); }

  void create_inputs() override {
    at::Generator generator = seeded_device_generator(model_.device(), seed_);
    input_ids_ = at::randint(0, payload_.architecture.vocab_size, {payload_.batch, payload_.context}, generator,
                             at::TensorOptions().dtype(at::kLong).device(model_.device()));
  }

  bool ready() const override { return model_.loaded() && input_ids_.defined(); }

  // The next step of the sequence: the prefill when the cache is empty, else one decode step.
  void forward() override {
    c10::InferenceMode inference;
    const bool prefill = !next_token_.defined();
    Tensor hidden = model_.hidden_states(prefill ? input_ids_ : next_token_);
    Tensor logits = model_.logits(hidden, LogitsKept::kLast);
    hidden = Tensor();  // LlamaForCausalLM.forward returns
    Tensor next = logits.select(1, -1).argmax(-1, /*keepdim=*/true);
    next_token_ = next;  // the previous step's token is freed here, after the new one exists
    next = Tensor();
    if (first_sequence_) {
      tokens_.push_back(next_token_.select(0, 0).item<int64_t>());
      ++steps_;
      if (steps_ == payload_.new_tokens + 1) {  // the cold sequence's last decode step
        const Tensor row = logits.select(0, 0).select(0, -1).contiguous().to(at::kCPU);
        last_logits_.assign(static_cast<const char*>(row.data_ptr()), row.nbytes());
        first_sequence_ = false;
      }
    }
    logits = Tensor();  // `del out`
  }

  // A fresh cache for the next sequence (and its generated tokens go).
  void release_output() override {
    next_token_ = Tensor();
    model_.clear_cache();
    if (steps_ > 0) first_sequence_ = false;
  }

  bool report(std::string& text) const override {
    DecoderRunReport report;
    report.attention_backend = "prefill " + model_.prefill_backend() + ", decode " + model_.decode_backend();
    report.first_sequence_tokens = tokens_;
    report.last_logits_bytes = last_logits_;
#if ITERAGPU_BACKEND_HAS_CUDA
    std::uint64_t free_bytes = 0, total_bytes = 0;
    cuda_memory_info(model_.device().index(), free_bytes, total_bytes);
    report.device_used_bytes = total_bytes - free_bytes;
#endif
    text = encode_decoder_run_report(report);
    return true;
  }

  void release() noexcept override {
    try {
      release_output();
      input_ids_ = Tensor();
      model_.release();
    } catch (...) {  // releasing tensors does not throw in practice; never unwind from here
    }
  }

  ~DecoderModule() override { release(); }

 private:
  DecoderPayload payload_;
  std::uint64_t seed_;
  DecoderModel model_;  // reads payload_
  Tensor input_ids_, next_token_;
  bool first_sequence_ = true;
  int steps_ = 0;
  std::vector<int64_t> tokens_;
  std::string last_logits_;
};

#else
using DecoderModule = CheckpointModuleUnsupported<DecoderPayload>;
#endif  // ITERAGPU_DECODER_SUPPORTED

const TorchWorkloadRegistrar kRegistered(kDecoderKind,
                                          module_builder<DecoderModule, DecoderPayload, decode_decoder_payload>);

}  // namespace
}  // namespace iteragpu::torch_backend
