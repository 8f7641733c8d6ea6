// In-process cost of the two commands that must feel instant: the exact estimate (with its
// JSON) and loading + validating the catalog, then quoting.
#include <benchmark/benchmark.h>

#include "iteragpu/memory_estimator.hpp"
#include "iteragpu/memory_predictor.hpp"
#include "iteragpu/package_calculator.hpp"

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
