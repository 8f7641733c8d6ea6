// The caching-allocator model against the rules of PyTorch's CUDACachingAllocator.cpp:
// rounding, pools and segment sizes, best fit, splitting, merging and the peaks.
#include <gtest/gtest.h>

#include <stdexcept>

#include "prediction/caching_allocator_model.hpp"

namespace iteragpu::testing {
namespace {

constexpr std::uint64_t KiB = 1024;
constexpr std::uint64_t MiB = 1024 * 1024;
using Model = CachingAllocatorModel;

TEST(CachingAllocatorModel, RoundsEveryRequestUpToA512ByteMultiple) {
  EXPECT_EQ(Model::rounded_size(0), 512u);
  EXPECT_EQ(Model::rounded_size(1), 512u);
  EXPECT_EQ(Model::rounded_size(512), 512u);
  EXPECT_EQ(Model::rounded_size(513), 1024u);
  EXPECT_EQ(Model::rounded_size(16 * MiB + 1), 16 * MiB + 512);
}

TEST(CachingAllocatorModel, ChoosesTheSegmentSizeByPool) {
  EXPECT_EQ(Model::segment_size(512), 2 * MiB);         // small pool
  EXPECT_EQ(Model::segment_size(1 * MiB), 2 * MiB);     // 1 MiB is still small
  EXPECT_EQ(Model::segment_size(1 * MiB + 512), 20 * MiB);
  EXPECT_EQ(Model::segment_size(10 * MiB - 512), 20 * MiB);
  EXPECT_EQ(Model::segment_size(10 * MiB), 10 * MiB);   // ≥ 10 MiB: rounded to 2 MiB
  EXPECT_EQ(Model::segment_size(10 * MiB + 512), 12 * MiB);
}

TEST(CachingAllocatorModel, PacksSmallRequestsIntoTwoMiBSegments) {
  Model model;
  for (int i = 0; i < 4; ++i) model.allocate(512 * KiB);
  EXPECT_EQ(model.counters().reserved_bytes, 2 * MiB);
  EXPECT_EQ(model.counters().allocated_bytes, 2 * MiB);
  model.allocate(1);
  EXPECT_EQ(model.counters().reserved_bytes, 4 * MiB);
  EXPECT_EQ(model.counters().allocated_bytes, 2 * MiB + 512);
}

TEST(CachingAllocatorModel, SplitsATwentyMiBSegmentBetweenMidSizedRequests) {
  Model model;
  model.allocate(3 * MiB);
  model.allocate(3 * MiB);
  EXPECT_EQ(model.counters().reserved_bytes, 20 * MiB);
  EXPECT_EQ(model.counters().allocated_bytes, 6 * MiB);
}

TEST(CachingAllocatorModel, HandsOutTheWholeBlockWhenTheLargeRemainderIsAtMostOneMiB) {
  Model model;
  model.allocate(11 * MiB + 512 * KiB);  // a 12 MiB segment; 512 KiB left is not split off
  EXPECT_EQ(model.counters().reserved_bytes, 12 * MiB);
  EXPECT_EQ(model.counters().allocated_bytes, 12 * MiB);
}

TEST(CachingAllocatorModel, MergesFreedNeighboursSoALargerRequestFits) {
  Model model;
  const auto first = model.allocate(3 * MiB);
  const auto second = model.allocate(3 * MiB);
  model.free(first);
  model.free(second);  // merges with the free block before it and the 14 MiB after it
  EXPECT_EQ(model.counters().allocated_bytes, 0u);
  model.allocate(19 * MiB);
  EXPECT_EQ(model.counters().reserved_bytes, 20 * MiB);  // no new segment
}

TEST(CachingAllocatorModel, TakesTheSmallestFreeBlockThatFits) {
  Model model;
  const auto big = model.allocate(16 * MiB);     // its own 16 MiB segment
  const auto medium = model.allocate(12 * MiB);  // its own 12 MiB segment
  model.free(big);
  model.free(medium);
  model.allocate(11 * MiB);  // best fit: the 12 MiB block, handed out whole
  EXPECT_EQ(model.counters().allocated_bytes, 12 * MiB);
  model.allocate(15 * MiB);  // the 16 MiB block, whole again
  EXPECT_EQ(model.counters().allocated_bytes, 28 * MiB);
  EXPECT_EQ(model.counters().reserved_bytes, 28 * MiB);
}

TEST(CachingAllocatorModel, DoesNotMergeAcrossSegments) {
  Model model;
  const auto a = model.allocate(12 * MiB);
  const auto b = model.allocate(12 * MiB);
  model.free(a);
  model.free(b);
  model.allocate(20 * MiB);  // two adjacent free 12 MiB segments do not make 24 MiB
  EXPECT_EQ(model.counters().reserved_bytes, 44 * MiB);
}

TEST(CachingAllocatorModel, PeaksAreMaximaSinceTheLastReset) {
  Model model;
  const auto a = model.allocate(4 * MiB);
  model.free(a);
  AllocatorCounters counters = model.counters();
  EXPECT_EQ(counters.peak_allocated_bytes, 4 * MiB);
  EXPECT_EQ(counters.peak_reserved_bytes, 20 * MiB);
  model.reset_peaks();
  counters = model.counters();
  EXPECT_EQ(counters.peak_allocated_bytes, 0u);
  EXPECT_EQ(counters.peak_reserved_bytes, 20 * MiB);
}

TEST(CachingAllocatorModel, RefusesToFreeABlockTwice) {
  Model model;
  const auto a = model.allocate(1024);
  model.free(a);
  EXPECT_THROW(model.free(a), std::logic_error);
}

}  // namespace
}  // namespace iteragpu::testing
