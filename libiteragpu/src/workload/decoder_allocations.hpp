#pragma once
// A checkpoint's run as PyTorch's caching allocator sees it, for the predictor: every request
// and free that the ops of libiteragpu/backend_torch/decoder_module.cpp (transformers' forward)
// make, in the same order. The two files change together.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "iteragpu/decoder_architecture.hpp"
#include "workload/workload.hpp"

namespace iteragpu {

// Each tensor's bytes on the GPU: its elements × the run's dtype bytes, in load order.
std::vector<std::uint64_t> decoder_tensor_bytes(const std::vector<DecoderTensor>& tensors, std::uint64_t dtype_bytes);

// weights_load: transformers' caching_allocator_warmup block (every tensor's bytes in the run's
// dtype, freed at once), each tensor in load order, then the rotary buffers inv_freq and
// original_inv_freq (float32).
void allocate_decoder_weights(AllocationRecorder& allocator, const DecoderArchitecture& architecture,
                              const std::vector<DecoderTensor>& tensors, std::uint64_t dtype_bytes);

// The prefill and decode steps of one sequence after another: a step is a prefill when the
// cache is empty (at the start, and after release_output frees the cache and the last token).
std::unique_ptr<ForwardAllocations> decoder_forward_allocations(const DecoderArchitecture& architecture,
                                                                std::int64_t batch, std::int64_t context,
                                                                std::uint64_t dtype_bytes);

// The rules above, in words, for a prediction's text and JSON.
std::vector<std::string> decoder_allocation_rules();

}  // namespace iteragpu
