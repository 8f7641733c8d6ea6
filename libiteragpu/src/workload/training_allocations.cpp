// The training module's ops as allocations (see training_allocations.hpp). Each function here
// mirrors the function of training_module.cpp or decoder_model.cpp with the same name; a tensor
// is freed where the module lets its last reference go, as LibTorch frees it.
//
// The forward records, for each op whose input requires a gradient, an autograd node that
// keeps the tensors its backward needs (derivatives.yaml saves only those of the inputs that
// require one). The backward runs the nodes as the autograd engine does: in reverse order of
// creation (its ready queue takes the highest sequence number, and every node's consumers were
// created after it); for each, the input gradients are computed (the second input's before the
// first's, as the generated code does), broadcast ones summed to their input's shape and
// mixed-dtype ones cast (validate_outputs), then the incoming gradient and the saved tensors are
// let go, then each input gradient joins what is already buffered for its producer
// (InputBuffer::accumulate: in place into a tensor that nothing else holds, else a new sum).
// The engine runs on its own thread, whose cuBLAS handle has its own workspace.
//
// Checked against the H100 (torch 2.11, cuDNN attention) on the recorded cells of
// tests/conformance/recorded/training-conformance-cli-h100-2026-12-06.json
// (tests/prediction/training_prediction_check.py).

#include "workload/training_allocations.hpp"

#include <algorithm>
#include <cstddef>
#include <functional>
#include <optional>
#include <utility>

#include "mechanics/checked_count.hpp"
#include "workload/decoder_allocations.hpp"
#include "workload/workload_steps.hpp"

namespace iteragpu {
namespace {

using Count = CheckedCount;
constexpr std::uint64_t kFloat32 = 4, kInt64 = 8;
// cuDNN attention's forward: the philox seed and offset (int64 each) and a workspace it frees.
constexpr std::uint64_t kPhiloxBytes = 8, kAttentionForwardWorkspace = 256;
// The position ids' cumsum's scan storage (check_single_sequences).
constexpr std::uint64_t kScanStorageBytes = 256 + 2 * 512 + 255;

Count u(std::int64_t value) { return Count(static_cast<std::uint64_t>(value)); }

// A tensor's memory: one block of the allocator, freed when the last tensor that holds it
// (the tensor, its views, a node that saved it) lets it go, as a c10::StorageImpl is.
class Storage {
 public:
  Storage(AllocationRecorder& allocator, Count bytes) : allocator_(allocator), block_(allocator.allocate(bytes.value())) {}
  ~Storage() { allocator_.free(block_); }
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;

 private:
  AllocationRecorder& allocator_;
  AllocationRecorder::Block block_;
};

struct Node;
struct Parameter;

// A tensor as autograd sees it: its bytes, its storage (none for a weight, which is never
// freed), whether it is a view (a view holds its base, so the engine never accumulates into
// it in place), and where its gradient goes (its producer's node, or a trained parameter).
struct Tensor {
  std::shared_ptr<Storage> storage;
  Count bytes = 0;
  bool view = false;
  std::shared_ptr<Node> grad_fn;
  Parameter* leaf = nullptr;

  bool requires_grad() const { return grad_fn != nullptr || leaf != nullptr; }
  // What a node saves of its own output: the tensor without its node (SavedVariable keeps an
  // output without a reference to its grad_fn).
  Tensor detached() const { return Tensor{storage, bytes, view, nullptr, nullptr}; }
  Tensor as_view() const { return Tensor{storage, bytes, true, grad_fn, leaf}; }
};

// An input gradient (none where the input needs none).
using Gradient = std::optional<Tensor>;

// Gradient checkpointing (activation_checkpoint.cpp, after torch.utils.checkpoint's
// non-reentrant checkpoint): a saved tensor of a checkpointed layer's forward is an empty
// holder; the layer's recomputation puts the tensor back into the holder at the same position,
// and the node that saved it takes it out when the backward reaches it.
struct Holder {
  std::optional<Tensor> recomputed;
};
struct Layer;
// One checkpointed call of a decoder layer: its input and what the call captured (cos, sin,
// the position ids), kept until the last node holding one of its holders lets them go.
struct CheckpointFrame {
  Layer* layer = nullptr;
  Tensor input, cos, sin, position_ids;
  std::vector<std::weak_ptr<Holder>> holders;  // in the order the forward packed them
  std::size_t recomputed_count = 0;
  bool recomputed = false;
};
// The recomputation's last pack: early stop (nothing after it in the layer is recomputed).
struct StopRecomputation {};

// A parameter: its bytes in its dtype, whether AdamW trains it, its gradient (.grad) and
// AdamW's state. `value` holds an adapter's storage; a checkpoint weight has none.
struct Parameter {
  Count bytes = 0;
  bool trained = false;
  Tensor value;
  Gradient grad;
  Gradient exp_avg, exp_avg_sq;

