// `iteragpu sweep`: the largest value of one dimension whose peak reserved memory stays
// under a budget, found by measurements (the core's MemorySweep), each in its own worker.

#include <iostream>

#include "command_support.hpp"
#include "commands.hpp"
#include "iteragpu/error.hpp"
#include "iteragpu/memory_sweep.hpp"
#include "iteragpu/package_fit.hpp"
#include "iteragpu/printable_text.hpp"
#include "model_options.hpp"
#include "runner_session.hpp"

namespace iteragpu::cli {
namespace {

constexpr const char* kSummary =
    "Grows one dimension of Linear(width->hidden) -> GELU -> Linear(hidden->width) from the\n"
    "given configuration (x2 each step), then bisects to the largest value whose peak\n"
    "reserved memory stays under the budget; the value above it is measured too. Every\n"
    "point is a whole measurement in its own worker process; an out-of-memory point is a\n"
    "data point. Where the predictor applies it proposes the boundary first.\n"
    "With --model, a checkpoint's batch, context or new-tokens grows instead, and --package\n"
    "gives the budget of that package's GPU (its memory less the footprint outside the\n"
    "allocator, data/gpu-memory.csv).\n"
    "Examples: iteragpu sweep --device cuda:0 --vary batch --width 1024 --budget 50%\n"
    "          --output sweep-batch.json\n"
    "          iteragpu sweep --model ./Llama-3-8B --vary context --batch 4 --package h100-sxm";

// The budget of a catalog GPU: its memory less the footprint outside the allocator.
std::uint64_t package_budget_bytes(const std::string& gpu) {
  const std::vector<GpuMemory> table = load_gpu_memory(shipped_gpu_memory_path());
  std::string known;
  for (const GpuMemory& row : table) {
    if (row.gpu == gpu) {
      if (row.compute_capability.empty() || row.outside_allocator_bytes >= row.memory_bytes)
        throw UsageError("package", gpu + ": " + row.outside_allocator_source);
      return row.memory_bytes - row.outside_allocator_bytes;
    }
    known += (known.empty() ? "" : ", ") + row.gpu;
  }
  throw UsageError("package", "'" + printable(gpu) + "' is not a GPU of the memory table; expected one of " + known);
}

}  // namespace

int run_sweep(const std::vector<std::string>& args) {
  po::options_description options("Options");
  options.add_options()
      ("device", po::value<std::string>()->default_value("cuda:0"), "GPU to measure: cuda:N")
      ("vary", po::value<std::string>(),
       "the dimension to grow: batch, context, width or hidden; with --model batch, context or "
       "new-tokens (required)")
      ("budget", po::value<std::string>()->default_value("50%"),
       "peak reserved bytes allowed: a percentage of the free memory the runtime reports at the "
       "first point (50%), or a number of bytes")
      ("package", po::value<std::string>(),
       "instead of --budget: the memory of that catalog GPU (h100-sxm) less the process's "
       "footprint outside the allocator, from data/gpu-memory.csv");
  add_model_options(options);
  add_checkpoint_options(options);
  options.add_options()
      ("output", po::value<std::string>(), "new JSON file for the sweep (never overwritten; optional)");
  add_backend_option(options);
  const ParsedOptions parsed = parse_options("sweep", options, args);
  if (parsed.help_requested) {
    print_help("sweep", kSummary, options);
    return 0;
  }
  SweepRequest request;
  request.start = measure_configuration_from(parsed.values, /*output_required=*/false);
  request.start.output.clear();
  request.vary = option_text(parsed.values, "vary");
  request.budget = option_text(parsed.values, "budget");
  if (parsed.values.count("package")) {
    if (!parsed.values["budget"].defaulted())
      throw UsageError("package", "gives the budget; leave --budget out");
    request.package = option_text(parsed.values, "package");
    request.budget = std::to_string(package_budget_bytes(request.package));
  }
  request.output = output_option(parsed.values);

  SweepResult result;
  {
    InterruptHandlers interrupt_handlers;
    ProgressLine progress;
    std::string point_text;  // the last point measured
    RunnerOptions runner_options;
    runner_options.cancel = [] { return InterruptHandlers::received(); };
    runner_options.progress = [&](const std::string&, const PhaseRow& row, int done, int total) {
      progress.show("iteragpu sweep: " + point_text + "measuring [" + std::to_string(done) + "/" +
                    std::to_string(total) + "] " + row.phase);
    };
    const MemorySweep sweep(MeasurementRunner(runner_options), [&](const SweepPoint& point, int measurements) {
      point_text = "#" + std::to_string(measurements) + " " + request.vary + " " + std::to_string(point.value) +
                   ": " + point.outcome + "; ";
      progress.show("iteragpu sweep: " + point_text);
    });
    progress.show("iteragpu sweep: starting a measurement worker for " + request.start.device + "...");
    result = sweep.run(request);
  }

  const bool json = parsed.format == OutputFormat::kJson;
  if (request.output.empty()) {
    print_report(json ? result.to_json() : result.to_text());
    return 0;
  }
  const std::string written = "Sweep written to " + request.output;
  print_report_after_commit(json ? result.to_json() : result.to_text() + "\n" + written + "\n", written);
  if (json) std::cerr << "iteragpu sweep: " << written << std::endl;
  return 0;
}

}  // namespace iteragpu::cli
