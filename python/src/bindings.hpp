#pragma once
// The registration functions module.cpp calls, one per file, and the small conversions
// every binding shares (exact numbers out, keyword values in).

#include <pybind11/pybind11.h>

#include <string>

#include "iteragpu/exact_decimal.hpp"
#include "iteragpu/package_calculator.hpp"

namespace iteragpu::python {

namespace py = pybind11;

void register_errors(py::module_& m);
void register_estimate(py::module_& m);
// MeasureRequest first: predict_memory and fit_packages take it, and pybind11 names a type in
// a signature only once it is registered.
void register_measure_request(py::module_& m);
void register_packages(py::module_& m);
void register_environment(py::module_& m);
void register_measure(py::module_& m);
void register_predict(py::module_& m);
void register_timing(py::module_& m);
void register_results(py::module_& m);
void register_comparison(py::module_& m);

// An exact number as Python sees it: int when whole, decimal.Decimal otherwise.
py::object exact_number(const ExactDecimal& value);
// Always a decimal.Decimal (GiB, GB, USD: quantities that may carry a fraction).
py::object exact_decimal(const ExactDecimal& value);
// An int; the core guarantees the value is whole (counts, bytes, cents).
py::object exact_integer(const ExactDecimal& value);

// The text a request struct expects for a numeric keyword: str as given, int as its digits,
// Decimal in plain notation, float as its shortest repr ("0.1", "7.0"). Nothing is rounded
// or converted: the core's parsers apply the command line's rules to that text, so both
// front ends accept the same spellings. Anything else is a TypeError naming the keyword;
// the core then validates the text (UsageError → ValueError).
std::string numeric_keyword_text(py::handle value, const char* keyword);
// A str keyword: TypeError naming it for anything else, UsageError (a ValueError) for text
// that is not valid Unicode (a lone surrogate). Every text value from Python passes here.
std::string text_keyword(py::handle value, const char* keyword);
// A str or os.PathLike as a file-system path, checked as Python's open() checks it: a NUL
// character is a UsageError (a ValueError) naming the keyword, bytes a TypeError; None gives
// "" (the keyword's default).
std::string path_keyword_text(py::handle value, const char* keyword);
// The same for a path that must be given: None is a TypeError naming the keyword.
std::string required_path_keyword(py::handle value, const char* keyword);
// A bool keyword: True or False only; anything else is a TypeError naming the keyword (not
// pybind11's list of overloads, and not Python's truthiness: "yes" is not True).
bool bool_keyword(py::handle value, const char* keyword);
// The `catalog` keyword of every pricing binding: None for the shipped catalog
// (illustrative prices), a Catalog, or the path of a CSV file (DataFileError if malformed).
PackageCalculator calculator_for_catalog(py::handle catalog);

// json.loads(text): to_dict() is exactly the CLI's JSON for the same inputs.
py::object json_to_dict(const std::string& json);
// iteragpu._display.<function>(argument): HTML and plots live in Python, imported on use.
py::object call_display(const char* function, py::handle argument);

// Adds to_json, to_text, to_dict, __str__ and _repr_html_ to a report class.
template <typename Report, typename... Options>
void add_report_methods(py::class_<Report, Options...>& cls, const char* html_function) {
  cls.def("to_json", &Report::to_json,
          "The core's JSON document (exact values as strings), as the CLI prints it.")
      .def("to_text", &Report::to_text, "The core's text report, as the CLI prints it.")
      .def(
          "to_dict", [](const Report& report) { return json_to_dict(report.to_json()); },
          R"pbdoc(
            The JSON document as Python data.

            Returns:
                dict: json.loads(self.to_json()); equal to the CLI's ``--format json`` output
                for the same inputs. Exact values stay strings there; the attributes give
                them as int / decimal.Decimal.
          )pbdoc")
      .def("__str__", &Report::to_text);
  if (html_function != nullptr) {
    cls.def(
        "_repr_html_",
        [html_function](py::object self) { return call_display(html_function, self); },
        "HTML shown by Jupyter.");
  }
}

}  // namespace iteragpu::python
