// In-process cost of the commands that must feel instant: the exact estimate (with its
// JSON), the estimate of a 100 GB checkpoint from its headers, loading + validating the
// catalog, then quoting, and predict.
#include <benchmark/benchmark.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "iteragpu/memory_estimator.hpp"
#include "iteragpu/memory_predictor.hpp"
#include "iteragpu/package_calculator.hpp"
#include "process_io.hpp"
#include "safetensors_writer.hpp"

namespace {

void BM_EstimateSeedExample(benchmark::State& state) {
  const iteragpu::MemoryEstimator estimator;
  for (auto _ : state) {
    auto estimate = estimator.estimate({"7000000000", "16", "4"});
    benchmark::DoNotOptimize(estimate);
  }
}
BENCHMARK(BM_EstimateSeedExample);

void BM_EstimateSeedExampleToJson(benchmark::State& state) {
  const iteragpu::MemoryEstimator estimator;
  for (auto _ : state) {
    std::string json = estimator.estimate({"7000000000", "16", "4"}).to_json();
    benchmark::DoNotOptimize(json);
  }
}
BENCHMARK(BM_EstimateSeedExampleToJson);

void BM_EstimateHundredDigitCount(benchmark::State& state) {
  const iteragpu::MemoryEstimator estimator;
  const std::string parameters(100, '7');
  for (auto _ : state) {
    auto estimate = estimator.estimate({parameters, "4", "0.5"});
    benchmark::DoNotOptimize(estimate);
  }
}
BENCHMARK(BM_EstimateHundredDigitCount);

void BM_LoadShippedCatalog(benchmark::State& state) {
  const std::string path = std::string(ITERAGPU_DATA_DIR) + "/tarifs-forfaits.csv";
  for (auto _ : state) {
    auto catalog = iteragpu::Catalog::load(path, true);
    benchmark::DoNotOptimize(catalog);
  }
}
BENCHMARK(BM_LoadShippedCatalog);

void BM_QuoteWithUnitCost(benchmark::State& state) {
  const iteragpu::PackageCalculator calculator(
      iteragpu::Catalog::load(std::string(ITERAGPU_DATA_DIR) + "/tarifs-forfaits.csv", true));
  for (auto _ : state) {
    auto quote = calculator.quote({"b200", "7", "2", std::string("3")});
    benchmark::DoNotOptimize(quote);
  }
}
BENCHMARK(BM_QuoteWithUnitCost);

}  // namespace

// `iteragpu predict`'s core: every phase row of the seed's larger command (9 rows) through
// the caching-allocator model, on the table for compute capability 9.0.
void BM_PredictSeedLargeCommand(benchmark::State& state) {
  iteragpu::MeasureRequest request;
  request.batch = "2";
  request.context = "128";
  request.width = "1024";
  request.warmup = "3";
  request.repeats = "5";
  const auto target = iteragpu::PredictionTarget::from_table(9, 0);
  for (auto _ : state) benchmark::DoNotOptimize(iteragpu::MemoryPredictor::predict(iteragpu::MeasureConfiguration::parse(request), target));
}
BENCHMARK(BM_PredictSeedLargeCommand);

// The same with 1,000 warm repeats: the cost per predicted row.
void BM_PredictThousandRepeats(benchmark::State& state) {
  iteragpu::MeasureRequest request;
  request.repeats = "1000";
  const auto target = iteragpu::PredictionTarget::from_table(9, 0);
  for (auto _ : state) benchmark::DoNotOptimize(iteragpu::MemoryPredictor::predict(iteragpu::MeasureConfiguration::parse(request), target));
}
BENCHMARK(BM_PredictThousandRepeats);

