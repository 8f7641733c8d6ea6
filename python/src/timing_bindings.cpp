// The spread of a measurement's warm repeats and its warnings, read-only and picklable (a
// Measurement crosses back from the child process that measured it).

#include <pybind11/stl.h>

#include <cstdio>

#include "bindings.hpp"
#include "iteragpu/timing_statistics.hpp"

namespace iteragpu::python {

void register_timing(py::module_& m) {
  py::class_<SpreadStatistics>(m, "SpreadStatistics", "Statistics of a series of times, in seconds.")
      .def_readonly("count", &SpreadStatistics::count)
      .def_readonly("median", &SpreadStatistics::median)
      .def_readonly("iqr", &SpreadStatistics::iqr, "Third quartile minus first (as numpy).")
      .def_readonly("min", &SpreadStatistics::min)
      .def_readonly("max", &SpreadStatistics::max)
      .def_readonly("mean", &SpreadStatistics::mean)
      .def_readonly("stdev", &SpreadStatistics::stdev, "Sample standard deviation (n - 1).")
      .def_readonly("cv", &SpreadStatistics::cv, "Coefficient of variation: stdev / mean.")
      .def("__repr__",
           [](const SpreadStatistics& s) {
             return "SpreadStatistics(count=" + std::to_string(s.count) + ", median=" +
                    py::repr(py::float_(s.median)).cast<std::string>() + ", cv=" +
                    py::repr(py::float_(s.cv)).cast<std::string>() + ")";
           })
      .def(py::pickle(
          [](const SpreadStatistics& s) {
            return py::make_tuple(s.count, s.median, s.iqr, s.min, s.max, s.mean, s.stdev, s.cv);
          },
          [](const py::tuple& t) {
            SpreadStatistics s;
            s.count = t[0].cast<int>();
            s.median = t[1].cast<double>();
            s.iqr = t[2].cast<double>();
            s.min = t[3].cast<double>();
            s.max = t[4].cast<double>();
            s.mean = t[5].cast<double>();
            s.stdev = t[6].cast<double>();
            s.cv = t[7].cast<double>();
            return s;
          }));

  py::class_<TimingWarning>(m, "TimingWarning", "Why a time cannot be trusted.")
      .def_readonly("code", &TimingWarning::code,
                    "high_cv | few_repeats | below_timer_resolution | first_repeat_outlier")
      .def_readonly("clock", &TimingWarning::clock, "host | gpu_event")
      .def_readonly("message", &TimingWarning::message)
      .def("__repr__",
           [](const TimingWarning& w) { return "TimingWarning(code='" + w.code + "', clock='" + w.clock + "')"; })
      .def(py::pickle([](const TimingWarning& w) { return py::make_tuple(w.code, w.clock, w.message); },
                      [](const py::tuple& t) {
                        return TimingWarning{t[0].cast<std::string>(), t[1].cast<std::string>(),
                                             t[2].cast<std::string>()};
                      }));

  py::class_<TimingSummary>(m, "TimingSummary", "The warm repeats' host and GPU event times, summarised.")
      .def_readonly("warm_repeats", &TimingSummary::warm_repeats)
      .def_readonly("host_seconds", &TimingSummary::host_seconds, "SpreadStatistics of host time.")
      .def_readonly("gpu_event_seconds", &TimingSummary::gpu_event_seconds,
                    "SpreadStatistics of GPU event time, or None without a GPU timer.")
      .def_readonly("warnings", &TimingSummary::warnings, "TimingWarning list.")
      .def("__repr__",
           [](const TimingSummary& s) {
             // One line a reader can use: each clock's median and CV, and the warnings' codes.
             const auto clock = [](const char* name, const SpreadStatistics& spread) {
               char text[160];
               std::snprintf(text, sizeof text, ", %s median %.1f µs, CV %.1f %%", name, spread.median * 1e6,
                             spread.cv * 100);
               return std::string(text);
             };
             std::string text = "TimingSummary(warm_repeats=" + std::to_string(s.warm_repeats) +
                                clock("host", s.host_seconds);
             if (s.gpu_event_seconds) text += clock("GPU event", *s.gpu_event_seconds);
             text += ", warnings: ";
             if (s.warnings.empty()) text += "none";
             for (std::size_t i = 0; i < s.warnings.size(); ++i)
               text += (i ? ", " : "") + s.warnings[i].code + " (" + s.warnings[i].clock + ")";
             return text + ")";
           })
      .def(
          "_repr_html_", [](py::object self) { return call_display("timing_html", self); },
          "HTML shown by Jupyter: the spread of each clock and the warnings.")
      .def(py::pickle(
          [](const TimingSummary& s) {
            return py::make_tuple(s.warm_repeats, s.host_seconds, s.gpu_event_seconds, s.warnings);
          },
          [](const py::tuple& t) {
            TimingSummary s;
            s.warm_repeats = t[0].cast<int>();
            s.host_seconds = t[1].cast<SpreadStatistics>();
            s.gpu_event_seconds = t[2].cast<std::optional<SpreadStatistics>>();
            s.warnings = t[3].cast<std::vector<TimingWarning>>();
            return s;
          }));
}

}  // namespace iteragpu::python