  Tensor tensor() {
    Tensor t = value;
    t.bytes = bytes;
    t.leaf = trained ? this : nullptr;
    return t;
  }
};

// An autograd node: where each input's gradient goes, the tensors it saved, how its backward
// allocates (the incoming gradient → one gradient per input), and the gradient buffered for it.
struct Node {
  std::vector<Tensor> inputs;  // only their grad_fn and leaf are read: where the gradients go
  std::vector<Tensor> saved;
  // Under gradient checkpointing, in place of `saved` until the backward reaches the node.
  std::shared_ptr<CheckpointFrame> frame;
  std::vector<std::shared_ptr<Holder>> holders;
  std::function<std::vector<Gradient>(const Tensor& incoming)> backward;
  Gradient buffer;
};

// A tensor nothing else holds: the engine may accumulate into it in place.
bool exclusive(const Tensor& tensor) { return !tensor.view && tensor.storage && tensor.storage.use_count() == 1; }

struct Projection {
  Parameter weight;
  std::optional<Parameter> bias;
  std::optional<Parameter> lora_a, lora_b;  // float32 adapters
  Count in = 0, out = 0;
};

struct Layer {
  Projection q, k, v, o, gate, up, down;
  std::optional<Parameter> q_norm, k_norm;
  Parameter input_norm, post_attention_norm;
  std::optional<Tensor> cached_keys, cached_values;  // DynamicLayer's, until the output is dropped
};

class TrainingSteps final : public StepAllocations {
 public:
  explicit TrainingSteps(const TrainingShape& shape)
      : s_(shape),
        a_(s_.architecture),
        e_(shape.dtype_bytes),
        batch_(u(shape.batch)),
        context_(u(shape.context)),
        rows_(u(shape.batch) * u(shape.context)) {
    build_parameters();
  }

