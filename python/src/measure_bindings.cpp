// PhaseMeasurer, in-process. The public iteragpu.measure() runs this in a fresh child
// process by default (iteragpu/_measure.py); every type here pickles so the result and the
// progress rows cross back whole.

#include <pybind11/stl.h>

#include <optional>
#include <utility>

#include "bindings.hpp"
#include "iteragpu/error.hpp"
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
      .def(py::pickle(
          [](const AllocatorCounters& c) {
            return py::make_tuple(c.allocated_bytes, c.reserved_bytes, c.peak_allocated_bytes,
                                  c.peak_reserved_bytes);
          },
          [](const py::tuple& t) {
            AllocatorCounters c;
            c.allocated_bytes = t[0].cast<std::uint64_t>();
            c.reserved_bytes = t[1].cast<std::uint64_t>();
            c.peak_allocated_bytes = t[2].cast<std::uint64_t>();
            c.peak_reserved_bytes = t[3].cast<std::uint64_t>();
            return c;
          }));

  py::class_<PhaseRow>(m, "PhaseRow", "One phase (or one warm repeat) of a measurement.")
      .def_readonly("phase", &PhaseRow::phase,
                    "model_load | inputs | cold_forward | warmup | warm_forward")
      .def_readonly("repeat", &PhaseRow::repeat, "1-based for warm_forward, 0 otherwise.")
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
           })
      .def(py::pickle(
          [](const PhaseRow& r) {
            return py::make_tuple(r.phase, r.repeat, r.forwards, r.host_seconds,
                                  r.gpu_event_seconds, r.baseline, r.end);
          },
          [](const py::tuple& t) {
            PhaseRow r;
            r.phase = t[0].cast<std::string>();
            r.repeat = t[1].cast<int>();
            r.forwards = t[2].cast<int>();
            r.host_seconds = t[3].cast<double>();
            r.gpu_event_seconds = t[4].cast<std::optional<double>>();
            r.baseline = t[5].cast<AllocatorCounters>();
            r.end = t[6].cast<AllocatorCounters>();
            return r;
          }));
}

