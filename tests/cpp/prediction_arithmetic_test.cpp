// Every product a prediction forms from configuration values, driven to its limit: the
// widest shapes config.json's bounds accept (head_dim 2^24 with 512 query and KV heads, on
// sparse files) at batches and contexts up to the options' bounds. Each prediction is either
// refused in one line naming --context, or exact: every counter below 2^62 and at least the
// KV cache computed here in 128-bit integers (a wrapped count would be smaller).

#include <gtest/gtest.h>

#include <sys/stat.h>

#include <cstdint>
#include <string>
#include <vector>

#include "expect_error.hpp"
#include "iteragpu/error.hpp"
#include "iteragpu/memory_predictor.hpp"
#include "mechanics/checked_count.hpp"
#include "prediction/caching_allocator_model.hpp"
#include "process_runner.hpp"
#include "safetensors_writer.hpp"

namespace iteragpu {
namespace {

using testing::TempDir;
using testing::TensorSpec;

struct WideShape {
  std::uint64_t layers = 1, hidden = 2, intermediate = 2, heads = 512, kv_heads = 512, head_dim = 1 << 24, vocab = 2;
};

// A MistralForCausalLM checkpoint of `shape` (bfloat16), its tensors a hole in the file.
void write_wide_checkpoint(const std::string& folder, const WideShape& s) {
  ASSERT_EQ(::mkdir(folder.c_str(), 0755), 0);
  testing::write_file(
      folder + "/config.json",
      "{\"architectures\": [\"MistralForCausalLM\"], \"model_type\": \"mistral\", \"hidden_size\": " +
          std::to_string(s.hidden) + ", \"intermediate_size\": " + std::to_string(s.intermediate) +
          ", \"num_hidden_layers\": " + std::to_string(s.layers) + ", \"num_attention_heads\": " +
          std::to_string(s.heads) + ", \"num_key_value_heads\": " + std::to_string(s.kv_heads) +
          ", \"head_dim\": " + std::to_string(s.head_dim) + ", \"vocab_size\": " + std::to_string(s.vocab) +
          ", \"max_position_embeddings\": 16777216, \"sliding_window\": null, \"torch_dtype\": \"bfloat16\"}\n");
  std::vector<TensorSpec> tensors = {{"model.embed_tokens.weight", "BF16", {s.vocab, s.hidden}}};
  for (std::uint64_t i = 0; i < s.layers; ++i) {
    const std::string p = "model.layers." + std::to_string(i) + ".";
    tensors.push_back({p + "self_attn.q_proj.weight", "BF16", {s.heads * s.head_dim, s.hidden}});
    tensors.push_back({p + "self_attn.k_proj.weight", "BF16", {s.kv_heads * s.head_dim, s.hidden}});
    tensors.push_back({p + "self_attn.v_proj.weight", "BF16", {s.kv_heads * s.head_dim, s.hidden}});
    tensors.push_back({p + "self_attn.o_proj.weight", "BF16", {s.hidden, s.heads * s.head_dim}});
    tensors.push_back({p + "mlp.gate_proj.weight", "BF16", {s.intermediate, s.hidden}});
    tensors.push_back({p + "mlp.up_proj.weight", "BF16", {s.intermediate, s.hidden}});
    tensors.push_back({p + "mlp.down_proj.weight", "BF16", {s.hidden, s.intermediate}});
    tensors.push_back({p + "input_layernorm.weight", "BF16", {s.hidden}});
    tensors.push_back({p + "post_attention_layernorm.weight", "BF16", {s.hidden}});
  }
  tensors.push_back({"model.norm.weight", "BF16", {s.hidden}});
  tensors.push_back({"lm_head.weight", "BF16", {s.vocab, s.hidden}});
  testing::write_sparse_safetensors(folder + "/model.safetensors", tensors);
}

MeasureConfiguration request(const std::string& model, std::uint64_t batch, std::uint64_t context) {
  MeasureRequest m;
  m.device = "";
  m.model = model;
  m.batch = std::to_string(batch);
  m.context = std::to_string(context);
  m.workload_options["new-tokens"] = "1";
  m.warmup = "0";
  m.repeats = "1";
  return MeasureConfiguration::parse(m);
}

class PredictionArithmeticTest : public ::testing::Test {
 protected:
  TempDir dir_;
};

// The three cases (batch 128 at 4,194,304, 8,388,607 and 8,388,608 positions), and
// every power of two and the number below it, at batches 1, 128 and 2^24.
TEST_F(PredictionArithmeticTest, TheWidestShapeIsRefusedOrExactAtEveryBatchAndContext) {
  const WideShape shape;
  const std::string model = dir_.file("wide");
  write_wide_checkpoint(model, shape);
  int refused = 0, exact = 0;
  for (const std::uint64_t batch : {std::uint64_t{1}, std::uint64_t{128}, std::uint64_t{1} << 24}) {
    std::vector<std::uint64_t> contexts;
    for (unsigned bits = 0; bits < 24; ++bits) {
      contexts.push_back(std::uint64_t{1} << bits);
      if (bits > 1) contexts.push_back((std::uint64_t{1} << bits) - 1);
    }
    contexts.push_back((std::uint64_t{1} << 24) - 1);  // the longest prompt one new token leaves
    for (const std::uint64_t context : contexts) {
      SCOPED_TRACE("batch " + std::to_string(batch) + ", context " + std::to_string(context));
      MeasureConfiguration configuration;
      try {
        configuration = request(model, batch, context);
      } catch (const UsageError& error) {
        // Refused before any product: batch × context token ids past the workload's bound.
        EXPECT_EQ(error.field(), "batch") << error.what();
        continue;
      }
      // The keys of one layer after the decode step: batch × KV heads × positions × head_dim × 2 bytes.
      const unsigned __int128 keys = static_cast<unsigned __int128>(batch) * shape.kv_heads * (context + 1) *
                                     shape.head_dim * 2;
      try {
        const MemoryPrediction prediction =
            MemoryPredictor::predict(configuration, PredictionTarget::from_table(9, 0));
        ++exact;
        EXPECT_LT(keys, static_cast<unsigned __int128>(kCountLimit));
        for (const PhasePrediction& row : prediction.phases)
          for (const std::uint64_t counter : {row.end.allocated_bytes, row.end.reserved_bytes,
                                              row.end.peak_allocated_bytes, row.end.peak_reserved_bytes})
            EXPECT_LT(counter, kCountLimit);
        const PhasePrediction& decode = prediction.phases.back();
        ASSERT_EQ(decode.phase, "decode");
        EXPECT_GE(static_cast<unsigned __int128>(decode.end.allocated_bytes), 2 * shape.layers * keys);
      } catch (const UsageError& error) {
        ++refused;
        const std::string message = error.what();
        EXPECT_EQ(error.field(), "context");
        EXPECT_NE(message.find("2^62 bytes"), std::string::npos) << message;
        EXPECT_EQ(message.find('\n'), std::string::npos);
      }
    }
  }
  // Both sides of the limit are reached.
  EXPECT_GT(refused, 10);
  EXPECT_GT(exact, 10);
  for (const std::uint64_t context : {4194304u, 8388607u, 8388608u})
    EXPECT_NE(testing::message_of<UsageError>([&] {
                MemoryPredictor::predict(request(model, 128, context), PredictionTarget::from_table(9, 0));
              }).find("--context: " + std::to_string(context) + " with batch 128"),
              std::string::npos);
}

// Many layers multiply the KV cache's total, not one tensor: the total is refused too.
TEST_F(PredictionArithmeticTest, ATotalPastTheLimitIsRefusedWhereNoTensorIs) {
  WideShape shape;
  shape.layers = 64;
  const std::string model = dir_.file("deep-wide");
  write_wide_checkpoint(model, shape);
  // One layer's keys: 2^7 × 2^9 × 2^15 × 2^24 × 2 = 2^56 bytes; 64 layers of keys and values: 2^63.
  const std::uint64_t context = (std::uint64_t{1} << 15) - 1;
  EXPECT_NE(testing::message_of<UsageError>([&] {
              MemoryPredictor::predict(request(model, 128, context), PredictionTarget::from_table(9, 0));
            }).find("2^62 bytes"),
            std::string::npos);
  // With 2 layers the same context is exact.
  shape.layers = 2;
  const std::string shallow = dir_.file("shallow-wide");
  write_wide_checkpoint(shallow, shape);
  const MemoryPrediction prediction =
      MemoryPredictor::predict(request(shallow, 128, context), PredictionTarget::from_table(9, 0));
  EXPECT_GE(prediction.phases.back().end.allocated_bytes, std::uint64_t{1} << 58);
}

TEST(CachingAllocatorModelLimit, ARequestOrAReserveOf2To62BytesIsRefusedNeverWrapped) {
  CachingAllocatorModel model;
  EXPECT_THROW(model.allocate(~std::uint64_t{0}), CountBeyondLimit);
  EXPECT_THROW(model.allocate(kCountLimit), CountBeyondLimit);
  EXPECT_THROW(model.allocate(kCountLimit - 1), CountBeyondLimit);  // rounds up to 2^62
  const std::uint64_t half = kCountLimit / 2;
  model.allocate(half);
  EXPECT_THROW(model.allocate(half), CountBeyondLimit);  // reserved would reach 2^62
  EXPECT_EQ(model.counters().reserved_bytes, half);
}

TEST(CheckedCountLimit, ProductsAndSumsAreExactBelow2To62AndRefusedFromIt) {
  const CheckedCount two_to_31 = std::uint64_t{1} << 31, two_to_30 = std::uint64_t{1} << 30;
  EXPECT_EQ((two_to_31 * two_to_30).value(), std::uint64_t{1} << 61);
  EXPECT_THROW(two_to_31 * two_to_31, CountBeyondLimit);                        // 2^62
  EXPECT_THROW(CheckedCount(std::uint64_t{1} << 32) * (std::uint64_t{1} << 32), CountBeyondLimit);  // wraps in 64 bits
  const CheckedCount two_to_61 = std::uint64_t{1} << 61;
  EXPECT_EQ((two_to_61 + (two_to_61.value() - 1)).value(), kCountLimit - 1);
  EXPECT_THROW(two_to_61 + two_to_61, CountBeyondLimit);
  EXPECT_THROW(CheckedCount::checked(kCountLimit), CountBeyondLimit);
}

}  // namespace
}  // namespace iteragpu
