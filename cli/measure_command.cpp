// `iteragpu measure`: a bounded, reproducible phase-by-phase measurement on one GPU, written
// to a new JSON file. No GPU, no backend or a bad value: exit 2 and no file. Several GPUs
// (--device all, or a list): multi_device_measure.cpp.

#include <signal.h>
#include <unistd.h>

#include <iostream>

#include "command_support.hpp"
#include "commands.hpp"
#include "iteragpu/error.hpp"
#include "iteragpu/multi_device_measurement.hpp"
#include "iteragpu/phase_measurer.hpp"
#include "iteragpu/terminal.hpp"
#include "model_options.hpp"
#include "multi_device_measure.hpp"

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
    "<stem>-cuda<N>.json. One failing GPU does not stop the others.";

// SIGINT/SIGTERM stop the measurement between phases, so no file is written; a second
// signal acts as usual (SA_RESETHAND).
class InterruptHandlers {
 public:
  InterruptHandlers() {
    struct sigaction action {};
    action.sa_handler = [](int) { PhaseMeasurer::request_interrupt(); };
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESETHAND;
    sigaction(SIGINT, &action, &previous_interrupt_);
    sigaction(SIGTERM, &action, &previous_terminate_);
  }
  ~InterruptHandlers() {
    sigaction(SIGINT, &previous_interrupt_, nullptr);
    sigaction(SIGTERM, &previous_terminate_, nullptr);
  }
  InterruptHandlers(const InterruptHandlers&) = delete;
  InterruptHandlers& operator=(const InterruptHandlers&) = delete;

 private:
  struct sigaction previous_interrupt_ {};
  struct sigaction previous_terminate_ {};
};

// One status line on stderr, rewritten in place; only where escape codes may go.
class ProgressLine {
 public:
  ProgressLine() : enabled_(may_use_escape_codes(STDERR_FILENO)) {}
  void show(const std::string& text) {
    if (!enabled_) return;
    std::cerr << "\r\033[K" << text << std::flush;
    shown_ = true;
  }
  void clear() {
    if (shown_) std::cerr << "\r\033[K" << std::flush;
    shown_ = false;
  }
  ~ProgressLine() { clear(); }

 private:
  bool enabled_;
  bool shown_ = false;
};

}  // namespace

int run_measure(const std::vector<std::string>& args) {
  po::options_description options("Options");
  options.add_options()
      ("device", po::value<std::string>()->default_value("cuda:0"),
       "GPU to measure: cuda:N; several, one process each: all, or a list such as cuda:0,cuda:1");
  add_model_options(options);
  options.add_options()
      ("output", po::value<std::string>(), "new JSON file for the result, or the summary with several devices (required; never "
       "overwritten)");
  add_backend_option(options);
  const ParsedOptions parsed = parse_options("measure", options, args);
  if (parsed.help_requested) {
    print_help("measure", kSummary, options);
    return 0;
  }
  const MeasureRequest request = measure_request_from(parsed.values, /*output_required=*/true);
  if (names_several_devices(request.device)) return measure_several_devices(request, parsed.format);

  Measurement measurement;
  {
    InterruptHandlers interrupt_handlers;
    ProgressLine progress;
    progress.show("iteragpu measure: loading the LibTorch backend, preparing " + request.device + "...");
    measurement = PhaseMeasurer().measure(request, [&](const PhaseRow& row, int done, int total) {
      progress.show("iteragpu measure: [" + std::to_string(done) + "/" + std::to_string(total) +
                    "] " + row.phase + (row.repeat > 0 ? " " + std::to_string(row.repeat) : "") +
                    " done");
    });
  }  // the progress line is cleared before the report (or the error) is printed

  const bool json = parsed.format == OutputFormat::kJson;
  const std::string written = "Result written to " + request.output;
  print_report_after_commit(json ? measurement.to_json() : measurement.to_text() + "\n" + written + "\n",
                            "the result was written to " + request.output);
  // stdout holds only the JSON document; say where the file went on stderr.
  if (json) std::cerr << "iteragpu measure: " << written << std::endl;
  return 0;
}

}  // namespace iteragpu::cli
