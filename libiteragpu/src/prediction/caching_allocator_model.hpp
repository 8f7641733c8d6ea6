#pragma once
// A model of PyTorch's CUDA caching allocator (c10/cuda/CUDACachingAllocator.cpp, default
// settings: no expandable segments, no power-of-two rounding, no split-size limit, one
// stream), exact enough to give the same allocated and reserved counters and peaks as the
// real one for the same sequence of allocations and frees. Nothing here touches a GPU.

#include <cstdint>
#include <map>
#include <set>
#include <utility>
#include <vector>

#include "iteragpu/backend.hpp"

namespace iteragpu {

class CachingAllocatorModel {
 public:
  // PyTorch's constants (CUDACachingAllocator.cpp).
  static constexpr std::uint64_t kMinBlockSize = 512;          // every size rounds up to this
  static constexpr std::uint64_t kSmallSize = 1 << 20;         // ≤ 1 MiB: the small pool
  static constexpr std::uint64_t kSmallBuffer = 2 << 20;       // small pool segments: 2 MiB
  static constexpr std::uint64_t kMinLargeAlloc = 10 << 20;    // 1–10 MiB requests...
  static constexpr std::uint64_t kLargeBuffer = 20 << 20;      // ...get 20 MiB segments
  static constexpr std::uint64_t kRoundLarge = 2 << 20;        // larger ones round up to 2 MiB

  using BlockId = std::uint64_t;

  // New segments are laid out one after another. Which of two equal free blocks the best fit
  // takes depends on where cudaMalloc put their segments, which a prediction cannot know: in
  // the H200's traces CUDA put most new segments below the previous ones. Laid out upward,
  // every recorded checkpoint cell but one is exact (docs/commands/predict.md); downward, that one
  // is and two others are not.
  CachingAllocatorModel() = default;
  // Laid out downward instead: each new segment below the previous ones. The fine-tuning
  // prediction runs both orders and keeps the larger counters (Workload::segment_layout).
  struct Downward {};
  explicit CachingAllocatorModel(Downward) : downward_(true) {}
  // Replaying a recorded run: the i-th new segment at the i-th address cudaMalloc returned.
  explicit CachingAllocatorModel(std::vector<std::uint64_t> recorded_segment_addresses)
      : recorded_segment_addresses_(std::move(recorded_segment_addresses)) {}

  // Thrown by allocate() where cudaMalloc would fail even after the cache is emptied.
  struct OutOfMemory {
    std::uint64_t requested_bytes;  // the segment asked for
    std::uint64_t reserved_bytes;   // reserved after the cache was emptied
  };
  // The bytes cudaMalloc can hand this process (the GPU's total less what the process holds
  // outside the allocator); 0: unlimited, as if the GPU were endless. When a new segment
  // would pass it, the model does what PyTorch's malloc does with the default settings
  // (release_available_cached_blocks does nothing without a split-size limit): it frees every
  // cached segment that holds no allocated block (release_cached_blocks), then tries again,
  // and throws OutOfMemory when that fails too.
  void set_capacity(std::uint64_t bytes) { capacity_ = bytes; }

  // The size a request is rounded to: at least 512 bytes, a multiple of 512.
  static std::uint64_t rounded_size(std::uint64_t requested_bytes);
  // The segment cudaMalloc is asked for when no cached block fits a rounded request.
  static std::uint64_t segment_size(std::uint64_t rounded_bytes);

  // Best-fit from the request's pool (smallest free block that fits, lowest address among
  // equals), else a new segment; the block is split when the remainder is worth keeping
  // (small pool: ≥ 512 bytes; large pool: > 1 MiB), otherwise the whole block is handed out
  // and counted as allocated.
  BlockId allocate(std::uint64_t requested_bytes);
  // Returns the block to its pool, merged with free neighbours of the same segment.
  // Segments are never released (the measurement never empties the cache).
  void free(BlockId block);

  void reset_peaks();
  AllocatorCounters counters() const;

 private:
  struct Block {
    std::uint64_t address = 0;  // a model address: segments laid out one after another
    std::uint64_t size = 0;
    std::uint64_t segment = 0;
    bool small_pool = false;
    bool allocated = false;
  };
  using FreeKey = std::pair<std::uint64_t, std::uint64_t>;  // (size, address): best fit

  std::uint64_t new_segment_address(std::uint64_t segment_bytes);
  void release_cached_segments();
  void add_allocated(std::uint64_t bytes);
  void add_reserved(std::uint64_t bytes);
  std::set<FreeKey>& free_blocks(bool small_pool) { return small_pool ? small_free_ : large_free_; }

  std::map<std::uint64_t, Block> blocks_;  // by address: neighbours are adjacent entries
  std::set<FreeKey> small_free_, large_free_;
  std::uint64_t next_segment_address_ = 0;  // upward: the next one; downward: the bytes laid so far
  bool downward_ = false;
  std::vector<std::uint64_t> recorded_segment_addresses_;
  std::uint64_t segments_ = 0;
  std::uint64_t capacity_ = 0;
  AllocatorCounters counters_;
};

}  // namespace iteragpu
