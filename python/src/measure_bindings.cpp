// Measurements: the core's MeasurementRunner (a fresh worker process per measurement, the
// default of iteragpu.measure()), PhaseMeasurer in this process (in_process=True), and the
// values they return. A Measurement pickles through its own JSON.

#include <pybind11/stl.h>

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "bindings.hpp"
#include "iteragpu/error.hpp"
#include "iteragpu/measurement_runner.hpp"
#include "iteragpu/memory_sweep.hpp"
#include "iteragpu/phase_measurer.hpp"

namespace iteragpu::python {
namespace {

void register_counters_and_rows(py::module_& m) {
  py::class_<AllocatorCounters>(m, "AllocatorCounters", R"pbdoc(
    This process's caching-allocator counters for the selected GPU. Allocated is part of
    reserved (never add them); the two peaks are separate maxima (never subtract them).
  )pbdoc")
      .def_readonly("allocated_bytes", &AllocatorCounters::allocated_bytes)
      .def_readonly("reserved_bytes", &AllocatorCounters::reserved_bytes)
      .def_readonly("peak_allocated_bytes", &AllocatorCounters::peak_allocated_bytes,
                    "Peak allocated during the phase (end counters only).")
      .def_readonly("peak_reserved_bytes", &AllocatorCounters::peak_reserved_bytes,
                    "Peak reserved during the phase (end counters only).")
      .def("__repr__",
           [](const AllocatorCounters& c) {
             return "AllocatorCounters(allocated_bytes=" + std::to_string(c.allocated_bytes) +
                    ", reserved_bytes=" + std::to_string(c.reserved_bytes) +
                    ", peak_allocated_bytes=" + std::to_string(c.peak_allocated_bytes) +
                    ", peak_reserved_bytes=" + std::to_string(c.peak_reserved_bytes) + ")";
           })
      // Predictions pickle whole (their rows hold these); a Measurement through its JSON.
      .def(py::pickle(
          [](const AllocatorCounters& c) {
            return py::make_tuple(c.allocated_bytes, c.reserved_bytes, c.peak_allocated_bytes,
                                  c.peak_reserved_bytes);
          },
          [](const py::tuple& t) {
            return AllocatorCounters{t[0].cast<std::uint64_t>(), t[1].cast<std::uint64_t>(),
                                     t[2].cast<std::uint64_t>(), t[3].cast<std::uint64_t>()};
          }));

  py::class_<PhaseRow>(m, "PhaseRow", "One phase (or one warm repeat) of a measurement.")
      .def_readonly("phase", &PhaseRow::phase,
                    "model_load | inputs | cold_forward | warmup | warm_forward; a checkpoint's: "
                    "weights_load | inputs | prefill | decode")
      .def_readonly("repeat", &PhaseRow::repeat,
                    "1-based for warm_forward and a checkpoint's warm-up and warm sequences, 0 otherwise.")
      .def_readonly("sequence", &PhaseRow::sequence,
                    "A checkpoint's rows: 'cold', 'warmup' or 'warm'; '' for the synthetic MLP.")
      .def_readonly("step", &PhaseRow::step, "A checkpoint's rows: 0 for the prefill, then the decode step; else None.")
      .def_readonly("forwards", &PhaseRow::forwards, "Forward passes inside the phase.")
      .def_readonly("host_seconds", &PhaseRow::host_seconds,
                    "Host wall clock, overhead and synchronization included (not kernel time).")
      .def_readonly("gpu_event_seconds", &PhaseRow::gpu_event_seconds,
                    "Time between GPU events around the phase's work, or None.")
      .def_readonly("baseline", &PhaseRow::baseline, "AllocatorCounters before the phase.")
      .def_readonly("end", &PhaseRow::end,
                    "AllocatorCounters after the phase, with the peaks during it.")
      .def("__repr__",
           [](const PhaseRow& r) {
             return "PhaseRow(phase='" + r.phase + "', repeat=" + std::to_string(r.repeat) +
                    ", host_seconds=" + py::repr(py::float_(r.host_seconds)).cast<std::string>() +
                    ")";
           });
}

void register_checkpoint_records(py::module_& m) {
  py::class_<DecoderArchitecture>(m, "DecoderArchitecture", "A checkpoint's config.json, as the decoder runs it.")
      .def_readonly("architecture", &DecoderArchitecture::architecture)
      .def_readonly("model_type", &DecoderArchitecture::model_type)
      .def_readonly("layers", &DecoderArchitecture::layers)
      .def_readonly("hidden_size", &DecoderArchitecture::hidden_size)
      .def_readonly("intermediate_size", &DecoderArchitecture::intermediate_size)
      .def_readonly("attention_heads", &DecoderArchitecture::attention_heads)
      .def_readonly("kv_heads", &DecoderArchitecture::kv_heads)
      .def_readonly("head_dim", &DecoderArchitecture::head_dim)
      .def_readonly("vocab_size", &DecoderArchitecture::vocab_size)
      .def_readonly("rope_type", &DecoderArchitecture::rope_type)
      .def_readonly("qkv_bias", &DecoderArchitecture::qkv_bias)
      .def_readonly("qk_norm", &DecoderArchitecture::qk_norm)
      .def_readonly("tie_word_embeddings", &DecoderArchitecture::tie_word_embeddings)
      .def_readonly("dtype", &DecoderArchitecture::dtype, "The checkpoint's own dtype.");
  py::class_<CheckpointRecord>(m, "CheckpointRecord", "The checkpoint a measurement ran, as its file records it.")
      .def_readonly("directory", &CheckpointRecord::directory)
      .def_readonly("architecture", &CheckpointRecord::architecture, "DecoderArchitecture.")
      .def_readonly("tensors", &CheckpointRecord::tensors)
      .def_readonly("parameter_count", &CheckpointRecord::parameter_count)
      .def_readonly("parameter_bytes", &CheckpointRecord::parameter_bytes, "Bytes in the files.");
  py::class_<DecoderRun>(m, "DecoderRun", "What a checkpoint's run produced besides the counters.")
      .def_readonly("attention_backend", &DecoderRun::attention_backend, "The SDPA kernel PyTorch chose.")
      .def_readonly("first_sequence_tokens", &DecoderRun::first_sequence_tokens,
                    "Batch row 0's greedy tokens in the cold sequence.")
      .def_readonly("last_logits_sha256", &DecoderRun::last_logits_sha256)
      .def_readonly("device_used_bytes", &DecoderRun::device_used_bytes,
                    "cudaMemGetInfo total - free at the end (CUDA context and libraries included), or None.")
      .def_readonly("time_to_first_token_seconds", &DecoderRun::time_to_first_token_seconds)
      .def_readonly("prefill_tokens_per_second", &DecoderRun::prefill_tokens_per_second)
      .def_readonly("decode_tokens_per_second", &DecoderRun::decode_tokens_per_second);
}

void register_measurement(py::module_& m) {
  register_checkpoint_records(m);
  py::class_<Measurement> measurement(m, "Measurement", R"pbdoc(
    A phase-by-phase memory and time measurement on one GPU, with the environment it ran in.
    Counters are this process's caching allocator on the selected GPU only.
  )pbdoc");
  measurement.def_readonly("environment", &Measurement::environment, "EnvironmentReport.")
      .def_readonly("configuration", &Measurement::configuration, "The MeasureConfiguration measured.")
      .def_readonly("model", &Measurement::model, "The SyntheticModel measured (unused for a checkpoint).")
      .def_readonly("checkpoint", &Measurement::checkpoint, "CheckpointRecord of a --model measurement, or None.")
      .def_property_readonly(
          "decoder_run",
          [](const Measurement& self) -> std::optional<DecoderRun> {
            if (const DecoderRun* run = self.decoder_run()) return *run;
            return std::nullopt;
          },
          "DecoderRun of a --model measurement, or None.")
      .def_readonly("phases", &Measurement::phases, "PhaseRow list, in order.")
      .def_readonly("timing", &Measurement::timing,
                    "TimingSummary: spread of the warm repeats' host and GPU event times, with "
                    "warnings when a time cannot be trusted.")
      .def_readonly("prediction", &Measurement::prediction,
                    "MemoryPrediction made before the GPU was touched, one PhasePrediction per "
                    "PhaseRow in the same order; None for a ROCm build.")
      .def(
          "predicted_row", [](const Measurement& x, std::size_t index) -> std::optional<PhasePrediction> {
            const PhasePrediction* row = x.predicted_row(index);
            return row ? std::optional<PhasePrediction>(*row) : std::nullopt;
          },
          py::arg("index"), "The prediction for phases[index], or None.")
      .def_property_readonly("exact_predicted_counters", &Measurement::exact_predicted_counters,
                             "How many of the six counters of every row equal their prediction.")
      .def_property_readonly("heading", &Measurement::heading,
                             "What was measured, as a prediction's heading says it: the model, "
                             "dtype and input.")
      .def(
          "plot", [](py::object self) { return call_display("plot_measurement", self); },
          R"pbdoc(
            Plots the phases with matplotlib (imported now, not at ``import iteragpu``):
            allocated and reserved at baseline and end, and the peaks, per phase; and the
            host time of each phase.

            Returns:
                matplotlib.figure.Figure
          )pbdoc")
      .def("__repr__",
           [](const Measurement& x) {
             return "Measurement(device='" + x.configuration.device + "', phases=" +
                    std::to_string(x.phases.size()) + ")";
           })
      .def_static("from_json", &Measurement::from_json, py::arg("text"), py::arg("source") = "measurement",
                  "A measurement from its JSON document. Raises DataFileError when it is not one.")
      .def_static(
          "read", [](py::handle path) { return Measurement::read(required_path_keyword(path, "path")); },
          py::arg("path"), "A measurement file (schema iteragpu.measurement), checked in full.")
      // Pickled as its own JSON document: one format for files, workers and pickles.
      .def(py::pickle([](const Measurement& x) { return x.to_json(); },
                      [](const std::string& json) { return Measurement::from_json(json, "pickled measurement"); }));
  add_report_methods(measurement, "measurement_html");
}

// Between the core and Python while measurements run with the GIL released: calls the
// progress callback, notices Ctrl-C (a kernel interrupt), and keeps the Python exception
// either raised, so the core can stop its work cleanly (writing nothing) before it is
// raised again. With several devices, rows_done and rows_total count every device's rows.
class PythonCallbacks {
 public:
  explicit PythonCallbacks(py::object callback, py::object point_callback = py::none())
      : callback_(std::move(callback)), point_callback_(std::move(point_callback)) {}

