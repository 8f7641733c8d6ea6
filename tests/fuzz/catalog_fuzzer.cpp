// The package catalog: the CSV reader and the catalog's validation, through Catalog::load.
#include "fuzz_support.hpp"
#include "iteragpu/error.hpp"
#include "iteragpu/package_calculator.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const iteragpu::fuzzing::MemoryFile file(data, size);
  for (bool full_grid : {false, true}) {
    try {
      const iteragpu::Catalog catalog = iteragpu::Catalog::load(file.path(), full_grid);
      (void)catalog.to_json();
    } catch (const iteragpu::Error&) {  // a refusal with a message: the expected outcome
    }
  }
  return 0;
}