  bool run(const std::string& step, AllocationRecorder& allocator) override {
    r_ = &allocator;
    if (step == kLoadModelStep) {
      allocate_decoder_weights(allocator, a_, s_.tensors, e_.value());
    } else if (step == kAddAdaptersStep) {
      add_adapters();
    } else if (step == kCreateInputsStep) {
      input_ids_ = fresh(rows_ * kInt64);
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
  // No row of a training run keeps an output for the protocol to release (PlannedPhase): the
  // backward row drops the forward's output itself.
  void release_output(AllocationRecorder& allocator) override { r_ = &allocator; }

 private:
  // --- The model's parameters, in model.parameters() order (DecoderModel::base_parameters) ---
  void build_parameters() {
    const Count hidden = u(a_.hidden_size), head_dim = u(a_.head_dim);
    const Count query = u(a_.attention_heads) * head_dim, key = u(a_.kv_heads) * head_dim;
    const Count intermediate = u(a_.intermediate_size);
    const bool full = !s_.lora;
    auto parameter = [&](Count elements) {
      Parameter p;
      p.bytes = elements * e_;
      p.trained = full;
      return p;
    };
    auto projection = [&](Count in, Count out, bool bias) {
      Projection p;
      p.in = in, p.out = out;
      p.weight = parameter(in * out);
      if (bias) p.bias = parameter(out);
      return p;
    };
    embed_ = parameter(u(a_.vocab_size) * hidden);
    layers_.resize(static_cast<std::size_t>(a_.layers));
    for (Layer& layer : layers_) {
      layer.q = projection(hidden, query, a_.qkv_bias);
      layer.k = projection(hidden, key, a_.qkv_bias);
      layer.v = projection(hidden, key, a_.qkv_bias);
      layer.o = projection(query, hidden, a_.o_proj_bias);
      if (a_.qk_norm) layer.q_norm = parameter(head_dim), layer.k_norm = parameter(head_dim);
      layer.gate = projection(hidden, intermediate, a_.mlp_bias);
      layer.up = projection(hidden, intermediate, a_.mlp_bias);
      layer.down = projection(intermediate, hidden, a_.mlp_bias);
      layer.input_norm = parameter(hidden);
      layer.post_attention_norm = parameter(hidden);
    }
    norm_ = parameter(hidden);
    if (!a_.tie_word_embeddings) lm_head_ = parameter(u(a_.vocab_size) * hidden);
    if (!full) return;
    trained_.push_back(&embed_);
    for (Layer& layer : layers_) {
      for (Projection* p : {&layer.q, &layer.k, &layer.v, &layer.o}) {
        trained_.push_back(&p->weight);
        if (p->bias) trained_.push_back(&*p->bias);
      }
      if (layer.q_norm) trained_.push_back(&*layer.q_norm), trained_.push_back(&*layer.k_norm);
      for (Projection* p : {&layer.gate, &layer.up, &layer.down}) {
        trained_.push_back(&p->weight);
        if (p->bias) trained_.push_back(&*p->bias);
      }
      trained_.push_back(&layer.input_norm);
      trained_.push_back(&layer.post_attention_norm);
    }
    trained_.push_back(&norm_);
    if (lm_head_) trained_.push_back(&*lm_head_);
  }
  Parameter& lm_head() { return lm_head_ ? *lm_head_ : embed_; }

  // add_adapters: each targeted projection's lora_A [r, in] and lora_B [out, r] moved to the
  // device in the run's dtype, in module order; then each cast to float32 (the new tensor made
  // before the old one goes) when the dtype is a 16-bit one.
  void add_adapters() {
    const auto targeted = [&](const char* name) {
      return std::find(s_.lora_targets.begin(), s_.lora_targets.end(), name) != s_.lora_targets.end();
    };
    std::vector<Projection*> adapted;
    for (Layer& layer : layers_) {
      const std::pair<const char*, Projection*> projections[] = {
          {"q_proj", &layer.q},       {"k_proj", &layer.k},   {"v_proj", &layer.v},     {"o_proj", &layer.o},
          {"gate_proj", &layer.gate}, {"up_proj", &layer.up}, {"down_proj", &layer.down}};
      for (const auto& [name, projection] : projections)
        if (targeted(name)) adapted.push_back(projection);
    }
    const Count rank = u(s_.lora_rank);
    for (Projection* p : adapted) {
      p->lora_a = adapter(rank * p->in * e_);
      p->lora_b = adapter(p->out * rank * e_);
    }
    for (Projection* p : adapted) {
      for (Parameter* adapter : {&*p->lora_a, &*p->lora_b}) {
        if (e_.value() != kFloat32) {
          Tensor cast = fresh(adapter->bytes / e_ * kFloat32);
          adapter->value = cast;
          adapter->bytes = cast.bytes;
        }
        trained_.push_back(adapter);
      }
    }
  }
  Parameter adapter(Count bytes) {
    Parameter p;
    p.bytes = bytes;
    p.trained = true;
    p.value = fresh(bytes);
    return p;
  }

  // --- Tensors and nodes ---
  Tensor fresh(Count bytes) { return Tensor{std::make_shared<Storage>(*r_, bytes), bytes, false, nullptr, nullptr}; }
  // The output of an op whose inputs are `inputs`: a node recording it when one of them
  // requires a gradient.
  Tensor record(Tensor output, std::vector<Tensor> inputs, std::vector<Tensor> saved,
                std::function<std::vector<Gradient>(const Tensor&)> backward) {
    return with_node(std::move(output), node_for(inputs, std::move(saved)), std::move(backward));
  }
  // record() in two halves, for an op whose saved tensors are all inputs: autograd saves (and
  // a checkpoint packs) them before the op runs, so a recomputation that stops at this op's
  // last pack never allocates its output.
  std::shared_ptr<Node> node_for(const std::vector<Tensor>& inputs, std::vector<Tensor> saved) {
    bool requires = false;
    for (const Tensor& input : inputs) requires = requires || input.requires_grad();
    if (!requires) return nullptr;
    auto node = std::make_shared<Node>();
    for (const Tensor& input : inputs) node->inputs.push_back(Tensor{nullptr, 0, false, input.grad_fn, input.leaf});
    keep_saved(*node, std::move(saved));
    if (!recomputing_) tape_.push_back(node);  // the recomputed graph is never run
    return node;
  }
  Tensor with_node(Tensor output, std::shared_ptr<Node> node,
                   std::function<std::vector<Gradient>(const Tensor&)> backward) {
    if (!node) return output;
    node->backward = std::move(backward);
    output.grad_fn = std::move(node);
    return output;
  }
  // What a node keeps of the tensors it saves: the tensors; in a checkpointed layer's forward,
  // an empty holder for each; in its recomputation, nothing: each goes into the forward's
  // holder at the same position (if that holder's node still lives), and the last one stops it.
  void keep_saved(Node& node, std::vector<Tensor> saved) {
    if (recomputing_) {
      for (const Tensor& tensor : saved) {
        CheckpointFrame& frame = *recomputing_;
        if (std::shared_ptr<Holder> holder = frame.holders.at(frame.recomputed_count).lock())
          holder->recomputed = tensor.detached();
        if (++frame.recomputed_count == frame.holders.size()) throw StopRecomputation();
      }
    } else if (packing_) {
      for (std::size_t i = 0; i < saved.size(); ++i) {
        auto holder = std::make_shared<Holder>();
        packing_->holders.push_back(holder);
        node.holders.push_back(std::move(holder));
      }
      if (!saved.empty()) node.frame = packing_;
    } else {
      node.saved = std::move(saved);
    }
  }
  // A view op (reshape, transpose, slice of the head dimension...): no memory; its backward
  // gives a view of the incoming gradient.
  Tensor view_of(const Tensor& input) {
    return record(input.as_view(), {input}, {}, [](const Tensor& g) { return std::vector<Gradient>{g.as_view()}; });
  }
  // The gradient cast or summed to an input's bytes when they differ from the output's
  // (validate_outputs: sum_to for a broadcast input, .to() for another dtype).
  Gradient fitted(Gradient gradient, Count input_bytes) {
    if (gradient && gradient->bytes != input_bytes) gradient = fresh(input_bytes);
    return gradient;
  }
  // GEMMs of the backward: the engine's thread has its own cuBLAS workspace.
  Tensor backward_gemm(Count bytes) {
    Tensor output = fresh(bytes);
    r_->backward_gemm_workspaces(/*bias_fused=*/false);
    return output;
  }

  // --- Ops (what ATen allocates, what autograd saves, what each backward allocates) ---
  // x.to(dtype): a copy unless the dtype is the same; ToCopyBackward casts the gradient back.
  Tensor to(const Tensor& x, Count output_bytes) {
    if (output_bytes == x.bytes) return x;
    const Count in = x.bytes;
    return record(fresh(output_bytes), {x}, {}, [this, in](const Tensor&) { return std::vector<Gradient>{fresh(in)}; });
  }
  // x.pow(2), saving x; PowBackward0: grad * (2 * x.pow(1)), its temporaries freed together.
  Tensor square(const Tensor& x) {
    const Count in = x.bytes;
    return record(fresh(in), {x}, {x}, [this, in](const Tensor&) {
      Tensor power = fresh(in), scaled = fresh(in);
      return std::vector<Gradient>{fresh(in)};
    });
  }
  // x.mean(-1, keepdim=True); MeanBackward1: grad.expand(...) / n.
  Tensor mean(const Tensor& x, Count output_bytes) {
    const Count in = x.bytes;
    return record(fresh(output_bytes), {x}, {}, [this, in](const Tensor&) { return std::vector<Gradient>{fresh(in)}; });
  }
  // x + a scalar; AddBackward1 passes the gradient on.
  Tensor add_scalar(const Tensor& x) {
    return record(fresh(x.bytes), {x}, {}, [](const Tensor& g) { return std::vector<Gradient>{g}; });
  }
  // rsqrt(x), saving its result; RsqrtBackward0: -0.5 * grad * result.pow(3).
  Tensor rsqrt(const Tensor& x) {
    Tensor output = fresh(x.bytes);
    const Count in = x.bytes;
    return record(output, {x}, {output.detached()}, [this, in](const Tensor&) {
      Tensor cubed = fresh(in), half = fresh(in);
      return std::vector<Gradient>{fresh(in)};
    });
  }
  // a * b (b broadcast or not); MulBackward0 saves b when a needs a gradient and a when b does,
  // and computes b's gradient (grad * a) before a's (grad * b). `staged_reduction`: a's
  // gradient is summed by reduce_kernel through global memory (reduced_with_staging).
  Tensor mul(const Tensor& a, const Tensor& b, Count output_bytes, bool staged_reduction = false) {
    std::vector<Tensor> saved;
    if (a.requires_grad()) saved.push_back(b);
    if (b.requires_grad()) saved.push_back(a);
    const bool a_grad = a.requires_grad(), b_grad = b.requires_grad();
    const Count a_bytes = a.bytes, b_bytes = b.bytes;
    return record(fresh(output_bytes), {a, b}, std::move(saved), [=](const Tensor&) {
      Gradient gb, ga;
      if (b_grad) gb = fresh(output_bytes);
      if (a_grad) ga = fresh(output_bytes);
      ga = staged_reduction ? reduced_with_staging(std::move(ga), a_bytes) : fitted(std::move(ga), a_bytes);
      gb = fitted(std::move(gb), b_bytes);
      return std::vector<Gradient>{ga, gb};
    });
  }
  // The gradient of a q/k norm's weight, [batch, heads, positions, head_dim] summed to
  // [head_dim]: few outputs over many rows, so ATen's reduce_kernel reduces across blocks
  // through a float32 staging buffer and an int semaphore, allocated after the output and
  // freed with the kernel (the semaphore at once, the buffer with the node's other frees).
  // The buffer's size comes from setReduceConfig, which depends on the GPU; modelled as the
  // H100 traces show it at 1 × 128 (8 bytes per summed element: 1 MiB for 8 heads, 2 MiB for
  // 16), and said so in a caveat (TrainingWorkload::prediction_caveats).
  Gradient reduced_with_staging(Gradient gradient, Count input_bytes) {
    if (!gradient || gradient->bytes == input_bytes) return gradient;
    Tensor reduced = fresh(input_bytes);
    Tensor staging = fresh(gradient->bytes / e_ * 8);
    fresh(4);  // the semaphore
    return reduced;
  }
  // x * a scalar; MulBackward1: grad * the scalar.
  Tensor mul_scalar(const Tensor& x) {
    const Count in = x.bytes;
    return record(fresh(in), {x}, {}, [this, in](const Tensor&) { return std::vector<Gradient>{fresh(in)}; });
  }
  // a + b, of `output_bytes` (type promotion: a bfloat16 result plus a float32 update is
  // float32); AddBackward0 passes the gradient to both, cast to an input of another dtype.
  Tensor add(const Tensor& a, const Tensor& b, Count output_bytes) {
    const bool a_grad = a.requires_grad(), b_grad = b.requires_grad();
    const Count a_bytes = a.bytes, b_bytes = b.bytes;
    return record(fresh(output_bytes), {a, b}, {}, [=](const Tensor& g) {
      Gradient ga, gb;
      if (a_grad) ga = fitted(g, a_bytes);
      if (b_grad) gb = fitted(g, b_bytes);
      return std::vector<Gradient>{ga, gb};
    });
  }
  // silu(x), saving x; SiluBackward0: one kernel.
  Tensor silu(const Tensor& x) {
    const Count in = x.bytes;
    return record(fresh(in), {x}, {x}, [this, in](const Tensor&) { return std::vector<Gradient>{fresh(in)}; });
  }
  // -x; NegBackward0: -grad.
  Tensor neg(const Tensor& x) {
    const Count in = x.bytes;
    return record(fresh(in), {x}, {}, [this, in](const Tensor&) { return std::vector<Gradient>{fresh(in)}; });
  }
  // x.slice(-1, ...) of half the last dimension: a view; SliceBackward0 writes the gradient
  // into zeros of x's shape.
  Tensor half_slice(const Tensor& x) {
    const Count in = x.bytes;
    Tensor view = x.as_view();
    view.bytes = in / 2;
    return record(view, {x}, {}, [this, in](const Tensor&) { return std::vector<Gradient>{fresh(in)}; });
  }
  // cat of `parts` on the last dimensions; CatBackward0 gives each part a narrowed view.
  Tensor cat(const std::vector<Tensor>& parts) {
    Count bytes = 0;
    for (const Tensor& part : parts) bytes += part.bytes;
    const std::size_t count = parts.size();
    return record(fresh(bytes), parts, {}, [count](const Tensor& g) {
      return std::vector<Gradient>(count, Gradient(g.as_view()));
    });
  }
  // The head split, linear(...).view(batch, positions, heads, head_dim) then transpose(1, 2):
  // views. Their backward reshapes a gradient laid out [batch, heads, positions, head_dim]
  // back to [batch, positions, hidden], which is a copy (the recorded traces show one per q,
  // k and v projection of every layer) unless the gradient comes laid out as the projection's
  // output: the values' under gradient checkpointing, which reach SDPA as this very view (no
  // cache's cat) and get their gradient from its backward in their own layout.
  Tensor split_heads(const Tensor& x, bool gradient_in_projection_layout = false) {
    if (gradient_in_projection_layout) return view_of(x);
    const Count in = x.bytes;
    return record(x.as_view(), {x}, {}, [this, in](const Tensor&) { return std::vector<Gradient>{fresh(in)}; });
  }

  // nn.Linear's forward on [batch, positions, in]: at::linear folds it into one GEMM
  // (mm, or addmm with a bias) on the flattened input, and views the result back. MmBackward0
  // saves the input when the weight needs a gradient; it computes the weight's gradient
  // (mat2, a transposed view of a GEMM's output) before the input's (a view of another), and
  // a bias gradient is the incoming one summed over the rows.
  Tensor plain_linear(const Tensor& x, Parameter& weight, Parameter* bias, Count output_bytes) {
    Tensor w = weight.tensor();
    std::vector<Tensor> inputs = {x, w};
    if (bias) inputs.push_back(bias->tensor());
    std::vector<Tensor> saved;  // the weight is a parameter: saving it holds no memory, but it is a pack
    if (w.requires_grad()) saved.push_back(x);
    if (x.requires_grad()) saved.push_back(w);
    std::shared_ptr<Node> node = node_for(inputs, std::move(saved));
    Tensor output = fresh(output_bytes);
    if (recomputing_) {
      r_->backward_gemm_workspaces(bias != nullptr);  // a recomputation runs on the engine's thread
    } else {
      r_->gemm_workspaces(bias != nullptr);
    }
    const bool x_grad = x.requires_grad(), w_grad = w.requires_grad(), b_grad = bias && bias->trained;
    const Count x_bytes = x.bytes, w_bytes = w.bytes, b_bytes = bias ? bias->bytes : Count(0);
    return with_node(output, std::move(node), [=](const Tensor&) {
      std::vector<Gradient> gradients(bias ? 3 : 2);
      if (w_grad) gradients[1] = backward_gemm(w_bytes).as_view();
      if (x_grad) gradients[0] = backward_gemm(x_bytes).as_view();
      if (b_grad) gradients[2] = fresh(b_bytes);
      return gradients;
    });
  }

  // DecoderModel::linear: nn.Linear, or PEFT's lora.Linear where the projection has an
  // adapter: result + lora_B(lora_A(x.to(float32))) * scaling, cast back to the result's dtype.
  Tensor linear(const Tensor& input, Projection& projection) {
    Parameter* bias = projection.bias ? &*projection.bias : nullptr;
    // Every activation a projection sees has batch × positions rows.
    const Count rows = rows_, rank = u(s_.lora_rank);
    Tensor result = plain_linear(input, projection.weight, bias, rows * projection.out * e_);
    if (!projection.lora_a) return result;
    const Tensor x = to(input, rows * projection.in * kFloat32);
    Tensor down = plain_linear(x, *projection.lora_a, nullptr, rows * rank * kFloat32);
    Tensor up = plain_linear(down, *projection.lora_b, nullptr, rows * projection.out * kFloat32);
    down = Tensor();
    Tensor scaled = mul_scalar(up);
    up = Tensor();
    Tensor sum = add(result, scaled, scaled.bytes);
    scaled = Tensor();
    result = sum;
    sum = Tensor();
    Tensor narrowed = to(result, rows * projection.out * e_);
    result = narrowed;
    return result;
  }

  // LlamaRMSNorm over `width` for `rows` rows (DecoderModel::rms_norm).
  Tensor rms_norm(const Tensor& input, Parameter& weight, Count rows, Count width, bool per_head = false) {
    Tensor hidden = to(input, rows * width * kFloat32);
    Tensor squared = square(hidden);
    Tensor variance = mean(squared, rows * kFloat32);
    squared = Tensor();
    Tensor shifted = add_scalar(variance);
    Tensor scale = rsqrt(shifted);
    shifted = Tensor();
    hidden = mul(hidden, scale, hidden.bytes);
    scale = Tensor();
    Tensor narrowed = to(hidden, rows * width * e_);
    Tensor output = mul(weight.tensor(), narrowed, narrowed.bytes, per_head);
    return output;
  }

  // (x * cos) + (rotate_half(x) * sin).
  Tensor apply_rotary(const Tensor& x, const Tensor& cos, const Tensor& sin) {
    Tensor first = mul(x, cos, x.bytes);
    Tensor rotated = rotate_half(x);
    Tensor second = mul(rotated, sin, x.bytes);
    rotated = Tensor();
    return add(first, second, x.bytes);
  }
  // transformers' order: x1 (the first half's view), x2, then -x2 (DecoderModel's rotate_half).
  // The backward's SliceBackward nodes free and reuse gradient buffers in the reverse order.
  Tensor rotate_half(const Tensor& x) {
    const Tensor x1 = half_slice(x);
    const Tensor x2 = half_slice(x);
    Tensor negated = neg(x2);
    return cat({negated, x1});
  }

  // LlamaRotaryEmbedding.forward (DecoderModel::rotary): no gradients; cos and sin live as
  // long as a node saved them.
  std::pair<Tensor, Tensor> rotary() {
    const Count head_dim = u(a_.head_dim), positions = context_;
    Tensor position_ids_expanded = fresh(positions * kFloat32);
    Tensor freqs = fresh(head_dim / 2 * positions * kFloat32);
    r_->gemm_workspaces(false);
    Tensor emb = fresh(positions * head_dim * kFloat32);
    Tensor cos = fresh(positions * head_dim * kFloat32);
    cos = fresh(positions * head_dim * kFloat32);  // cos * 1.0
    Tensor sin = fresh(positions * head_dim * kFloat32);
    sin = fresh(positions * head_dim * kFloat32);
    Tensor cos_out = e_.value() == kFloat32 ? cos : fresh(positions * head_dim * e_);
    Tensor sin_out = e_.value() == kFloat32 ? sin : fresh(positions * head_dim * e_);
    return {cos_out, sin_out};
  }

  // LlamaAttention.forward with sdpa_attention_forward and DynamicLayer.update.
  Tensor attention(const Tensor& hidden, Layer& layer, const Tensor& cos, const Tensor& sin) {
    const Count head_dim = u(a_.head_dim);
    Tensor query, key;
    if (a_.qk_norm) {
      query = rms_norm(split_heads(linear(hidden, layer.q)), *layer.q_norm, rows_ * u(a_.attention_heads), head_dim,
                       /*per_head=*/true);
      key = rms_norm(split_heads(linear(hidden, layer.k)), *layer.k_norm, rows_ * u(a_.kv_heads), head_dim,
                     /*per_head=*/true);
    } else {
      query = split_heads(linear(hidden, layer.q));
      key = split_heads(linear(hidden, layer.k));
    }
    Tensor value = split_heads(linear(hidden, layer.v), /*gradient_in_projection_layout=*/s_.gradient_checkpointing);
    Tensor query_embedded = apply_rotary(query, cos, sin);
    Tensor key_embedded = apply_rotary(key, cos, sin);
    query = query_embedded;
    key = key_embedded;
    query_embedded = key_embedded = Tensor();
    // DynamicLayer.update: torch.cat onto empty tensors, which allocate nothing. Gradient
    // checkpointing turns the cache off.
    if (!s_.gradient_checkpointing) {
      layer.cached_keys = cat({key});
      layer.cached_values = cat({value});
      key = *layer.cached_keys;
      value = *layer.cached_values;
    }
    Tensor output = attend(query, key, value);
    output = linear(output, layer.o);
    return output;
  }

  // SDPA on cuDNN attention (grouped-query path, no repeat_kv): with a gradient to come, the
  // philox seed and offset, the output, the log-sum-exp statistics (float32 per head and
  // position) and a workspace it frees; all but the workspace saved, with the inputs. The
  // backward allocates dq, dk, dv and a workspace of batch × heads × positions ×
  // (8 × head_dim + 4) + 256 bytes that it frees (the size cuDNN asked for in every recorded
  // cell). Without a gradient to come it allocates its output only.
  Tensor attend(const Tensor& query, const Tensor& key, const Tensor& value) {
    if (!query.requires_grad() && !key.requires_grad() && !value.requires_grad()) return fresh(query.bytes);
    Tensor seed = fresh(kPhiloxBytes), offset = fresh(kPhiloxBytes);
    Tensor output = fresh(query.bytes);
    Tensor statistics = fresh(batch_ * u(a_.attention_heads) * context_ * kFloat32);
    fresh(kAttentionForwardWorkspace);
    const Count q_bytes = query.bytes, k_bytes = key.bytes, v_bytes = value.bytes;
    const Count workspace = batch_ * u(a_.attention_heads) * context_ * (u(a_.head_dim) * 8 + 4) + 256;
    return record(output, {query, key, value}, {query, key, value, output.detached(), statistics, seed, offset},
                  [=](const Tensor&) {
                    Tensor dq = fresh(q_bytes), dk = fresh(k_bytes), dv = fresh(v_bytes);
                    fresh(workspace);
                    return std::vector<Gradient>{dq, dk, dv};
                  });
  }

  // LlamaMLP.forward: down_proj(silu(gate_proj(x)) * up_proj(x)).
  Tensor mlp(const Tensor& input, Layer& layer) {
    Tensor gate = linear(input, layer.gate);
    Tensor activated = silu(gate);
    gate = Tensor();
    Tensor up = linear(input, layer.up);
    Tensor product = mul(activated, up, up.bytes);
    activated = up = Tensor();
    return linear(product, layer.down);
  }

  // LlamaDecoderLayer.forward.
  Tensor decoder_layer(const Tensor& input, Layer& layer, const Tensor& cos, const Tensor& sin) {
    const Count hidden = u(a_.hidden_size);
    Tensor normed = rms_norm(input, layer.input_norm, rows_, hidden);
    Tensor attended = attention(normed, layer, cos, sin);
    normed = Tensor();
    Tensor residual = add(input, attended, input.bytes);
    attended = Tensor();
    normed = rms_norm(residual, layer.post_attention_norm, rows_, hidden);
    Tensor transformed = mlp(normed, layer);
    normed = Tensor();
    return add(residual, transformed, residual.bytes);
  }

  // DecoderModel::hidden_states: the embedding (EmbeddingBackward0 makes the whole table's
  // gradient), the position ids (arange + past, the arange freed), the rotary tables, the
  // layers, the final norm.
  Tensor hidden_states() {
    const Count hidden = u(a_.hidden_size);
    const Count table_bytes = embed_.bytes;
    Tensor inputs_embeds = record(fresh(rows_ * hidden * e_), {embed_.tensor()}, {}, [this, table_bytes](const Tensor&) {
      // Accumulated into the tied lm_head's gradient out of place in every recorded cell:
      // marked as a tensor the engine does not reuse.
      return std::vector<Gradient>{fresh(table_bytes).as_view()};
    });
    if (s_.gradient_checkpointing && !inputs_embeds.requires_grad()) {
      // enable_input_require_grads()' hook (DecoderModel::hidden_states): a frozen table's output
      // becomes a leaf that requires grad; the graph holds it, and its .grad, until it goes.
      embedded_leaf_.bytes = inputs_embeds.bytes;
      embedded_leaf_.value = inputs_embeds;
      inputs_embeds.leaf = &embedded_leaf_;
    }
    Tensor position_ids;
    {
      Tensor arange = fresh(context_ * kInt64);
      position_ids = fresh(context_ * kInt64);
    }
    if (s_.gradient_checkpointing) check_single_sequences();
    auto [cos, sin] = rotary();
    Tensor hidden_state = inputs_embeds;
    for (Layer& layer : layers_) {
      Tensor next = s_.gradient_checkpointing ? checkpointed_layer(hidden_state, layer, cos, sin, position_ids)
                                              : decoder_layer(hidden_state, layer, cos, sin);
      hidden_state = next;
    }
    return rms_norm(hidden_state, norm_, rows_, hidden);
  }

  // create_causal_mask without a cache: find_packed_sequence_indices on the position ids
  // expanded to [batch, positions] (DecoderModel::check_single_sequences): the first value minus
  // one (int64), diff with it prepended (a cat, then the difference), .ne(1) (bool) and its
  // cumsum (int64: the result and the bool input cast; with one row CUB's scan also takes
  // temporary storage, with several the row-wise scan none), then [:, -1] == 0 and .all() (one
  // bool per row, one bool), all freed on return.
  void check_single_sequences() {
    const Count elements = rows_;  // batch x positions
    Tensor first_dummy_value = fresh(batch_ * kInt64);  // the first position minus one, per row
    Tensor position_diff;
    {
      Tensor joined = fresh(batch_ * (context_ + Count(1)) * kInt64);
      position_diff = fresh(elements * kInt64);
    }
    Tensor packed_sequence_mask;
    {
      Tensor not_one = fresh(elements);
      packed_sequence_mask = fresh(elements * kInt64);
      Tensor cast = fresh(elements * kInt64);
      // CUB's decoupled look-back storage: a status byte and two int64 values per tile, each
      // array padded by 32 tiles and aligned to 256 bytes, plus 255: 1,535 bytes up to 32 tiles,
      // as the H100 traces show it at 128 and 256 positions.
      if (batch_.value() == 1) fresh(Count(kScanStorageBytes));
    }
    {
      Tensor last_is_zero = fresh(batch_);
      Tensor all = fresh(1);
    }
    // Returning, Python clears the frame's locals in the order they were first assigned.
    first_dummy_value = Tensor();
    position_diff = Tensor();
    packed_sequence_mask = Tensor();
  }

  // GradientCheckpointingLayer: the layer under the checkpoint, which keeps its input and the
  // call's captured cos, sin and position ids; every tensor its ops save is a holder.
  Tensor checkpointed_layer(const Tensor& input, Layer& layer, const Tensor& cos, const Tensor& sin,
                            const Tensor& position_ids) {
    auto frame = std::make_shared<CheckpointFrame>();
    frame->layer = &layer;
    frame->input = input, frame->cos = cos, frame->sin = sin, frame->position_ids = position_ids;
    packing_ = frame;
    Tensor output = decoder_layer(input, layer, cos, sin);
    packing_.reset();
    return output;
  }

  // The first unpack of a checkpointed layer's saved tensor runs the layer again from its kept
  // input, with grad on, on the engine's thread, up to the last tensor its forward packed; then
  // the node takes its tensors out of their holders, to let them go when it is done.
  void unpack_saved(Node& node) {
    if (node.holders.empty()) return;
    CheckpointFrame& frame = *node.frame;
    if (!frame.recomputed) {
      recomputing_ = &frame;
      try {
        Tensor output = decoder_layer(frame.input, *frame.layer, frame.cos, frame.sin);
      } catch (const StopRecomputation&) {
      }
      recomputing_ = nullptr;
      frame.recomputed = true;
    }
    for (const std::shared_ptr<Holder>& holder : node.holders) {
      if (!holder->recomputed) continue;  // unreachable: each holder of a running node was filled
      node.saved.push_back(std::move(*holder->recomputed));
      holder->recomputed.reset();
    }
  }

  // transformers' ForCausalLMLoss (TrainingModule::causal_lm_loss): the logits in float32,
  // the labels padded by one and shifted (a copy unless the batch is 1, where the slice is
  // contiguous), log_softmax (saving its result) and nll_loss (saving its input, the labels
  // and the total weight; its output and total weight one float32 each).
  Tensor causal_lm_loss(const Tensor& logits) {
    const Count vocab = u(a_.vocab_size);
    Tensor upcast = to(logits, rows_ * vocab * kFloat32);
    Tensor labels = fresh(batch_ * (context_ + 1) * kInt64);
    Tensor shift_labels = batch_.value() == 1 ? labels.as_view() : fresh(rows_ * kInt64);
    const Tensor flat_logits = view_of(upcast);
    const Count logits_bytes = upcast.bytes;
    Tensor log_probabilities = fresh(logits_bytes);
    log_probabilities = record(log_probabilities, {flat_logits}, {log_probabilities.detached()},
                               [this, logits_bytes](const Tensor&) { return std::vector<Gradient>{fresh(logits_bytes)}; });
    Tensor loss = fresh(kFloat32);
    Tensor total_weight = fresh(kFloat32);
    return record(loss, {log_probabilities}, {log_probabilities, shift_labels, total_weight},
                  [this, logits_bytes](const Tensor&) { return std::vector<Gradient>{fresh(logits_bytes)}; });
  }

  // out = model(input_ids=ids, labels=ids): the output keeps the loss, the logits and the cache.
  void forward() {
    Tensor hidden = hidden_states();
    Tensor logits = plain_linear(hidden, lm_head(), nullptr, rows_ * u(a_.vocab_size) * e_);
    logits_ = logits;
    loss_ = causal_lm_loss(logits);
    logits = Tensor();
    hidden = Tensor();
  }

  // out.loss.backward(): GraphRoot holds the loss's gradient (ones) until the engine is done;
  // then del out frees the loss, the logits and the cache (the last layer's first).
  void backward() {
    {
      Tensor root = fresh(kFloat32);
      loss_->grad_fn->buffer = root;
      run_engine();
    }
    loss_.reset();
    logits_.reset();
    embedded_leaf_.value = Tensor();
    embedded_leaf_.grad.reset();
    for (auto layer = layers_.rbegin(); layer != layers_.rend(); ++layer) {
      layer->cached_keys.reset();
      layer->cached_values.reset();
    }
  }

  void run_engine() {
    for (auto entry = tape_.rbegin(); entry != tape_.rend(); ++entry) {
      std::shared_ptr<Node> node = entry->lock();
      if (!node || !node->buffer) continue;
      std::vector<Gradient> gradients;
      {
        const Tensor incoming = std::move(*node->buffer);
        node->buffer.reset();
        unpack_saved(*node);
        gradients = node->backward(incoming);
      }
      node->saved.clear();
      node->holders.clear();
      node->frame.reset();
      for (std::size_t i = 0; i < gradients.size() && i < node->inputs.size(); ++i) {
        if (!gradients[i]) continue;
        const Tensor& input = node->inputs[i];
        if (input.grad_fn) {
          accumulate(input.grad_fn->buffer, std::move(*gradients[i]));
        } else if (input.leaf) {
          accumulate(input.leaf->grad, std::move(*gradients[i]));
        }
      }
    }
    tape_.clear();
  }

  // InputBuffer::accumulate: into the buffered gradient in place when nothing else holds it,
  // else into the new one, else a new sum.
  void accumulate(Gradient& slot, Tensor gradient) {
    if (!slot) {
      slot = std::move(gradient);
    } else if (exclusive(*slot)) {
      // old.add_(new): `gradient` goes when this returns
    } else if (exclusive(gradient)) {
      slot = std::move(gradient);
    } else {
      const Count bytes = slot->bytes;
      slot = fresh(bytes);
    }
  }

  // opt.step(): Adam._init_group makes exp_avg and exp_avg_sq of each parameter with a
  // gradient, in order, the first time; _multi_tensor_adam's ops are in place but
  // _foreach_sqrt, whose list is freed last first; then zero_grad(set_to_none=True).
  void optimizer_step() {
    std::vector<Parameter*> stepped;
    for (Parameter* p : trained_) {
      if (!p->grad) continue;
      stepped.push_back(p);
      if (!p->exp_avg) {
        p->exp_avg = fresh(p->bytes);
        p->exp_avg_sq = fresh(p->bytes);
      }
    }
    std::vector<Tensor> square_roots;
    for (Parameter* p : stepped) square_roots.push_back(fresh(p->bytes));
    while (!square_roots.empty()) square_roots.pop_back();
    for (Parameter* p : trained_) p->grad.reset();
  }

  const TrainingShape s_;
  const DecoderArchitecture& a_;
  Count e_, batch_, context_, rows_;
  AllocationRecorder* r_ = nullptr;
  Parameter embed_, norm_;
  Parameter embedded_leaf_;  // the embedding's output as a leaf, under gradient checkpointing
  std::optional<Parameter> lm_head_;
  std::vector<Layer> layers_;
  std::vector<Parameter*> trained_;  // what AdamW updates, in model.parameters() order
  std::vector<std::weak_ptr<Node>> tape_;  // the forward's nodes, in creation order
  std::shared_ptr<CheckpointFrame> packing_;  // the checkpointed layer whose forward runs
  CheckpointFrame* recomputing_ = nullptr;    // the checkpointed layer being recomputed
  std::optional<Tensor> input_ids_, loss_, logits_;
};

}  // namespace

std::unique_ptr<StepAllocations> training_step_allocations(const TrainingShape& shape) {
  return std::make_unique<TrainingSteps>(shape);
}

std::vector<std::string> training_allocation_rules() {
  return {
      "weights_load: as a checkpoint's (transformers' caching_allocator_warmup block, then each tensor in load "
      "order, then inv_freq and original_inv_freq).",
      "adapters (LoRA): each targeted projection's lora_A and lora_B in the run's dtype, in module order, then each "
      "cast to float32, the new tensor made before the old one is freed.",
      "inputs: the token ids, batch × context int64 (the labels are the same tensor).",
      "forward: the decoder's ops with autograd recording: every tensor an op's backward needs is kept until the "
      "backward reaches it (derivatives.yaml: only for inputs that need a gradient); then the logits of every "
      "position, their float32 copy, the padded labels, log_softmax and nll_loss.",
      "backward: the autograd engine runs each op's backward in reverse order of creation: its input gradients, "
      "broadcast ones summed and mixed-dtype ones cast, then the incoming gradient and the saved tensors freed, then "
      "each gradient accumulated into its producer's buffer (in place into a tensor nothing else holds, else a new "
      "sum); its thread's first GEMM allocates its own cuBLAS workspace; cuDNN attention's backward allocates dq, dk, "
      "dv and a workspace of batch × heads × positions × (8 × head_dim + 4) + 256 bytes. Then the loss, the logits "
      "and the KV cache are freed.",
      "gradient checkpointing: the embedding's output requires grad (enable_input_require_grads: a frozen table's "
      "is a leaf, its gradient kept until the graph goes); no KV cache, so the values' gradient needs no copy back; "
      "find_packed_sequence_indices' small temporaries on the position ids expanded to the batch; each decoder "
      "layer's forward keeps its input (and the call's cos, sin and position ids) and, for each tensor an op saves, "
      "only an empty holder; the "
      "backward's first node of the layer that saved one recomputes the layer from its input with autograd "
      "recording, on the engine's thread (its first bias-fused GEMM allocates that thread's cuBLASLt workspace), "
      "filling the holders and stopping at the last (before that op's output is allocated); each node takes its "
      "tensors out when it runs.",
      "optimizer: AdamW (foreach): the first step allocates exp_avg and exp_avg_sq of each trained parameter in "
      "order; every step allocates _foreach_sqrt's list and frees it; then the gradients are freed.",
  };
}

}  // namespace iteragpu