  // Returns true when Python asked to stop: a KeyboardInterrupt (the core's Interrupted
  // follows, itself a KeyboardInterrupt) or another exception raised by a signal handler.
  bool stop_requested() {
    py::gil_scoped_acquire gil;
    if (error_) return true;
    if (PyErr_CheckSignals() == 0) return false;
    py::error_already_set raised;  // fetches and clears it
    if (!raised.matches(PyExc_KeyboardInterrupt)) error_ = std::move(raised);
    return true;
  }

  // False once a Python exception is waiting to be raised: the work must stop.
  bool progress(const std::string& device, const PhaseRow& row, int rows_done, int rows_total) {
    py::gil_scoped_acquire gil;
    if (error_) return false;
    if (callback_.is_none()) return true;
    progress_[device] = {rows_done, rows_total};
    int done = 0, total = 0;
    for (const auto& entry : progress_) {
      done += entry.second.first;
      total += entry.second.second;
    }
    try {
      callback_(row, done, total);
    } catch (py::error_already_set& error) {
      error_ = std::move(error);
      return false;
    }
    return true;
  }

  // A sweep's point, once measured.
  void point(const SweepPoint& point, int measurements) {
    py::gil_scoped_acquire gil;
    if (point_callback_.is_none() || error_) return;
    progress_.clear();  // each point's rows count on their own
    try {
      point_callback_(point, measurements);
    } catch (py::error_already_set& error) {
      error_ = std::move(error);
    }
  }

