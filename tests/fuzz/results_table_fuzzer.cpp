// The raw-results table: the CSV reader and every row's validation, then the cost report.
#include "fuzz_support.hpp"
#include "iteragpu/error.hpp"
#include "iteragpu/package_calculator.hpp"
#include "iteragpu/results_table.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const iteragpu::PackageCalculator calculator;  // the shipped catalog
  const iteragpu::fuzzing::MemoryFile file(data, size);
  try {
    const auto table = iteragpu::ResultsTable::load(file.path(), calculator.catalog(), false);
    (void)iteragpu::report_results(table, calculator).to_json();
  } catch (const iteragpu::Error&) {
  }
  return 0;
}
