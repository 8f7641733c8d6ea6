#include "prediction/caching_allocator_model.hpp"

#include <algorithm>
#include <iterator>
#include <stdexcept>

#include "mechanics/checked_count.hpp"

namespace iteragpu {

std::uint64_t CachingAllocatorModel::rounded_size(std::uint64_t requested_bytes) {
  if (requested_bytes < kMinBlockSize) return kMinBlockSize;
  return (requested_bytes + kMinBlockSize - 1) / kMinBlockSize * kMinBlockSize;
}

std::uint64_t CachingAllocatorModel::segment_size(std::uint64_t rounded_bytes) {
  if (rounded_bytes <= kSmallSize) return kSmallBuffer;
  if (rounded_bytes < kMinLargeAlloc) return kLargeBuffer;
  return (rounded_bytes + kRoundLarge - 1) / kRoundLarge * kRoundLarge;
}

CachingAllocatorModel::BlockId CachingAllocatorModel::allocate(std::uint64_t requested_bytes) {
  // Below 2^62, so rounding, segments and every counter stay exact (reserved bytes, and the
  // model addresses laid out up to them, are checked in add_reserved).
  const std::uint64_t size = rounded_size(CheckedCount::checked(requested_bytes));
  const bool small_pool = size <= kSmallSize;
  std::set<FreeKey>& pool = free_blocks(small_pool);

  std::uint64_t address = 0;
  auto fit = pool.lower_bound({size, 0});
  if (fit != pool.end()) {
    address = fit->second;
    pool.erase(fit);
  } else {
    // cudaMalloc of a new segment; it counts as reserved at once.
    const std::uint64_t segment_bytes = segment_size(size);
    if (capacity_ != 0 && counters_.reserved_bytes + segment_bytes > capacity_) {
      release_cached_segments();
      if (counters_.reserved_bytes + segment_bytes > capacity_)
        throw OutOfMemory{segment_bytes, counters_.reserved_bytes};
    }
    address = new_segment_address(segment_bytes);
    blocks_[address] = Block{address, segment_bytes, segments_++, small_pool, false};
    add_reserved(segment_bytes);
  }

  Block& block = blocks_.at(address);
  const std::uint64_t remaining = block.size - size;
  const bool split = small_pool ? remaining >= kMinBlockSize : remaining > kSmallSize;
  if (split) {
    const Block rest{address + size, remaining, block.segment, small_pool, false};
    blocks_[rest.address] = rest;
    pool.insert({rest.size, rest.address});
    block.size = size;
  }
  block.allocated = true;
  add_allocated(block.size);  // the whole block, split or not, as PyTorch counts it
  return address;
}

std::uint64_t CachingAllocatorModel::new_segment_address(std::uint64_t segment_bytes) {
  if (recorded_segment_addresses_.empty() && downward_) {
    // Below kTop and above 0: every segment's bytes, released ones too, stay below 2^62.
    constexpr std::uint64_t kTop = std::uint64_t{1} << 63;
    next_segment_address_ = CheckedCount::checked(next_segment_address_ + segment_bytes);
    return kTop - next_segment_address_;
  }
  if (recorded_segment_addresses_.empty()) {
    const std::uint64_t address = next_segment_address_;
    next_segment_address_ += segment_bytes;
    return address;
  }
  if (segments_ >= recorded_segment_addresses_.size())
    throw std::logic_error("caching allocator model: more segments than the recorded run made");
  const std::uint64_t address = recorded_segment_addresses_[segments_];
  const auto after = blocks_.lower_bound(address);
  const bool overlaps_next = after != blocks_.end() && after->first < address + segment_bytes;
  const bool overlaps_previous =
      after != blocks_.begin() && std::prev(after)->first + std::prev(after)->second.size > address;
  if (overlaps_next || overlaps_previous)
    throw std::logic_error(
        "caching allocator model: a recorded segment overlaps another (a different segment size)");
  return address;
}

// release_cached_blocks: every free block that is a whole segment (no neighbour in its
// segment) goes back to CUDA, from both pools.
void CachingAllocatorModel::release_cached_segments() {
  for (std::set<FreeKey>* pool : {&large_free_, &small_free_}) {
    for (auto it = pool->begin(); it != pool->end();) {
      const auto block = blocks_.find(it->second);
      const bool alone_before = block == blocks_.begin() || std::prev(block)->second.segment != block->second.segment;
      const auto after = std::next(block);
      const bool alone_after = after == blocks_.end() || after->second.segment != block->second.segment;
      if (alone_before && alone_after) {
        counters_.reserved_bytes -= block->second.size;
        blocks_.erase(block);
        it = pool->erase(it);
      } else {
        ++it;
      }
    }
  }
}

void CachingAllocatorModel::free(BlockId id) {
  auto it = blocks_.find(id);
  if (it == blocks_.end() || !it->second.allocated)
    throw std::logic_error("caching allocator model: free of a block that is not allocated");
  Block& block = it->second;
  block.allocated = false;
  counters_.allocated_bytes -= block.size;
  std::set<FreeKey>& pool = free_blocks(block.small_pool);

  // Merge with the next block, then the previous one, when free and in the same segment.
  auto next = std::next(it);
  if (next != blocks_.end() && !next->second.allocated && next->second.segment == block.segment) {
    pool.erase({next->second.size, next->second.address});
    block.size += next->second.size;
    blocks_.erase(next);
  }
  if (it != blocks_.begin()) {
    auto previous = std::prev(it);
    if (!previous->second.allocated && previous->second.segment == block.segment) {
      pool.erase({previous->second.size, previous->second.address});
      previous->second.size += block.size;
      blocks_.erase(it);
      pool.insert({previous->second.size, previous->second.address});
      return;
    }
  }
  pool.insert({block.size, block.address});
}

void CachingAllocatorModel::reset_peaks() {
  counters_.peak_allocated_bytes = counters_.allocated_bytes;
  counters_.peak_reserved_bytes = counters_.reserved_bytes;
}

AllocatorCounters CachingAllocatorModel::counters() const { return counters_; }

void CachingAllocatorModel::add_allocated(std::uint64_t bytes) {
  counters_.allocated_bytes += bytes;
  counters_.peak_allocated_bytes = std::max(counters_.peak_allocated_bytes, counters_.allocated_bytes);
}

void CachingAllocatorModel::add_reserved(std::uint64_t bytes) {
  counters_.reserved_bytes = CheckedCount::checked(counters_.reserved_bytes + bytes);
  counters_.peak_reserved_bytes = std::max(counters_.peak_reserved_bytes, counters_.reserved_bytes);
}

}  // namespace iteragpu
