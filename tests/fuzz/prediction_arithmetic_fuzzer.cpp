// libFuzzer target for the arithmetic of a prediction (workload/decoder_allocations.cpp over
// prediction/caching_allocator_model.cpp): the input picks a decoder shape within config.json's
// bounds (each dimension from 1 to 2^24, 1 to 8 layers), a batch and a context within the
// options' bounds and a dtype, and the weights, the inputs, a prefill and a decode step are
// allocated as a prediction allocates them. Each run must end either in CountBeyondLimit (the
// predictor's refusal) or with every counter below 2^62 and the allocated bytes at least the
// KV cache computed here in 128-bit integers: a wrapped product would show less. Never a
// crash, UB, a logic_error of the allocator model or another exception.
// Seeds: tests/fuzz/corpus/prediction_arithmetic_fuzzer/ (the wide shapes of the Nothing-false
// issue: head_dim 2^24 with 512 query and KV heads at batch 128 and 4,194,304 to 8,388,608
// positions, and the largest dimensions everywhere).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

#include "iteragpu/decoder_architecture.hpp"
#include "mechanics/checked_count.hpp"
#include "prediction/caching_allocator_model.hpp"
#include "workload/decoder_allocations.hpp"

namespace {

using iteragpu::CachingAllocatorModel;
using iteragpu::CountBeyondLimit;
using iteragpu::kCountLimit;

void require(bool condition) {
  if (!condition) std::abort();
}

// The allocator model as the predictor drives it (workspaces of the H200's sizes).
class Recorder final : public iteragpu::AllocationRecorder {
 public:
  Block allocate(std::uint64_t bytes) override { return model.allocate(bytes); }
  void free(Block block) override { model.free(block); }
  void gemm_workspaces(bool) override {
    if (!workspace_) workspace_ = true, model.allocate(std::uint64_t{32} << 20);
  }
  void backward_gemm_workspaces(bool) override {}
  CachingAllocatorModel model;

 private:
  bool workspace_ = false;
};

// Reads the input as little-endian numbers; zeros once it runs out.
class Reader {
 public:
  Reader(const std::uint8_t* data, std::size_t size) : data_(data), size_(size) {}
  std::uint64_t next(unsigned bytes) {
    std::uint64_t value = 0;
    for (unsigned i = 0; i < bytes; ++i) value |= static_cast<std::uint64_t>(at_ < size_ ? data_[at_++] : 0) << (8 * i);
    return value;
  }
  // From 1 to 2^24: a byte picks the scale (up to 2^bits), three bytes the value within it.
  std::int64_t dimension() {
    const unsigned bits = static_cast<unsigned>(next(1) % 25);
    const std::uint64_t value = next(3) & ((std::uint64_t{1} << bits) - 1);
    return static_cast<std::int64_t>(value == 0 ? std::uint64_t{1} << bits : value);
  }

 private:
  const std::uint8_t* data_;
  std::size_t size_;
  std::size_t at_ = 0;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  Reader input(data, size);
  iteragpu::DecoderArchitecture a;
  a.architecture = "MistralForCausalLM", a.model_type = "mistral";
  a.layers = static_cast<std::int64_t>(1 + input.next(1) % 8);
  a.hidden_size = input.dimension();
  a.intermediate_size = input.dimension();
  a.attention_heads = input.dimension();
  a.kv_heads = input.dimension();
  a.head_dim = input.dimension();
  a.vocab_size = input.dimension();
  const std::int64_t batch = input.dimension(), context = input.dimension();
  const std::uint64_t dtype_bytes = input.next(1) % 2 ? 4 : 2;
  a.qk_norm = input.next(1) % 2;
  // The tensors' shapes as config.json implies them (the checkpoint reader checks the headers
  // against it): the largest only matter, one layer's worth.
  const std::int64_t q = a.attention_heads * a.head_dim, kv = a.kv_heads * a.head_dim;
  std::vector<iteragpu::DecoderTensor> tensors;
  for (const std::vector<std::int64_t>& shape : std::vector<std::vector<std::int64_t>>{
           {a.vocab_size, a.hidden_size}, {q, a.hidden_size}, {kv, a.hidden_size}, {a.hidden_size, q},
           {a.intermediate_size, a.hidden_size}, {a.hidden_size, a.intermediate_size}})
    tensors.push_back({"t", "", 0, 0, dtype_bytes == 4 ? "F32" : "BF16", shape});

  Recorder recorder;
  try {
    iteragpu::allocate_decoder_weights(recorder, a, tensors, dtype_bytes);
    const auto forwards = iteragpu::decoder_forward_allocations(a, batch, context, dtype_bytes);
    forwards->forward(recorder);  // the prefill
    forwards->forward(recorder);  // one decode step
  } catch (const CountBeyondLimit&) {
    return 0;  // refused: what the predictor turns into a UsageError naming --context
  }
  const iteragpu::AllocatorCounters counters = recorder.model.counters();
  for (const std::uint64_t counter : {counters.allocated_bytes, counters.reserved_bytes, counters.peak_allocated_bytes,
                                      counters.peak_reserved_bytes})
    require(counter < kCountLimit);
  const unsigned __int128 cache = static_cast<unsigned __int128>(batch) * static_cast<std::uint64_t>(a.kv_heads) *
                                  static_cast<std::uint64_t>(context + 1) * static_cast<std::uint64_t>(a.head_dim) *
                                  dtype_bytes * 2 * static_cast<std::uint64_t>(a.layers);
  require(static_cast<unsigned __int128>(counters.allocated_bytes) >= cache);
  return 0;
}
