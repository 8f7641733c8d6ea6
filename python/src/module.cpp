// iteragpu._iteragpu: the private extension behind the iteragpu package. A thin layer over
// the core's public API; one register_* call per bound area. The LibTorch backend is not
// loaded here: the core opens it on first GPU use.

#include "bindings.hpp"
#include "iteragpu/environment.hpp"
#include "iteragpu/terminal.hpp"
#include "iteragpu/version.hpp"

PYBIND11_MODULE(_iteragpu, m) {
  namespace python = iteragpu::python;
  namespace py = pybind11;
  m.doc() = R"pbdoc(
    Private extension of the iteragpu package; import iteragpu instead.
  )pbdoc";
  m.attr("__version__") = iteragpu::version();
  m.def("build_description", &iteragpu::build_description,
        "One line: compiler, build type, whether the LibTorch backend plugin was built.");
  m.attr("_test_double_mark") = std::string(iteragpu::kTestDoubleMark);
  m.def("_may_use_escape_codes", &iteragpu::may_use_escape_codes, py::arg("fd"),
        "Whether file descriptor fd is a terminal that may get escape codes (NO_COLOR unset, "
        "TERM not dumb): the CLI's rule.");

  python::register_errors(m);
  python::register_estimate(m);
  python::register_packages(m);
  python::register_environment(m);
  python::register_predict(m);
  python::register_timing(m);
  python::register_measure(m);
  python::register_results(m);
  python::register_comparison(m);
}
