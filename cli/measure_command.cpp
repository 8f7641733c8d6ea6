// `iteragpu measure`: a bounded, reproducible phase-by-phase measurement on one GPU, written
// to a new JSON file. No GPU, no backend or a bad value: exit 2 and no file. Several GPUs
// (--device all, or a list): multi_device_measure.cpp.

#include <signal.h>
#include <unistd.h>

#include <charconv>
#include <iostream>

#include "command_support.hpp"
#include "commands.hpp"
#include "iteragpu/error.hpp"
#include "iteragpu/multi_device_measurement.hpp"
#include "iteragpu/phase_measurer.hpp"
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

// A whole number, as written: the core checks ranges and names the option. Anything that
// is not a plain integer (1.5, 1e3, " 1", 0x10) is refused here.
template <typename Integer>
Integer integer_option(const po::variables_map& values, const char* name, Integer fallback) {
  if (!values.count(name)) return fallback;
  const std::string text = option_text(values, name);
  Integer value{};
  const char* end = text.data() + text.size();
  const auto [stop, error] = std::from_chars(text.data(), end, value);
  if (!text.empty() && stop == end && error == std::errc::result_out_of_range)
    throw UsageError(name, "'" + text + "' is out of range; expected a whole number such as 16");
  if (text.empty() || stop != end || error != std::errc())
    throw UsageError(name, "not a whole number; expected digits only, such as 16");
  return value;
}

// The only place where options become a MeasureRequest; absent options keep its defaults.
MeasureRequest measure_request_from(const po::variables_map& values) {
  MeasureRequest request;
  request.device = option_text(values, "device");
  request.batch = integer_option(values, "batch", request.batch);
  request.context = integer_option(values, "context", request.context);
  request.width = integer_option(values, "width", request.width);
  request.hidden = integer_option(values, "hidden", request.hidden);
  if (values.count("hidden") && request.hidden == 0)
    throw UsageError("hidden", "0 is not a size; expected a positive integer (omit it for 4 x width)");
  request.dtype = option_text(values, "dtype");
  request.warmup = integer_option(values, "warmup", request.warmup);
  request.repeats = integer_option(values, "repeats", request.repeats);
  request.seed = integer_option(values, "seed", request.seed);
  request.output = option_text(values, "output");
  request.backend_path = option_text(values, "backend");
  if (!values.count("output"))
    throw UsageError("output", "required: the name of a new JSON file for the result");
  return request;
}

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

// One status line on stderr, rewritten in place; only when stderr is a terminal.
class ProgressLine {
 public:
  ProgressLine() : enabled_(isatty(STDERR_FILENO) == 1) {}
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
       "GPU to measure: cuda:N; several, one process each: all, or a list such as cuda:0,cuda:1")
      ("batch", po::value<std::string>(), "input batch size (default 1)")
      ("context", po::value<std::string>(), "positions per input; no attention, no KV cache (default 16)")
      ("width", po::value<std::string>(), "model width (default 64)")
      ("hidden", po::value<std::string>(), "hidden size of the MLP (default 4 x width)")
      ("dtype", po::value<std::string>()->default_value("float32"),
       "weights and inputs: float32, float16 or bfloat16")
      ("warmup", po::value<std::string>(), "warm-up forwards, measured together (default 1; 0 = none)")
      ("repeats", po::value<std::string>(), "measured warm forwards, one row each (default 2)")
      ("seed", po::value<std::string>(), "seed of the model and input initialisation (default 20260924)")
      ("output", po::value<std::string>(), "new JSON file for the result, or the summary with several devices (required; never "
       "overwritten)")
      ("backend", po::value<std::string>(),
       "LibTorch backend plugin to load (default: ITERAGPU_BACKEND, else "
       "libiteragpu_torch_backend.so beside the executable, else ../lib/iteragpu/)");
  const ParsedOptions parsed = parse_options("measure", options, args);
  if (parsed.help_requested) {
    print_help("measure", kSummary, options);
    return 0;
  }
  const MeasureRequest request = measure_request_from(parsed.values);
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
  print_report(json ? measurement.to_json() : measurement.to_text() + "\n" + written + "\n");
  // stdout holds only the JSON document; say where the file went on stderr.
  if (json) std::cerr << "iteragpu measure: " << written << std::endl;
  return 0;
}

}  // namespace iteragpu::cli
