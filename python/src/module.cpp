// iteragpu._iteragpu: the private extension behind the iteragpu package. A thin layer over
// the core's public API; one register_* call per bound area. The LibTorch backend is not
// loaded here: the core opens it on first GPU use.

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "bindings.hpp"
#include "iteragpu/environment.hpp"
#include "iteragpu/terminal.hpp"
#include "iteragpu/version.hpp"

namespace {

namespace py = pybind11;

// Indexes of the characters of `text` equal to `stop` outside quotes and brackets.
std::vector<std::size_t> top_level(const std::string& text, char stop) {
  std::vector<std::size_t> found;
  int depth = 0;
  char quote = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quote != 0) {
      if (c == '\\') ++i;
      else if (c == quote) quote = 0;
    } else if (c == '\'' || c == '"') {
      quote = c;
    } else if (c == '(' || c == '[' || c == '{' || c == '<') {
      ++depth;
    } else if (c == ')' || c == ']' || c == '}' || c == '>') {
      if (depth == 0 && c == stop) found.push_back(i);
      --depth;
    } else if (depth == 0 && c == stop) {
      found.push_back(i);
    }
  }
  return found;
}

std::string trimmed(const std::string& text) {
  const auto first = text.find_first_not_of(' ');
  if (first == std::string::npos) return "";
  return text.substr(first, text.find_last_not_of(' ') - first + 1);
}

// "(a, b=0, *, c=None)": the parameters of pybind11's signature line "name(a: T, b: U = 0,
// *, c: V = None) -> W", without the types; a default that is not a Python literal (a
// function's repr) becomes "...". Empty when the line is not such a signature.
std::string text_signature(const std::string& name, const std::string& line, const py::handle& literal_eval) {
  if (line.compare(0, name.size() + 1, name + "(") != 0) return "";
  const std::string rest = line.substr(name.size());
  const auto closing = top_level(rest.substr(1), ')');
  if (closing.empty()) return "";
  const std::string inside = rest.substr(1, closing.front());
  std::string result = "(";
  std::size_t start = 0;
  std::vector<std::size_t> commas = top_level(inside, ',');
  commas.push_back(inside.size());
  bool first = true;
  for (const std::size_t end : commas) {
    const std::string parameter = trimmed(inside.substr(start, end - start));
    start = end + 1;
    if (parameter.empty()) continue;
    const auto equals = top_level(parameter, '=');
    const std::string declaration = equals.empty() ? parameter : parameter.substr(0, equals.front());
    std::string item = trimmed(declaration.substr(0, declaration.find(':')));
    if (!equals.empty()) {
      std::string value = trimmed(parameter.substr(equals.front() + 1));
      try {
        literal_eval(value);
      } catch (const py::error_already_set&) {
        value = "...";
      }
      item += "=" + value;
    }
    result += (first ? "" : ", ") + item;
    first = false;
  }
  return result + ")";
}

// Makes inspect.signature work on a function pybind11 made: CPython reads a text signature
// "name(a, b=0)\n--\n\n" at the start of a built-in's internal docstring (__text_signature__),
// and __doc__ still starts with pybind11's own signature line. Overloads give (*args, **kwargs).
void add_text_signature(const py::handle& function, const py::handle& literal_eval) {
  if (!PyCFunction_Check(function.ptr())) return;
  auto* method = reinterpret_cast<PyCFunctionObject*>(function.ptr())->m_ml;
  if (method == nullptr || method->ml_doc == nullptr || method->ml_name == nullptr) return;
  const std::string doc = method->ml_doc;
  const std::string name = method->ml_name;
  if (doc.find("\n--\n\n") != std::string::npos) return;  // already has one
  const std::string signature = text_signature(name, doc.substr(0, doc.find('\n')), literal_eval);
  if (signature.empty()) return;
  const std::string internal = name + signature + "\n--\n\n" + doc;
  auto* copy = static_cast<char*>(std::malloc(internal.size() + 1));  // pybind11 frees it with free()
  if (copy == nullptr) return;
  std::memcpy(copy, internal.c_str(), internal.size() + 1);
  std::free(const_cast<char*>(method->ml_doc));
  method->ml_doc = copy;
}

void add_text_signatures(py::module_& m) {
  const py::object literal_eval = py::module_::import("ast").attr("literal_eval");
  const py::object static_method = py::module_::import("builtins").attr("staticmethod");
  for (const auto& item : m.attr("__dict__").cast<py::dict>()) {
    const py::handle value = item.second;
    if (PyType_Check(value.ptr())) {
      for (const auto& member : value.attr("__dict__").cast<py::dict>()) {
        const py::handle entry = member.second;
        if (PyInstanceMethod_Check(entry.ptr())) {
          add_text_signature(PyInstanceMethod_GET_FUNCTION(entry.ptr()), literal_eval);
        } else if (py::isinstance(entry, static_method)) {
          add_text_signature(entry.attr("__func__"), literal_eval);
        } else {
          add_text_signature(entry, literal_eval);
        }
      }
    } else {
      add_text_signature(value, literal_eval);
    }
  }
}

}  // namespace

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
  python::register_measure_request(m);
  python::register_packages(m);
  python::register_environment(m);
  python::register_predict(m);
  python::register_timing(m);
  python::register_measure(m);
  python::register_results(m);
  python::register_comparison(m);
  // Last: every function and method is defined, overloads included.
  add_text_signatures(m);
}
