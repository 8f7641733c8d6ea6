#pragma once
// Which rental packages' GPU holds a checkpoint at a batch and context, before renting: the
// predicted peak reserved bytes of `measure --model` (MemoryPredictor) plus the GPU memory
// the process holds outside the caching allocator (the CUDA context and libraries), against
// each GPU model's memory (data/gpu-memory.csv); and, with a decode rate measured on that
// GPU model, the cost per million generated tokens. One GPU per model instance: splitting a
// model over several GPUs is not modelled.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "iteragpu/measure_configuration.hpp"
#include "iteragpu/memory_predictor.hpp"
#include "iteragpu/package_calculator.hpp"
#include "iteragpu/results_table.hpp"

namespace iteragpu {

// One row of data/gpu-memory.csv: a catalog GPU model's memory.
struct GpuMemory {
  std::string gpu;                 // the catalog's key ("h200")
  std::string compute_capability;  // "9.0"; empty for a GPU the predictor does not model (ROCm)
  // What memory_bytes is, from the first word of memory_source: the total the CUDA runtime
  // reports (cudaMemGetInfo, LibTorch's total_memory), measured on this project's runs
  // ("measured:") or published with its source ("reported:"); or ("nominal:") a figure the
  // runtime's total cannot exceed, the vendor's nominal size in its larger reading (24 GB as
  // 24 GiB), which can only show that a run does not fit.
  enum class Figure { kMeasured, kReported, kNominal };
  std::uint64_t memory_bytes = 0;
  std::string memory_source;
  Figure memory_figure = Figure::kNominal;
  std::uint64_t outside_allocator_bytes = 0;  // the process's GPU memory outside the allocator
  std::string outside_allocator_source;       // "measured: ..." or "allowance: ..."
  int line = 0;

  // Whether memory_bytes is the total the runtime reports on this GPU model (else a bound).
  bool memory_is_runtime_total() const { return memory_figure != Figure::kNominal; }
  bool outside_allocator_measured() const { return outside_allocator_source.rfind("measured:", 0) == 0; }
};

// Reads the table strictly (DataFileError "file:line: reason"): a memory source starts
// "measured:", "reported:" or "nominal:", figures stay below 2^62 bytes. The shipped one by default.
std::vector<GpuMemory> load_gpu_memory(const std::string& path);
std::string shipped_gpu_memory_path();

struct PackageFitRequest {
  MeasureConfiguration configuration;  // model, batch, context, new_tokens, dtype, warmup, repeats
  std::optional<std::string> days;     // the package duration priced, "3", "7" or "30"; none: no prices
  // A checkpoint measurement (measure --model) of the same model and configuration: its
  // decode rate prices the tokens on the GPU model it was measured on.
  std::string measurement_file;
};

// A million tokens' price on a package at a rate measured on its GPU model (--measurement):
// generated tokens (a generation run's decode rate) or trained tokens (a fine-tuning run's).
struct PackageTokensCost {
  std::string measured_gpu;  // the GPU the rate was measured on ("NVIDIA H100 80GB HBM3")
  bool trained = false;      // trained tokens per second (measure --train), else generated
  MillionTokensPrice price;
};

struct PackageFit {
  // kFits only where everything is known: the needed bytes exact, the memory the runtime's
  // own total, and (where the footprint outside the allocator is an allowance, not measured on
  // that GPU model) 2 % of it to spare. kDoesNotFit where the needed bytes, exact or a lower
  // bound, pass the memory (or the bound a nominal figure sets). Anything else is kUncertain.
  enum class Verdict { kFits, kDoesNotFit, kUncertain, kNotAssessed };
  GpuMemory memory;
  std::string gpu_name;
  Verdict verdict = Verdict::kNotAssessed;
  std::uint64_t predicted_peak_reserved_bytes = 0;
  std::uint64_t required_bytes = 0;  // predicted peak reserved + outside the allocator
  // Whether a caveat of the prediction leaves the peak unchecked on this GPU model: "" (exact
  // by the rules), "at least" (it can only be higher: the attention backend outside compute
  // capability 9.0) or "may differ" (either way: allocator settings in the environment).
  std::string required_unchecked;
  std::int64_t headroom_bytes = 0;   // memory − required (negative: short by that much); both below 2^62
  std::string reason;                // why the verdict (always set)
  std::optional<Quote> quote;        // with days: one lot's price for that duration
  std::optional<PackageTokensCost> tokens_cost;  // with a rate measured on this GPU model
};

// "fits", "does not fit", "uncertain", "not assessed": the text and JSON name of a verdict.
const char* verdict_text(PackageFit::Verdict verdict);

struct PackageFitReport {
  PackageFitRequest request;
  std::string heading;  // the checkpoint and configuration, as predict names them
  std::string catalog_path, gpu_memory_path;
  std::vector<PackageFit> packages;  // one per catalog GPU model, in catalog order
  std::vector<std::string> caveats;  // of the predictions used

  std::string to_json() const;  // schema "iteragpu.package-fit"
  std::string to_text() const;
};

// Predicts once per compute capability and judges every GPU model of `calculator`'s catalog.
// UsageError for a configuration without a model or a measurement that is not of it.
PackageFitReport fit_packages(const PackageFitRequest& request, const PackageCalculator& calculator,
                              const std::vector<GpuMemory>& gpu_memory, const std::string& gpu_memory_path);

}  // namespace iteragpu