void register_request(py::module_& m) {
  const MeasureRequest defaults;
  py::class_<MeasureRequest>(m, "MeasureRequest", "What to measure; see iteragpu.measure().")
      .def(py::init([](py::handle device, std::int64_t batch, std::int64_t context,
                       std::int64_t width, std::int64_t hidden, py::handle dtype, int warmup,
                       int repeats, std::uint64_t seed, py::handle output,
                       py::handle backend_path) {
             MeasureRequest request;
             request.device = text_keyword(device, "device");
             request.batch = batch;
             request.context = context;
             request.width = width;
             request.hidden = hidden;
             request.dtype = text_keyword(dtype, "dtype");
             request.warmup = warmup;
             request.repeats = repeats;
             request.seed = seed;
             request.output = path_keyword_text(output, "output");
             request.backend_path = path_keyword_text(backend_path, "backend_path");
             return request;
           }),
           py::kw_only(), py::arg("device") = py::str(defaults.device), py::arg("batch") = defaults.batch,
           py::arg("context") = defaults.context, py::arg("width") = defaults.width,
           py::arg("hidden") = defaults.hidden, py::arg("dtype") = py::str(defaults.dtype),
           py::arg("warmup") = defaults.warmup, py::arg("repeats") = defaults.repeats,
           py::arg("seed") = defaults.seed, py::arg("output") = py::none(),
           py::arg("backend_path") = py::none(),
           "Keywords as for iteragpu.measure(); the core validates them when measuring.")
      .def_readonly("device", &MeasureRequest::device)
      .def_readonly("batch", &MeasureRequest::batch)
      .def_readonly("context", &MeasureRequest::context, "Positions; no attention, no KV cache.")
      .def_readonly("width", &MeasureRequest::width)
      .def_readonly("hidden", &MeasureRequest::hidden, "0 means 4 x width.")
      .def_readonly("dtype", &MeasureRequest::dtype)
      .def_readonly("warmup", &MeasureRequest::warmup)
      .def_readonly("repeats", &MeasureRequest::repeats)
      .def_readonly("seed", &MeasureRequest::seed)
      .def_readonly("output", &MeasureRequest::output, "The JSON file to create ('' for none).")
      .def_readonly("backend_path", &MeasureRequest::backend_path)
      .def("__repr__",
           [](const MeasureRequest& r) {
             return "MeasureRequest(device='" + r.device + "', batch=" + std::to_string(r.batch) +
                    ", context=" + std::to_string(r.context) + ", width=" +
                    std::to_string(r.width) + ", hidden=" + std::to_string(r.hidden) +
                    ", dtype='" + r.dtype + "', warmup=" + std::to_string(r.warmup) +
                    ", repeats=" + std::to_string(r.repeats) + ")";
           })
      .def(py::pickle(
          [](const MeasureRequest& r) {
            return py::make_tuple(r.device, r.batch, r.context, r.width, r.hidden, r.dtype,
                                  r.warmup, r.repeats, r.seed, r.output, r.backend_path);
          },
          [](const py::tuple& t) {
            MeasureRequest r;
            r.device = t[0].cast<std::string>();
            r.batch = t[1].cast<std::int64_t>();
            r.context = t[2].cast<std::int64_t>();
            r.width = t[3].cast<std::int64_t>();
            r.hidden = t[4].cast<std::int64_t>();
            r.dtype = t[5].cast<std::string>();
            r.warmup = t[6].cast<int>();
            r.repeats = t[7].cast<int>();
            r.seed = t[8].cast<std::uint64_t>();
            r.output = t[9].cast<std::string>();
            r.backend_path = t[10].cast<std::string>();
            return r;
          }));

  py::class_<SyntheticModel>(m, "SyntheticModel",
                             "Linear(width->hidden) -> GELU -> Linear(hidden->width).")
      .def_static("from_request", &SyntheticModel::from, py::arg("request"), R"pbdoc(
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
      .def_readonly("input_bytes", &SyntheticModel::input_bytes)
      .def(py::pickle(
          [](const SyntheticModel& s) {
            return py::make_tuple(s.batch, s.context, s.width, s.hidden, s.dtype, s.dtype_bytes,
                                  s.parameter_count, s.parameter_bytes, s.input_bytes);
          },
          [](const py::tuple& t) {
            SyntheticModel s;
            s.batch = t[0].cast<std::int64_t>();
            s.context = t[1].cast<std::int64_t>();
            s.width = t[2].cast<std::int64_t>();
            s.hidden = t[3].cast<std::int64_t>();
            s.dtype = t[4].cast<std::string>();
            s.dtype_bytes = t[5].cast<int>();
            s.parameter_count = t[6].cast<std::int64_t>();
            s.parameter_bytes = t[7].cast<std::int64_t>();
            s.input_bytes = t[8].cast<std::int64_t>();
            return s;
          }));
}

void register_measurement(py::module_& m) {
  py::class_<Measurement> measurement(m, "Measurement", R"pbdoc(
    A phase-by-phase memory and time measurement on one GPU, with the environment it ran in.
    Counters are this process's caching allocator on the selected GPU only.
  )pbdoc");
  measurement.def_readonly("environment", &Measurement::environment, "EnvironmentReport.")
      .def_readonly("configuration", &Measurement::configuration, "The MeasureRequest.")
      .def_readonly("model", &Measurement::model, "The SyntheticModel measured.")
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
      .def(py::pickle(
          [](const Measurement& x) {
            return py::make_tuple(x.environment, x.configuration, x.model, x.phases, x.timing,
                                  x.prediction);
          },
          [](const py::tuple& t) {
            Measurement x;
            x.environment = t[0].cast<EnvironmentReport>();
            x.configuration = t[1].cast<MeasureRequest>();
            x.model = t[2].cast<SyntheticModel>();
            x.phases = t[3].cast<std::vector<PhaseRow>>();
            x.timing = t[4].cast<TimingSummary>();
            x.prediction = t[5].cast<std::optional<MemoryPrediction>>();
            return x;
          }));
  add_report_methods(measurement, "measurement_html");
}

// Calls the Python progress callback between phases, and turns Ctrl-C (or an exception the
// callback raises) into a stop at the next phase boundary through the core's own
// interruption path, so the core still cleans up and writes nothing.
class ProgressBridge {
 public:
  explicit ProgressBridge(py::object callback) : callback_(std::move(callback)) {}

  PhaseProgress function() {
    return [this](const PhaseRow& row, int rows_done, int rows_total) {
      py::gil_scoped_acquire gil;
      if (!callback_.is_none() && !error_) {
        try {
          callback_(row, rows_done, rows_total);
        } catch (py::error_already_set& error) {
          error_ = std::move(error);
          PhaseMeasurer::request_interrupt();
          return;
        }
      }
      if (PyErr_CheckSignals() != 0) {
        py::error_already_set raised;  // fetches and clears it
        // KeyboardInterrupt becomes the core's Interrupted (a KeyboardInterrupt too).
        if (!raised.matches(PyExc_KeyboardInterrupt)) error_ = std::move(raised);
        PhaseMeasurer::request_interrupt();
      }
    };
  }

  // The callback's exception wins over the Interrupted it caused.
  void rethrow_callback_error() {
    if (error_) {
      py::error_already_set error = std::move(*error_);
      error_.reset();
      throw error;
    }
  }

 private:
  py::object callback_;
  std::optional<py::error_already_set> error_;
};

Measurement measure_in_process(const PhaseMeasurer& measurer, const MeasureRequest& request,
                               py::object progress, bool write_file) {
  ProgressBridge bridge(std::move(progress));
  std::optional<Measurement> result;
  try {
    py::gil_scoped_release no_gil;  // the GPU work needs no Python
    result = write_file ? measurer.measure(request, bridge.function())
                        : measurer.run(request, bridge.function());
  } catch (const Error&) {
    bridge.rethrow_callback_error();
    throw;
  }
  bridge.rethrow_callback_error();
  return std::move(*result);
}

}  // namespace

