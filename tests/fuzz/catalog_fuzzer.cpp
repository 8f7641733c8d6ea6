// The package catalog and the GPU memory table beside it (data/gpu-memory.csv): the CSV
// reader and each table's validation, through Catalog::load and load_gpu_memory.
#include "fuzz_support.hpp"
#include "iteragpu/error.hpp"
#include "iteragpu/package_calculator.hpp"
#include "iteragpu/package_fit.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const iteragpu::fuzzing::MemoryFile file(data, size);
  for (bool full_grid : {false, true}) {
    try {
      const iteragpu::Catalog catalog = iteragpu::Catalog::load(file.path(), full_grid);
      (void)catalog.to_json();
    } catch (const iteragpu::Error&) {  // a refusal with a message: the expected outcome
    }
  }
  try {
    (void)iteragpu::load_gpu_memory(file.path());
  } catch (const iteragpu::Error&) {
  }
  return 0;
}
