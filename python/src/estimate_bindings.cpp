// MemoryEstimator: weight memory from a parameter count and a bit width, exactly.

#include <pybind11/stl.h>

#include "bindings.hpp"
#include "iteragpu/memory_estimator.hpp"

namespace iteragpu::python {

void register_estimate(py::module_& m) {
  py::class_<MemoryAmount>(m, "MemoryAmount", "One amount of memory in three exact units.")
      .def_property_readonly(
          "bytes", [](const MemoryAmount& amount) { return exact_number(amount.bytes); },
          "Bytes: an int for weights; a decimal reserve can make it a decimal.Decimal.")
      .def_property_readonly(
          "gib", [](const MemoryAmount& amount) { return exact_decimal(amount.gib); },
          "GiB (2**30 bytes), exact, as decimal.Decimal.")
      .def_property_readonly(
          "gb", [](const MemoryAmount& amount) { return exact_decimal(amount.gb); },
          "GB (10**9 bytes), exact, as decimal.Decimal.")
      .def("__repr__", [](const MemoryAmount& amount) {
        return "MemoryAmount(bytes=" + amount.bytes.str() + ", gib=Decimal('" +
               amount.gib.str() + "'), gb=Decimal('" + amount.gb.str() + "'))";
      });

  py::class_<MemoryEstimate> estimate(m, "MemoryEstimate", R"pbdoc(
    Weight memory for a parameter count at a storage bit width, with the user's reserve.

    Bytes are ceil(parameters * bits / 8). Not included: see ``not_included``.
  )pbdoc");
  estimate
      .def_property_readonly(
          "parameters", [](const MemoryEstimate& e) { return exact_integer(e.parameters); },
          "The parameter count (int).")
      .def_property_readonly(
          "bits", [](const MemoryEstimate& e) { return exact_integer(e.bits); },
          "Storage bits per parameter (int).")
      .def_property_readonly(
          "total_bits", [](const MemoryEstimate& e) { return exact_integer(e.total_bits); },
          "parameters * bits (int).")
      .def_readonly("weights", &MemoryEstimate::weights,
                    "MemoryAmount of the weights: ceil(total_bits / 8) bytes.")
      .def_readonly("reserve", &MemoryEstimate::reserve,
                    "MemoryAmount of the reserve: the user's assumption, not a measurement.")
      .def_readonly("total", &MemoryEstimate::total, "MemoryAmount: weights + reserve.")
      .def_property_readonly_static(
          "not_included", [](py::object) { return MemoryEstimate::not_included(); },
          "What the estimate leaves out (activations, KV cache, ...), as a list of str.")
      .def("__repr__", [](const MemoryEstimate& e) {
        return "MemoryEstimate(parameters=" + e.parameters.str() + ", bits=" + e.bits.str() +
               ", total_gib=Decimal('" + e.total.gib.str() + "'))";
      });
  add_report_methods(estimate, "estimate_html");

  const EstimateRequest defaults;
  py::class_<MemoryEstimator>(m, "MemoryEstimator",
                              "Weight memory from a parameter count and a bit width (no GPU).")
      .def(py::init<>())
      .def(
          "estimate",
          [](const MemoryEstimator& estimator, py::handle parameters, py::handle bits,
             py::handle reserve_gib) {
            EstimateRequest request;
            request.parameters = numeric_keyword_text(parameters, "parameters");
            request.bits = numeric_keyword_text(bits, "bits");
            request.reserve_gib = numeric_keyword_text(reserve_gib, "reserve_gib");
            return estimator.estimate(request);
          },
          py::arg("parameters"), py::arg("bits"), py::arg("reserve_gib") = defaults.reserve_gib,
          R"pbdoc(
            Estimates weight memory exactly.

            Args:
                parameters: a positive whole count, as an int or a str; a str may use a
                    K/M/B/T shorthand ("7B", "1.5M").
                bits: storage bits per parameter, a positive int (16, 4).
                reserve_gib: a reserve to add, in GiB (non-negative; int, str, Decimal or
                    float). An assumption you choose, not a measurement. Default "0".

            Returns:
                MemoryEstimate: bytes, GiB and GB of the weights, the reserve and the total.

            Raises:
                UsageError: (a ValueError) a malformed value, naming the keyword.
                TypeError: a value of the wrong type.
          )pbdoc");
}

}  // namespace iteragpu::python
