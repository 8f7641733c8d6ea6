#include "iteragpu/error.hpp"

namespace iteragpu {

ErrorRecord record_of(const Error& error) {
  // Most derived first: the first class that matches names the error.
  if (auto usage = dynamic_cast<const UsageError*>(&error)) return {"UsageError", usage->field(), usage->reason()};
  const char* type = "Error";
  if (dynamic_cast<const DataFileError*>(&error)) type = "DataFileError";
  else if (dynamic_cast<const BackendUnavailable*>(&error)) type = "BackendUnavailable";
  else if (dynamic_cast<const DeviceUnavailable*>(&error)) type = "DeviceUnavailable";
  else if (dynamic_cast<const OutputExists*>(&error)) type = "OutputExists";
  else if (dynamic_cast<const OutputUnwritable*>(&error)) type = "OutputUnwritable";
  else if (dynamic_cast<const ResourceUnavailable*>(&error)) type = "ResourceUnavailable";
  else if (dynamic_cast<const OutOfMemory*>(&error)) type = "OutOfMemory";
  else if (dynamic_cast<const MeasurementFailed*>(&error)) type = "MeasurementFailed";
  else if (dynamic_cast<const Interrupted*>(&error)) type = "Interrupted";
  return {type, "", error.what()};
}

void throw_recorded(const ErrorRecord& record) {
  const std::string& type = record.type;
  const std::string& message = record.message;
  if (type == "UsageError") throw UsageError(record.field, message);
  if (type == "DataFileError") throw DataFileError(message);
  if (type == "BackendUnavailable") throw BackendUnavailable(message);
  if (type == "DeviceUnavailable") throw DeviceUnavailable(message);
  if (type == "OutputExists") throw OutputExists(message);
  if (type == "OutputUnwritable") throw OutputUnwritable(message);
  if (type == "ResourceUnavailable") throw ResourceUnavailable(message);
  if (type == "OutOfMemory") throw OutOfMemory(message);
  if (type == "MeasurementFailed") throw MeasurementFailed(message);
  if (type == "Interrupted") throw Interrupted(message);
  throw Error(message);
}

}  // namespace iteragpu