// --- estimate --checkpoint: only headers are read -----------------------------------------
//
// A Llama-70B-shaped bf16 checkpoint cut to 56 layers (hidden 8192, 8 KV heads of 128, MLP
// 28672, vocabulary 128256): 507 tensors, 100,036,001,792 bytes, written as sparse files
// (the header, then a hole), once as one file and once as an index with 5 GB shards as
// Hugging Face saves them. The same layout with every dimension divided by 256 (1.5 MB) is
// the small comparison: same tensor count, so any difference in time would come from the
// data size. The counter bytes_read is what the estimate read through read/pread
// (/proc/self/io rchar): the headers and the index, never the data.
namespace {

using iteragpu::testing::TensorSpec;

std::vector<TensorSpec> llama_shaped_layout(std::uint64_t divisor, int layers = 56) {
  const std::uint64_t hidden = 8192 / divisor, kv = 1024 / divisor, mlp = 28672 / divisor,
                      vocab = 128256 / divisor;
  std::vector<TensorSpec> tensors{{"model.embed_tokens.weight", "BF16", {vocab, hidden}}};
  for (int layer = 0; layer < layers; ++layer) {
    const std::string p = "model.layers." + std::to_string(layer) + ".";
    tensors.push_back({p + "input_layernorm.weight", "BF16", {hidden}});
    tensors.push_back({p + "self_attn.q_proj.weight", "BF16", {hidden, hidden}});
    tensors.push_back({p + "self_attn.k_proj.weight", "BF16", {kv, hidden}});
    tensors.push_back({p + "self_attn.v_proj.weight", "BF16", {kv, hidden}});
    tensors.push_back({p + "self_attn.o_proj.weight", "BF16", {hidden, hidden}});
    tensors.push_back({p + "post_attention_layernorm.weight", "BF16", {hidden}});
    tensors.push_back({p + "mlp.gate_proj.weight", "BF16", {mlp, hidden}});
    tensors.push_back({p + "mlp.up_proj.weight", "BF16", {mlp, hidden}});
    tensors.push_back({p + "mlp.down_proj.weight", "BF16", {hidden, mlp}});
  }
  tensors.push_back({"model.norm.weight", "BF16", {hidden}});
  tensors.push_back({"lm_head.weight", "BF16", {vocab, hidden}});
  return tensors;
}

// A sparse file must occupy no more than its header: refuse to fill a disk where holes are
// not supported.
bool is_sparse(const std::string& path) {
  struct stat info {};
  return ::stat(path.c_str(), &info) == 0 && static_cast<std::uint64_t>(info.st_blocks) * 512 < (64u << 20);
}

class SparseCheckpoints {
 public:
  SparseCheckpoints() {
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/iteragpu-checkpoint-bench-XXXXXX";
    if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("cannot create " + pattern);
    dir_ = pattern;
    small_ = add_file("small.safetensors", llama_shaped_layout(256));
    huge_ = add_file("huge.safetensors", llama_shaped_layout(1));

    sharded_ = add_shards(dir_, llama_shaped_layout(1));
    shard_count_ = last_shard_count_;
    // The whole Llama-70B shape (80 layers), sharded, with its config.json: what predict
    // --model reads.
    decoder_ = dir_ + "/llama-70b";
    if (::mkdir(decoder_.c_str(), 0700) != 0) throw std::runtime_error("cannot create " + decoder_);
    add_shards(decoder_, llama_shaped_layout(1, 80));
    const std::string config = decoder_ + "/config.json";
    iteragpu::testing::write_bytes(
        config, "{\"architectures\": [\"LlamaForCausalLM\"], \"model_type\": \"llama\", \"hidden_size\": 8192, "
                "\"intermediate_size\": 28672, \"num_hidden_layers\": 80, \"num_attention_heads\": 64, "
                "\"num_key_value_heads\": 8, \"vocab_size\": 128256, \"max_position_embeddings\": 8192, "
                "\"rms_norm_eps\": 1e-05, \"tie_word_embeddings\": false, \"torch_dtype\": \"bfloat16\", "
                "\"rope_theta\": 500000.0}\n");
    files_.push_back(config);
  }
  ~SparseCheckpoints() {
    for (const auto& file : files_) ::unlink(file.c_str());
    ::rmdir(decoder_.c_str());
    ::rmdir(dir_.c_str());
  }
  const std::string& small() const { return small_; }
  const std::string& huge() const { return huge_; }
  const std::string& sharded() const { return sharded_; }
  const std::string& decoder() const { return decoder_; }
  std::size_t shard_count() const { return shard_count_; }

