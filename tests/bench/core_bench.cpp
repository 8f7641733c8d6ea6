// In-process cost of the two commands that must feel instant: the exact estimate (with its
// JSON) and loading + validating the catalog, then quoting.
#include <benchmark/benchmark.h>

#include "iteragpu/memory_estimator.hpp"
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