  // In-process measurements: the same, through PhaseMeasurer's own interruption.
  PhaseProgress in_process_progress() {
    return [this](const PhaseRow& row, int rows_done, int rows_total) {
      progress("", row, rows_done, rows_total);
      if (stop_requested()) PhaseMeasurer::request_interrupt();
    };
  }

  RunnerOptions runner_options() {
    RunnerOptions options;
    options.progress = [this](const std::string& device, const PhaseRow& row, int done, int total) {
      // Thrown so that the runner tells the worker to stop at once, before it can publish;
      // run() then raises the Python exception itself.
      if (!progress(device, row, done, total)) throw Interrupted("stopped by the progress callback");
    };
    options.cancel = [this] { return stop_requested(); };
    return options;
  }

  // The callback's (or a signal handler's) exception wins over the Interrupted it caused.
  void rethrow_python_error() {
    if (error_) {
      py::error_already_set error = std::move(*error_);
      error_.reset();
      throw error;
    }
  }

  // Runs `work` without the GIL, then raises the Python exception that stopped it, if any.
  template <typename Work>
  auto run(Work&& work) {
    std::optional<decltype(work())> result;
    try {
      py::gil_scoped_release no_gil;
      result.emplace(work());
    } catch (const Error&) {
      rethrow_python_error();
      throw;
    }
    rethrow_python_error();
    return std::move(*result);
  }