 private:
  // Shards of at most 5 GB, tensors in order, and the index that maps them, in `dir`.
  std::string add_shards(const std::string& dir, const std::vector<TensorSpec>& tensors) {
    std::vector<std::vector<TensorSpec>> shards(1);
    std::uint64_t filled = 0, total = 0;
    for (const auto& tensor : tensors) {
      const std::uint64_t bytes = iteragpu::testing::tensor_bytes(tensor);
      if (filled + bytes > 5'000'000'000ULL && !shards.back().empty()) shards.emplace_back(), filled = 0;
      shards.back().push_back(tensor);
      filled += bytes;
      total += bytes;
    }
    std::string index = "{\"metadata\": {\"total_size\": " + std::to_string(total) + "}, \"weight_map\": {";
    for (std::size_t i = 0; i < shards.size(); ++i) {
      char name[64];
      std::snprintf(name, sizeof name, "model-%05zu-of-%05zu.safetensors", i + 1, shards.size());
      add_file(dir + "/" + name, shards[i]);
      for (const auto& tensor : shards[i])
        index += std::string(index.back() == '{' ? "" : ", ") + "\"" + tensor.name + "\": \"" + name + "\"";
    }
    last_shard_count_ = shards.size();
    const std::string path = dir + "/model.safetensors.index.json";
    iteragpu::testing::write_bytes(path, index + "}}\n");
    files_.push_back(path);
    return path;
  }

  std::string add_file(const std::string& name, const std::vector<TensorSpec>& tensors) {
    const std::string path = name.find('/') == std::string::npos ? dir_ + "/" + name : name;
    files_.push_back(path);
    iteragpu::testing::write_sparse_safetensors(path, tensors);
    if (!is_sparse(path)) throw std::runtime_error(path + " is not sparse on this filesystem");
    return path;
  }
  std::string dir_, small_, huge_, sharded_, decoder_;
  std::vector<std::string> files_;
  std::size_t shard_count_ = 0, last_shard_count_ = 0;
};

const SparseCheckpoints& sparse_checkpoints() {
  static const SparseCheckpoints checkpoints;
  return checkpoints;
}

// What one estimate reads, less what reading /proc/self/io itself costs.
double bytes_read_by(const std::function<void()>& work) {
  using iteragpu::testing::bytes_read_so_far;
  const std::uint64_t a = bytes_read_so_far().value_or(0), b = bytes_read_so_far().value_or(0);
  work();
  const std::uint64_t c = bytes_read_so_far().value_or(0);
  return static_cast<double>((c - b) - (b - a));
}

void run_checkpoint_estimate(benchmark::State& state, const std::string& path, double shards) {
  const iteragpu::MemoryEstimator estimator;
  iteragpu::CheckpointEstimate estimate;
  for (auto _ : state) {
    estimate = estimator.estimate_checkpoint({path, "0", false});
    benchmark::DoNotOptimize(estimate);
  }
  state.counters["tensors"] = static_cast<double>(estimate.tensor_count);
  state.counters["shards"] = shards;
  state.counters["weight_GB"] = estimate.weights.gb.approx();
  state.counters["bytes_read"] =
      bytes_read_by([&] { benchmark::DoNotOptimize(estimator.estimate_checkpoint({path, "0", false})); });
}

void BM_CheckpointSmall(benchmark::State& state) {
  run_checkpoint_estimate(state, sparse_checkpoints().small(), 1);
}
BENCHMARK(BM_CheckpointSmall)->Unit(benchmark::kMicrosecond);

void BM_Checkpoint100GBSingleFile(benchmark::State& state) {
  run_checkpoint_estimate(state, sparse_checkpoints().huge(), 1);
}
BENCHMARK(BM_Checkpoint100GBSingleFile)->Unit(benchmark::kMicrosecond);

void BM_Checkpoint100GBSharded(benchmark::State& state) {
  run_checkpoint_estimate(state, sparse_checkpoints().sharded(),
                          static_cast<double>(sparse_checkpoints().shard_count()));
}
BENCHMARK(BM_Checkpoint100GBSharded)->Unit(benchmark::kMicrosecond);

// predict --model for the whole Llama-70B shape, sharded (30 shards and an index): the
// config, the headers, and every row of a 4 × 4,096 run with 16 new tokens, warm-up 1,
// repeats 2 (70 rows) on the caching-allocator model.
void BM_PredictCheckpoint70BSharded(benchmark::State& state) {
  iteragpu::MeasureRequest request;
  request.model = sparse_checkpoints().decoder();
  request.batch = "4";
  request.context = "4096";
  const auto target = iteragpu::PredictionTarget::from_table(9, 0);
  for (auto _ : state)
    benchmark::DoNotOptimize(
        iteragpu::MemoryPredictor::predict(iteragpu::MeasureConfiguration::parse(request), target));
}
BENCHMARK(BM_PredictCheckpoint70BSharded)->Unit(benchmark::kMillisecond);

}  // namespace
