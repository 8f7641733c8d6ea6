#pragma once
// What an action throws, by its exact class: message_of<Base> (expect_error.hpp) also
// accepts a subclass, so it cannot tell OutputExists from the ResourceUnavailable it
// derives from. The mechanics tests need that difference (one exit code, one Python
// exception each).

#include <exception>
#include <functional>
#include <string>
#include <typeinfo>

#include "iteragpu/error.hpp"
#include "mechanics/csv_reader.hpp"
#include "mechanics/input_file.hpp"

namespace iteragpu::testing {

struct Thrown {
  std::string type;  // "OutputExists", ..., "nothing" when the action returned
  std::string message;
};

inline std::string exact_type_name(const std::exception& error) {
  if (typeid(error) == typeid(OutputExists)) return "OutputExists";
  if (typeid(error) == typeid(ResourceUnavailable)) return "ResourceUnavailable";
  if (typeid(error) == typeid(UsageError)) return "UsageError";
  if (typeid(error) == typeid(InputFileError)) return "InputFileError";
  // data_file_error()'s class only keeps the message's parts (results check --format json):
  // the same exit code and Python exception as the DataFileError it derives from.
  if (typeid(error) == typeid(DataFileError) || typeid(error) == typeid(LocatedDataFileError))
    return "DataFileError";
  return std::string("other: ") + typeid(error).name();
}

inline Thrown thrown_by(const std::function<void()>& action) {
  try {
    action();
  } catch (const std::exception& error) {
    return {exact_type_name(error), error.what()};
  }
  return {"nothing", ""};
}

}  // namespace iteragpu::testing