 private:
  py::object callback_;
  py::object point_callback_;
  std::optional<py::error_already_set> error_;
  std::map<std::string, std::pair<int, int>> progress_;
};

void register_summary(py::module_& m) {
  py::class_<DeviceResultFigures>(m, "DeviceResultFigures", "A few figures of one GPU's measurement.")
      .def_readonly("gpu_name", &DeviceResultFigures::gpu_name)
      .def_readonly("warm_forward_host_seconds_median", &DeviceResultFigures::warm_forward_host_seconds_median)
      .def_readonly("model_load_allocated_bytes", &DeviceResultFigures::model_load_allocated_bytes)
      .def_readonly("peak_allocated_bytes_max", &DeviceResultFigures::peak_allocated_bytes_max);
  py::class_<DeviceOutcome>(m, "DeviceOutcome", "What became of one GPU's worker.")
      .def_readonly("device", &DeviceOutcome::device)
      .def_readonly("exit_code", &DeviceOutcome::exit_code, "The worker's; 128 + N when signal N ended it.")
      .def_readonly("result_file", &DeviceOutcome::result_file, "'' when no result was written.")
      .def_readonly("error", &DeviceOutcome::error, "The worker's error message; '' on success.")
      .def_readonly("figures", &DeviceOutcome::figures, "DeviceResultFigures, or None.")
      .def_readonly("measurement", &DeviceOutcome::measurement, "The Measurement, or None.")
      .def_property_readonly("ok", &DeviceOutcome::ok)
      .def("__repr__", [](const DeviceOutcome& o) {
        return "DeviceOutcome(device='" + o.device + "', ok=" + (o.ok() ? "True" : "False") + ")";
      });
  py::class_<MeasurementSummary> summary(m, "MeasurementSummary", R"pbdoc(
    Several GPUs measured at the same time, one worker process each (device="all" or a list).
  )pbdoc");
  summary.def_readonly("configuration", &MeasurementSummary::configuration)
      .def_readonly("devices", &MeasurementSummary::devices, "DeviceOutcome list, in device order.")
      .def_readonly("interrupted", &MeasurementSummary::interrupted)
      .def_property_readonly("complete", &MeasurementSummary::complete)
      .def_property_readonly("exit_code", &MeasurementSummary::exit_code);
  add_report_methods(summary, "summary_html");
}

void register_sweep(py::module_& m) {
  py::class_<SweepPoint>(m, "SweepPoint", "One measured point of a sweep.")
      .def_readonly("value", &SweepPoint::value)
      .def_readonly("outcome", &SweepPoint::outcome, "fits | over budget | out of memory | beyond bounds")
      .def_readonly("fits", &SweepPoint::fits)
      .def_readonly("peak_reserved_bytes", &SweepPoint::peak_reserved_bytes, "The largest over the phases, or None.")
      .def_readonly("peak_allocated_bytes", &SweepPoint::peak_allocated_bytes)
      .def_readonly("predicted_peak_reserved_bytes", &SweepPoint::predicted_peak_reserved_bytes)
      .def_readonly("warm_forward_host_seconds_median", &SweepPoint::warm_forward_host_seconds_median)
      .def_readonly("error", &SweepPoint::error)
      .def("__repr__", [](const SweepPoint& p) {
        return "SweepPoint(value=" + std::to_string(p.value) + ", outcome='" + p.outcome + "')";
      });
  py::class_<SweepResult> result(m, "SweepResult", R"pbdoc(
    The largest value of one dimension whose peak reserved memory stays under a budget, and
    every point measured to find it (in the order measured).
  )pbdoc");
  result.def_readonly("start", &SweepResult::start, "The MeasureConfiguration grown from.")
      .def_readonly("vary", &SweepResult::vary)
      .def_readonly("budget", &SweepResult::budget, "As given: '50%' or a number of bytes.")
      .def_readonly("budget_bytes", &SweepResult::budget_bytes)
      .def_readonly("package", &SweepResult::package,
                    "The catalog GPU whose memory less the footprint outside the allocator gave the budget; ''.")
      .def_readonly("free_bytes", &SweepResult::free_bytes, "Reported by the runtime at the first point.")
      .def_readonly("gpu_name", &SweepResult::gpu_name)
      .def_readonly("points", &SweepResult::points)
      .def_property_readonly("points_by_value", &SweepResult::points_by_value)
      .def_readonly("predicted_largest", &SweepResult::predicted_largest)
      .def_readonly("largest_fitting", &SweepResult::largest_fitting)
      .def_readonly("smallest_not_fitting", &SweepResult::smallest_not_fitting)
      .def_readonly("largest_accepted", &SweepResult::largest_accepted,
                    "The largest value the workload accepts (a checkpoint's positions); the search stays below it.")
      .def_readonly("beyond_largest_accepted", &SweepResult::beyond_largest_accepted,
                    "Why largest_accepted + 1 is refused; '' when no limit of the workload was reached.")
      .def_property_readonly("measurements", &SweepResult::measurements)
      .def(
          "plot", [](py::object self) { return call_display("plot_sweep", self); },
          R"pbdoc(
            Plots peak reserved memory against the varied dimension, with the budget, with
            matplotlib (imported now, not at ``import iteragpu``).

            Returns:
                matplotlib.figure.Figure
          )pbdoc");
  add_report_methods(result, "sweep_html");

  m.def(
      "run_sweep",
      [](const MeasureRequest& start, py::handle vary, py::handle budget, py::handle output,
         py::object progress, py::object on_point) {
        SweepRequest request;
        request.vary = text_keyword(vary, "vary");
        request.budget = numeric_keyword_text(budget, "budget");
        request.output = path_keyword_text(output, "output");
        request.start = MeasureConfiguration::parse(start);
        PythonCallbacks callbacks(std::move(progress), std::move(on_point));
        const MemorySweep sweep(MeasurementRunner(callbacks.runner_options()),
                                [&callbacks](const SweepPoint& point, int measurements) {
                                  callbacks.point(point, measurements);
                                });
        return callbacks.run([&] { return sweep.run(request); });
      },
      py::arg("start"), py::arg("vary"), py::arg("budget") = py::str("50%"), py::arg("output") = py::none(),
      py::arg("progress") = py::none(), py::arg("on_point") = py::none(),
      "MemorySweep::run through fresh workers; see iteragpu.sweep().");
}

// The declared option whose Python keyword is `keyword`; null when none is.
const WorkloadOption* declared_option_of_keyword(const std::string& keyword) {
  for (const WorkloadOption& option : declared_workload_options())
    if (keyword == option.keyword) return &option;
  return nullptr;
}

// ", new_tokens='4'" for each workload option the request gives or leaves out, as declared.
std::string workload_options_repr(const MeasureRequest& r) {
  std::string text;
  for (const WorkloadOption& option : declared_workload_options()) {
    const auto given = r.workload_options.find(option.name);
    text += std::string(", ") + option.keyword + "=" +
            (given == r.workload_options.end() ? std::string("None") : "'" + given->second + "'");
  }
  return text;
}

}  // namespace

void register_measure_request(py::module_& m) {
  const MeasureRequest defaults;
  py::class_<MeasureRequest> request_class(m, "MeasureRequest", R"pbdoc(
    What to measure, as written: every value is kept as text and parsed by the core when
    measuring or predicting, exactly as the command line's options are.
  )pbdoc");
  request_class
      .def(py::init([](py::handle device, py::handle batch, py::handle context, py::handle width,
                       py::handle hidden, py::handle dtype, py::handle warmup, py::handle repeats,
                       py::handle seed, py::handle output, py::handle backend_path, py::handle model,
                       py::handle timeout, const py::kwargs& workload_options) {
             MeasureRequest request;
             request.device = text_keyword(device, "device");
             request.batch = numeric_keyword_text(batch, "batch");
             request.context = numeric_keyword_text(context, "context");
             // None: left out, as an option not given on the command line; the core checks
             // what goes together (MeasureConfiguration::parse).
             const auto given = [](py::handle value, auto text_of) -> std::optional<std::string> {
               if (value.is_none()) return std::nullopt;
               return text_of(value);
             };
             request.width = given(width, [](py::handle v) { return numeric_keyword_text(v, "width"); });
             request.hidden = given(hidden, [](py::handle v) { return numeric_keyword_text(v, "hidden"); });
             request.dtype = given(dtype, [](py::handle v) { return text_keyword(v, "dtype"); });
             request.warmup = given(warmup, [](py::handle v) { return numeric_keyword_text(v, "warmup"); });
             request.repeats = given(repeats, [](py::handle v) { return numeric_keyword_text(v, "repeats"); });
             request.seed = numeric_keyword_text(seed, "seed");
             request.output = path_keyword_text(output, "output");
             request.backend_path = path_keyword_text(backend_path, "backend_path");
             request.model = given(model, [](py::handle v) { return path_keyword_text(v, "model"); });
             request.timeout = given(timeout, [](py::handle v) { return numeric_keyword_text(v, "timeout"); });
             // A workload's own options (new_tokens), as it declares them (WorkloadKind::options).
             for (const auto& [key, value] : workload_options) {
               const std::string keyword = py::str(key);
               const WorkloadOption* option = declared_option_of_keyword(keyword);
               if (!option) throw py::type_error("MeasureRequest() got an unexpected keyword argument '" + keyword + "'");
               if (value.is_none()) continue;
               if (option->type == WorkloadOption::Type::kSwitch)
                 request.workload_options[option->name] = bool_keyword(value, option->keyword) ? "1" : "0";
               else
                 request.workload_options[option->name] = option->type == WorkloadOption::Type::kWholeNumber
                                                              ? numeric_keyword_text(value, option->keyword)
                                                              : text_keyword(value, option->keyword);
             }
             return request;
           }),
           py::kw_only(), py::arg("device") = py::str(defaults.device),
           py::arg("batch") = py::int_(1), py::arg("context") = py::int_(16),
           py::arg("width") = py::none(), py::arg("hidden") = py::none(),
           py::arg("dtype") = py::none(), py::arg("warmup") = py::none(),
           py::arg("repeats") = py::none(), py::arg("seed") = py::int_(20260924),
           py::arg("output") = py::none(), py::arg("backend_path") = py::none(), py::arg("model") = py::none(),
           py::arg("timeout") = py::none(),
           "Keywords as for iteragpu.measure(); int or str for the numbers; None leaves a keyword out "
           "(width 64, hidden 4 x width, dtype float32 or the checkpoint's with model, timeout 10 "
           "seconds per HTTP request of a Hub id); a workload's own options by keyword (new_tokens "
           "with model: 16), each None or left out for its default.")
      .def_readonly("device", &MeasureRequest::device)
      .def_readonly("batch", &MeasureRequest::batch)
      .def_readonly("context", &MeasureRequest::context,
                    "The synthetic MLP's positions, or with model the prompt length.")
      .def_readonly("width", &MeasureRequest::width, "None: left out (64).")
      .def_readonly("hidden", &MeasureRequest::hidden, "None: left out (4 x width).")
      .def_readonly("dtype", &MeasureRequest::dtype, "None: left out (float32, or the checkpoint's).")
      .def_readonly("warmup", &MeasureRequest::warmup)
      .def_readonly("repeats", &MeasureRequest::repeats)
      .def_readonly("seed", &MeasureRequest::seed)
      .def_readonly("output", &MeasureRequest::output, "The JSON file to create ('' for none).")
      .def_readonly("backend_path", &MeasureRequest::backend_path)
      .def_readonly("model", &MeasureRequest::model,
                    "A checkpoint folder or a Hub id org/name[@revision] (None for the synthetic MLP).")
      .def_readonly("timeout", &MeasureRequest::timeout, "With a Hub id: seconds per HTTP request; None: 10.")
      .def("__repr__", [](const MeasureRequest& r) {
        const auto text = [](const std::optional<std::string>& value) {
          return value ? "'" + *value + "'" : std::string("None");
        };
        return "MeasureRequest(device='" + r.device + "', batch='" + r.batch + "', context='" + r.context +
               "', width=" + text(r.width) + ", hidden=" + text(r.hidden) + ", dtype=" + text(r.dtype) +
               ", warmup=" + text(r.warmup) + ", repeats=" + text(r.repeats) + ", model=" + text(r.model) +
               workload_options_repr(r) + ", timeout=" + text(r.timeout) + ")";
      });
  for (const WorkloadOption& option : declared_workload_options()) {
    const std::string name = option.name;
    request_class.def_property_readonly(
        option.keyword,
        [name](const MeasureRequest& r) -> py::object {
          const auto given = r.workload_options.find(name);
          return given == r.workload_options.end() ? py::object(py::none()) : py::object(py::str(given->second));
        },
        (*option.default_text ? "None: left out (" + std::string(option.default_text) + ")."
                              : std::string("None: left out (another workload).")).c_str());
  }

  m.def(
      "_workload_option_keywords",
      [] {
        std::vector<std::string> keywords;
        for (const WorkloadOption& option : declared_workload_options()) keywords.emplace_back(option.keyword);
        return keywords;
      },
      R"pbdoc(
        The Python keywords of the workloads' own options, as they declare them.

        Returns:
            list[str]: ["new_tokens"]; iteragpu's measure, predict, sweep and packages list
            them in their signatures.
      )pbdoc");

  py::class_<MeasureConfiguration> configuration_class(m, "MeasureConfiguration", R"pbdoc(
    A MeasureRequest parsed by the core: whole numbers, hidden resolved (4 x width when the
    request left it out). What a Measurement records as its configuration.
  )pbdoc");
  configuration_class
      .def_static("parse", &MeasureConfiguration::parse, py::arg("request"),
                  "Parses a MeasureRequest. Raises UsageError (a ValueError) naming the keyword.")
      .def_readonly("device", &MeasureConfiguration::device)
      .def_readonly("batch", &MeasureConfiguration::batch)
      .def_readonly("context", &MeasureConfiguration::context)
      .def_readonly("width", &MeasureConfiguration::width)
      .def_readonly("hidden", &MeasureConfiguration::hidden)
      .def_readonly("dtype", &MeasureConfiguration::dtype)
      .def_readonly("warmup", &MeasureConfiguration::warmup)
      .def_readonly("repeats", &MeasureConfiguration::repeats)
      .def_readonly("seed", &MeasureConfiguration::seed)
      .def_readonly("output", &MeasureConfiguration::output)
      .def_readonly("model", &MeasureConfiguration::model, "A checkpoint folder; '' for the synthetic MLP.")
      .def("__repr__", [](const MeasureConfiguration& c) {
        return "MeasureConfiguration(device='" + c.device + "', batch=" + std::to_string(c.batch) +
               ", context=" + std::to_string(c.context) + ", width=" + std::to_string(c.width) +
               ", hidden=" + std::to_string(c.hidden) + ", dtype='" + c.dtype + "', warmup=" +
               std::to_string(c.warmup) + ", repeats=" + std::to_string(c.repeats) + ")";
      });
  for (const WorkloadOption& option : declared_workload_options()) {
    const std::string name = option.name;
    const bool switched = option.type == WorkloadOption::Type::kSwitch;
    configuration_class.def_property_readonly(
        option.keyword,
        [name, switched](const MeasureConfiguration& c) -> py::object {
          const WorkloadOptions::Value* value = c.workload_options.find(name);
          if (!value) return py::none();
          if (const auto* number = std::get_if<std::int64_t>(value))
            return switched ? py::object(py::bool_(*number != 0)) : py::object(py::int_(*number));
          return py::str(std::get<std::string>(*value));
        },
        (std::string(option.help) + "; None when the configuration's workload has no such option.").c_str());
  }

  py::class_<SyntheticModel>(m, "SyntheticModel",
                             "Linear(width->hidden) -> GELU -> Linear(hidden->width).")
      .def_static(
          "from_request",
          [](const MeasureRequest& request) { return SyntheticModel::from(MeasureConfiguration::parse(request)); },
          py::arg("request"), R"pbdoc(
            The model a request describes, without touching a GPU.

            Args:
                request: a MeasureRequest.

            Returns:
                SyntheticModel: shapes, parameter count and bytes.

            Raises:
                UsageError: (a ValueError) a malformed size or dtype.
          )pbdoc")
      .def_readonly("batch", &SyntheticModel::batch)
      .def_readonly("context", &SyntheticModel::context)
      .def_readonly("width", &SyntheticModel::width)
      .def_readonly("hidden", &SyntheticModel::hidden)
      .def_readonly("dtype", &SyntheticModel::dtype)
      .def_readonly("dtype_bytes", &SyntheticModel::dtype_bytes)
      .def_readonly("parameter_count", &SyntheticModel::parameter_count)
      .def_readonly("parameter_bytes", &SyntheticModel::parameter_bytes)
      .def_readonly("input_bytes", &SyntheticModel::input_bytes);
}

void register_measure(py::module_& m) {
  register_counters_and_rows(m);
  register_measurement(m);
  register_summary(m);
  register_sweep(m);

  m.def(
      "run_measurements",
      [](const MeasureRequest& request, py::object progress, py::handle worker_path) -> py::object {
        PythonCallbacks callbacks(std::move(progress));
        RunnerOptions options = callbacks.runner_options();
        options.worker_path = path_keyword_text(worker_path, "worker_path");
        const MeasurementRunner runner(options);
        const MeasureConfiguration configuration = MeasureConfiguration::parse(request);
        if (names_several_devices(configuration.device))
          return py::cast(callbacks.run([&] { return runner.measure_devices(configuration); }));
        return py::cast(callbacks.run([&] { return runner.measure(configuration); }));
      },
      py::arg("request"), py::arg("progress") = py::none(), py::arg("worker_path") = py::none(), R"pbdoc(
        Measures in fresh worker processes (the core's MeasurementRunner): one GPU gives a
        Measurement, several ("all" or "cuda:0,cuda:1") a MeasurementSummary. The GIL is
        released while they run; Ctrl-C or an exception from progress stops every worker
        between phases, writing nothing, and is raised.
      )pbdoc");

  py::class_<PhaseMeasurer>(m, "PhaseMeasurer", R"pbdoc(
    Measures in THIS process: its allocator state (earlier work in a Jupyter kernel) then
    carries into the baselines. iteragpu.measure() uses a fresh worker process instead.
  )pbdoc")
      .def(py::init<>(), "The LibTorch backend plugin is loaded on first use.")
      .def(
          "measure",
          [](const PhaseMeasurer& measurer, const MeasureRequest& request, py::object progress) {
            PythonCallbacks callbacks(std::move(progress));
            const MeasureConfiguration configuration = MeasureConfiguration::parse(request);
            return callbacks.run([&] {
              return configuration.output.empty() ? measurer.run(configuration, callbacks.in_process_progress())
                                                  : measurer.measure(configuration, callbacks.in_process_progress());
            });
          },
          py::arg("request"), py::arg("progress") = py::none(), R"pbdoc(
            Measures in this process; publishes request.output atomically when it is set
            (never overwritten, never partial). The GIL is released while the GPU works.

            Args:
                request: a MeasureRequest.
                progress: None, or a callable(row: PhaseRow, rows_done: int, rows_total: int)
                    called after each phase row. An exception it raises stops the
                    measurement at the next phase boundary and is re-raised.

            Returns:
                Measurement

            Raises:
                UsageError, BackendUnavailable, DeviceUnavailable, OutputExists, OutOfMemory,
                MeasurementFailed, Interrupted.
          )pbdoc");
}

}  // namespace iteragpu::python
