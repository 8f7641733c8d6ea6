// In-process cost of the two commands that must feel instant: the exact estimate (with its
// JSON) and loading + validating the catalog, then quoting.
#include <benchmark/benchmark.h>

#include "iteragpu/memory_estimator.hpp"
#include "iteragpu/memory_predictor.hpp"
#include "iteragpu/package_calculator.hpp"
#include "safetensors_writer.hpp"

#include <cstdio>

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

// A 105.6 GiB checkpoint (720 tensors, a sparse file: the data is a hole) against a small one
// of the same shape: only the headers are read, so both cost about the same.
std::string checkpoint_file(int width) {
  std::vector<iteragpu::testing::TensorSpec> tensors;
  const auto w = static_cast<std::uint64_t>(width);
  for (int layer = 0; layer < 80; ++layer) {
    const std::string base = "model.layers." + std::to_string(layer) + ".";
    for (const char* name : {"q_proj", "k_proj", "v_proj", "o_proj"}) tensors.push_back({base + name, "BF16", {w, w}});
    tensors.push_back({base + "gate_proj", "BF16", {4 * w, w}});
    tensors.push_back({base + "up_proj", "BF16", {4 * w, w}});
    tensors.push_back({base + "down_proj", "BF16", {w, 4 * w}});
    tensors.push_back({base + "input_layernorm", "F32", {w}});
    tensors.push_back({base + "post_attention_layernorm", "F32", {w}});
  }
  const std::string path = "/tmp/iteragpu-bench-" + std::to_string(width) + ".safetensors";
  iteragpu::testing::write_sparse_safetensors(path, tensors);
  return path;
}

void BM_CheckpointEstimate(benchmark::State& state) {
  const std::string path = checkpoint_file(static_cast<int>(state.range(0)));
  const iteragpu::MemoryEstimator estimator;
  iteragpu::CheckpointRequest request;
  request.checkpoint = path;
  for (auto _ : state) {
    auto estimate = estimator.estimate_checkpoint(request);
    benchmark::DoNotOptimize(estimate);
  }
  std::remove(path.c_str());
}
BENCHMARK(BM_CheckpointEstimate)->Arg(64)->Arg(6656)->Unit(benchmark::kMicrosecond);

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
  for (auto _ : state) benchmark::DoNotOptimize(iteragpu::MemoryPredictor::predict(request, target));
}
BENCHMARK(BM_PredictSeedLargeCommand);

// The same with 1,000 warm repeats: the cost per predicted row.
void BM_PredictThousandRepeats(benchmark::State& state) {
  iteragpu::MeasureRequest request;
  request.repeats = "1000";
  const auto target = iteragpu::PredictionTarget::from_table(9, 0);
  for (auto _ : state) benchmark::DoNotOptimize(iteragpu::MemoryPredictor::predict(request, target));
}
BENCHMARK(BM_PredictThousandRepeats);
