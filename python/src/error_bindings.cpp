// The library's error hierarchy (iteragpu/error.hpp) as Python exceptions, created and
// registered once, here. Python bases are added where a Python programmer would look for
// them: bad input is a ValueError, an existing output file a FileExistsError, a device
// failure a RuntimeError, an interruption a KeyboardInterrupt.

#include <exception>
#include <string>
#include <vector>

#include "bindings.hpp"
#include "iteragpu/error.hpp"
#include "iteragpu/printable_text.hpp"

namespace iteragpu::python {
namespace {

struct PythonError {
  const char* name;
  const char* doc;
  std::vector<const char*> bases;  // names of earlier entries or of builtins
  bool (*matches)(const Error&);
  PyObject* type = nullptr;
};

template <typename T>
bool is(const Error& error) {
  return dynamic_cast<const T*>(&error) != nullptr;
}

// Most derived first: the translator takes the first entry that matches.
std::vector<PythonError>& python_errors() {
  static std::vector<PythonError> errors = {
      {"UsageError",
       "A malformed keyword value (the message names the keyword and what is accepted).\n"
       "Also a ValueError. Attribute ``field``: the keyword, e.g. 'reserve_gib'.",
       {"Error", "ValueError"}, is<UsageError>},
      {"DataFileError",
       "A data file (a catalog, a results table) that is missing or malformed: 'file:line: reason'.\n"
       "Also a ValueError.",
       {"Error", "ValueError"}, is<DataFileError>},
      {"BackendUnavailable",
       "No LibTorch backend plugin could be loaded (built without LibTorch, or the plugin or\n"
       "LibTorch is missing). Nothing was measured and no file was written.",
       {"ResourceUnavailable"}, is<BackendUnavailable>},
      {"DeviceUnavailable",
       "No GPU runtime, or the requested device index does not exist. Nothing was measured\n"
       "and no file was written; iteragpu never falls back to the CPU.",
       {"ResourceUnavailable"}, is<DeviceUnavailable>},
      {"OutputExists",
       "The output path already exists: results are never overwritten. Also a\n"
       "FileExistsError.",
       {"ResourceUnavailable", "FileExistsError"}, is<OutputExists>},
      {"ResourceUnavailable", "Something the request needs is not there.", {"Error"},
       is<ResourceUnavailable>},
      {"OutOfMemory",
       "The GPU ran out of memory during a phase; the message names the phase and the\n"
       "configuration. No result file was written.",
       {"MeasurementFailed"}, is<OutOfMemory>},
      {"MeasurementFailed",
       "The device failed while measuring. No result file was written. Also a RuntimeError.",
       {"Error", "RuntimeError"}, is<MeasurementFailed>},
      {"HubUnreachable",
       "A model named by a Hugging Face Hub id could not be read over the network: a timeout, a\n"
       "refused connection, a TLS failure, an answer cut short or not what was asked; retrying\n"
       "may help. Also a ConnectionError.",
       {"Error", "ConnectionError"}, is<HubUnreachable>},
      {"Interrupted",
       "The measurement was interrupted (Ctrl-C, a kernel interrupt, or an exception raised by\n"
       "the progress callback) between phases. Nothing was written. Also a KeyboardInterrupt.",
       {"Error", "KeyboardInterrupt"}, is<Interrupted>},
      {"Error", "Base class of every iteragpu error.", {"Exception"},
       [](const Error&) { return true; }},
  };
  return errors;
}

PyObject* find_type(const std::string& name) {
  for (const auto& error : python_errors())
    if (name == error.name) return error.type;
  return nullptr;
}

// "--reserve-gib: ..." → "reserve_gib: ...": Python users typed a keyword, not an option.
std::string keyword_name(const std::string& field) {
  std::string keyword = field;
  for (char& c : keyword)
    if (c == '-') c = '_';
  return keyword;
}

void raise_python(PyObject* type, const Error& error) {
  std::string message = error.what();
  py::object field = py::none();
  if (const auto* usage = dynamic_cast<const UsageError*>(&error)) {
    if (!usage->field().empty()) {
      field = py::str(keyword_name(usage->field()));
      message = keyword_name(usage->field()) + ": " + usage->reason();
    }
  }
  // Text from a file or an option (a shard's name, an architecture) reaches the message as
  // the command line shows it: escaped (printable_text.hpp), so a notebook or a terminal that
  // prints the exception shows it and nothing it could do.
  py::object instance = py::reinterpret_borrow<py::object>(type)(printable(message));
  if (!field.is_none()) instance.attr("field") = field;
  PyErr_SetObject(type, instance.ptr());
}

}  // namespace

void register_errors(py::module_& m) {
  const py::module_ builtins = py::module_::import("builtins");
  // Create bases before subclasses: walk the table from the end (Error first).
  auto& errors = python_errors();
  for (auto it = errors.rbegin(); it != errors.rend(); ++it) {
    py::tuple bases(it->bases.size());
    for (std::size_t i = 0; i < it->bases.size(); ++i) {
      PyObject* own = find_type(it->bases[i]);
      bases[i] = own != nullptr ? py::reinterpret_borrow<py::object>(own)
                                : builtins.attr(it->bases[i]);
    }
    const std::string qualified = std::string("iteragpu.") + it->name;
    // A new reference kept for the life of the process, like any module-level type.
    it->type = PyErr_NewExceptionWithDoc(qualified.c_str(), it->doc, bases.ptr(), nullptr);
    if (it->type == nullptr) throw py::error_already_set();
    m.attr(it->name) = py::reinterpret_borrow<py::object>(it->type);
  }
  m.attr("UsageError").attr("field") = py::none();

  py::register_exception_translator([](std::exception_ptr pointer) {
    try {
      if (pointer) std::rethrow_exception(pointer);
    } catch (const Error& error) {
      for (const auto& entry : python_errors()) {
        if (entry.matches(error)) {
          raise_python(entry.type, error);
          return;
        }
      }
    }
  });
}

}  // namespace iteragpu::python
