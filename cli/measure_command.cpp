// `iteragpu measure`: a bounded, reproducible phase-by-phase measurement on one GPU, or on
// several at once, each in its own worker process (the core's MeasurementRunner), written to
// a new JSON file. No GPU, no backend or a bad value: exit 2 and no file.

#include <iostream>

#include "command_support.hpp"
#include "commands.hpp"
#include "iteragpu/error.hpp"
#include "iteragpu/measurement_runner.hpp"
#include "iteragpu/output_files.hpp"
#include "model_options.hpp"
#include "runner_session.hpp"

namespace iteragpu::cli {
namespace {

constexpr const char* kSummary =
    "Measures Linear(width->hidden) -> GELU -> Linear(hidden->width) on one GPU, phase by\n"
    "phase (model_load, inputs, cold_forward, warmup, warm_forward x repeats): this process's\n"
    "allocator counters and host wall-clock times. The result goes to a new JSON file.\n"
    "Example: iteragpu measure --device cuda:0 --batch 1 --context 16 --width 64 --dtype float32\n"
    "         --warmup 1 --repeats 2 --output mesures-petit-essai.json\n"
    "Next step: --batch 2 --context 128 --width 1024 --warmup 3 --repeats 5; grow one\n"
    "dimension at a time and watch free memory (iteragpu environment).\n"
    "Several GPUs: --device all (or cuda:0,cuda:1) measures each in its own process, at the\n"
    "same time; --output is then a summary file and each GPU's result goes beside it, as\n"
    "<stem>-cuda<N>.json. One failing GPU does not stop the others.\n"
    "A real checkpoint: --model DIR runs a local Llama, Mistral, Qwen2 or Qwen3 checkpoint as\n"
    "transformers runs it (SDPA attention, a growing KV cache): weights_load, inputs, then per\n"
    "sequence a prefill of --batch x --context random token ids and --new-tokens decode steps;\n"
    "the first sequence is cold, then --warmup warm-up sequences and --repeats warm ones.";

}  // namespace

int run_measure(const std::vector<std::string>& args) {
  po::options_description options("Options");
  options.add_options()
      ("device", po::value<std::string>()->default_value("cuda:0"),
       "GPU to measure: cuda:N; several, one process each: all, or a list such as cuda:0,cuda:1");
  add_model_options(options);
  add_checkpoint_options(options);
  options.add_options()
      ("output", po::value<std::string>(), "new JSON file for the result, or the summary with several devices (required; never "
       "overwritten)");
  add_backend_option(options);
  const ParsedOptions parsed = parse_options("measure", options, args);
  if (parsed.help_requested) {
    print_help("measure", kSummary, options);
    return 0;
  }
  const MeasureConfiguration configuration = measure_configuration_from(parsed.values, /*output_required=*/true);
  const bool several = names_several_devices(configuration.device);

  const bool json = parsed.format == OutputFormat::kJson;

  Measurement measurement;
  MeasurementSummary summary;
  {
    InterruptHandlers interrupt_handlers;
    ProgressLine progress;
    RunnerOptions options;
    options.cancel = [] { return InterruptHandlers::received(); };
    int devices_done = 0;
    std::size_t device_count = 0;
    options.planned = [&](const std::vector<DeviceTarget>& targets) {
      device_count = targets.size();
      if (!progress.enabled()) return;
      std::string names;
      for (const DeviceTarget& target : targets) names += (names.empty() ? "" : ", ") + target.device;
      std::cerr << "iteragpu measure: measuring " << names << " at the same time, one worker each..." << std::endl;
    };
    options.progress = [&](const std::string& device, const PhaseRow& row, int done, int total) {
      if (!several) {
        progress.show("iteragpu measure: [" + std::to_string(done) + "/" + std::to_string(total) + "] " +
                      row.phase + (row.repeat > 0 ? " " + std::to_string(row.repeat) : "") + " done");
      } else if (done == total && progress.enabled()) {  // one line per GPU, as each finishes
        std::cerr << "iteragpu measure: " << device << " done [" << ++devices_done << "/" << device_count
                  << "]" << std::endl;
      }
    };
    if (!several) progress.show("iteragpu measure: starting a measurement worker for " + configuration.device + "...");
    const MeasurementRunner runner(options);
    if (several) {
      summary = runner.measure_devices(configuration);
    } else {
      measurement = runner.measure(configuration);
      note_output_committed();  // the worker published the result: the work is done
    }
  }  // the progress line is cleared before the report (or the error) is printed

  if (several) {
    for (const DeviceOutcome& outcome : summary.devices)
      if (!outcome.ok())
        std::cerr << "iteragpu measure: " << outcome.device << " failed (exit " << outcome.exit_code
                  << "): " << outcome.error << std::endl;
    const std::string written = "Summary written to " + configuration.output;
    print_report_after_commit(json ? summary.to_json() : summary.to_text() + "\n" + written + "\n", written);
    if (json) std::cerr << "iteragpu measure: " << written << std::endl;  // stdout holds only the JSON
    return summary.exit_code();
  }
  const std::string written = "Result written to " + configuration.output;
  print_report_after_commit(json ? measurement.to_json() : measurement.to_text() + "\n" + written + "\n",
                            "the result was written to " + configuration.output);
  // stdout holds only the JSON document; say where the file went on stderr.
  if (json) std::cerr << "iteragpu measure: " << written << std::endl;
  return 0;
}

}  // namespace iteragpu::cli
