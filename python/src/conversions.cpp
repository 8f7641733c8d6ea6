// Conversions shared by the bindings. Exact numbers leave the core as canonical decimal
// text (ExactDecimal), so they become int / decimal.Decimal without passing through a
// double.

#include "bindings.hpp"
#include "iteragpu/error.hpp"

namespace iteragpu::python {
namespace {

constexpr long long kMaxIntegerBits = 3325;  // 10^1000 < 2^3322: anything longer is refused

}  // namespace

py::object exact_integer(const ExactDecimal& value) {
  PyObject* number = PyLong_FromString(value.str().c_str(), nullptr, 10);
  if (number == nullptr) throw py::error_already_set();
  return py::reinterpret_steal<py::object>(number);
}

py::object exact_decimal(const ExactDecimal& value) {
  return py::module_::import("decimal").attr("Decimal")(value.str());
}

py::object exact_number(const ExactDecimal& value) {
  return value.is_integer() ? exact_integer(value) : exact_decimal(value);
}

std::string utf8_text(py::handle value, const char* keyword) {
  Py_ssize_t size = 0;
  const char* data = PyUnicode_AsUTF8AndSize(value.ptr(), &size);
  if (data == nullptr) {  // a lone surrogate ("\ud800"): not text any file or core can hold
    PyErr_Clear();
    throw UsageError(keyword, "contains a character that is not valid Unicode (a lone surrogate "
                              "such as \\ud800); expected plain text");
  }
  return std::string(data, static_cast<std::size_t>(size));
}

std::string text_keyword(py::handle value, const char* keyword) {
  if (!py::isinstance<py::str>(value))
    throw py::type_error(std::string(keyword) + ": expected a str, got " +
                         py::type::of(value).attr("__name__").cast<std::string>());
  return utf8_text(value, keyword);
}

std::string numeric_keyword_text(py::handle value, const char* keyword) {
  if (py::isinstance<py::str>(value)) return utf8_text(value, keyword);
  // bool is an int subclass, but True as a count is a mistake, not 1.
  if (py::isinstance<py::bool_>(value))
    throw py::type_error(std::string(keyword) + ": expected a number, got a bool");
  if (py::isinstance<py::int_>(value)) {
    // Python refuses str() of an int over 4,300 digits; the core accepts 1,000 characters.
    if (value.attr("bit_length")().cast<long long>() > kMaxIntegerBits)
      throw UsageError(keyword, "has more than 1000 digits; at most 1000 are accepted");
    return py::str(value).cast<std::string>();
  }
  const py::object decimal_type = py::module_::import("decimal").attr("Decimal");
  if (py::isinstance(value, decimal_type)) {
    // Plain notation: str(Decimal("4E+1")) would be "4E+1", which the core rejects.
    return py::module_::import("builtins").attr("format")(value, "f").cast<std::string>();
  }
  if (py::isinstance<py::float_>(value)) {
    // The float's shortest repr, as Python prints it ("0.1", "7.0", "7000000000.0", "nan"):
    // the core's parser then applies the command line's rule, so days=7.0 and
    // parameters=7e9 are refused exactly as --days 7.0 and --parameters 7e9 are.
    return py::repr(value).cast<std::string>();
  }
  throw py::type_error(std::string(keyword) + ": expected an int, a str, a decimal.Decimal "
                       "or a float, got " + py::type::of(value).attr("__name__").cast<std::string>());
}

std::string path_keyword_text(py::handle value, const char* keyword) {
  if (value.is_none()) return "";
  const py::module_ os = py::module_::import("os");
  if (!py::isinstance<py::str>(value) && !py::hasattr(value, "__fspath__"))
    throw py::type_error(std::string(keyword) + ": expected a str or os.PathLike path, got " +
                         py::type::of(value).attr("__name__").cast<std::string>());
  const py::object path = os.attr("fspath")(value);
  if (!py::isinstance<py::str>(path))
    throw py::type_error(std::string(keyword) + ": expected a text path, not bytes");
  std::string text = utf8_text(path, keyword);
  // Every file function of the core takes a C string: a NUL would cut the path short and
  // open another file.
  if (text.find('\0') != std::string::npos)
    throw UsageError(keyword, "contains a NUL character, which no path can hold");
  return text;
}

std::string required_path_keyword(py::handle value, const char* keyword) {
  if (value.is_none())
    throw py::type_error(std::string(keyword) + ": expected a str or os.PathLike path, got None");
  return path_keyword_text(value, keyword);
}

bool bool_keyword(py::handle value, const char* keyword) {
  if (!py::isinstance<py::bool_>(value))
    throw py::type_error(std::string(keyword) + ": expected True or False, got " +
                         py::type::of(value).attr("__name__").cast<std::string>());
  return value.cast<bool>();
}

py::object json_to_dict(const std::string& json) {
  return py::module_::import("json").attr("loads")(json);
}

py::object call_display(const char* function, py::handle argument) {
  return py::module_::import("iteragpu._display").attr(function)(argument);
}

}  // namespace iteragpu::python