void register_measure(py::module_& m) {
  register_counters_and_rows(m);
  register_request(m);
  register_measurement(m);

  py::class_<PhaseMeasurer>(m, "PhaseMeasurer", R"pbdoc(
    Measures in THIS process. iteragpu.measure() (and iteragpu.PhaseMeasurer) run it in a
    fresh child process by default: a long-lived process's allocator state would pollute
    the baselines.
  )pbdoc")
      .def(py::init<>(), "The LibTorch backend plugin is loaded on first use.")
      .def(
          "measure",
          [](const PhaseMeasurer& measurer, const MeasureRequest& request, py::object progress) {
            return measure_in_process(measurer, request, std::move(progress), true);
          },
          py::arg("request"), py::arg("progress") = py::none(), R"pbdoc(
            Measures and publishes request.output atomically (never overwritten, never
            partial). The GIL is released while the GPU works.

            Args:
                request: a MeasureRequest with an output path.
                progress: None, or a callable(row: PhaseRow, rows_done: int, rows_total: int)
                    called after each phase row. An exception it raises stops the
                    measurement at the next phase boundary and is re-raised.

            Returns:
                Measurement

            Raises:
                UsageError, BackendUnavailable, DeviceUnavailable, OutputExists, OutOfMemory,
                MeasurementFailed, Interrupted.
          )pbdoc")
      .def(
          "run",
          [](const PhaseMeasurer& measurer, const MeasureRequest& request, py::object progress) {
            return measure_in_process(measurer, request, std::move(progress), false);
          },
          py::arg("request"), py::arg("progress") = py::none(), R"pbdoc(
            Like measure() without writing a file (request.output is ignored).

            Args:
                request: a MeasureRequest.
                progress: as for measure().

            Returns:
                Measurement
          )pbdoc")
      .def_static("request_interrupt", &PhaseMeasurer::request_interrupt,
                  "Makes a running measurement stop between phases with Interrupted.");
}

}  // namespace iteragpu::python
