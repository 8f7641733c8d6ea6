#pragma once
// The library's error hierarchy. Each class maps to one CLI exit code (exit_code()) and
// one Python exception (python/src/error_bindings.cpp); callers never parse messages.

#include <stdexcept>
#include <string>

namespace iteragpu {

// Exit codes of the `iteragpu` command, documented in the README.
enum class ExitCode : int {
  kSuccess = 0,
  kInternalError = 1,       // a bug: an unexpected exception
  kBadInputOrUnavailable = 2,  // bad input, missing file, no backend/GPU, output exists
  kMeasurementFailed = 3,   // the GPU failed during a measurement (out of memory, ...)
  kHubUnreachable = 4,      // the Hugging Face Hub did not answer, or not as the Hub does; retrying may help
  kInterrupted = 130,       // SIGINT/SIGTERM during a measurement; nothing was written
};

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
  virtual ExitCode exit_code() const { return ExitCode::kInternalError; }
};

// A malformed value. `field` is the option/keyword name without dashes ("parameters").
class UsageError : public Error {
 public:
  UsageError(std::string field, const std::string& reason)
      : Error(field.empty() ? reason : "--" + field + ": " + reason),
        field_(std::move(field)),
        reason_(reason) {}
  const std::string& field() const { return field_; }
  // The message without the "--field: " prefix, for callers that locate it elsewhere.
  const std::string& reason() const { return reason_; }
  ExitCode exit_code() const override { return ExitCode::kBadInputOrUnavailable; }

 private:
  std::string field_;
  std::string reason_;
};

// A data file (catalog, results table) that is missing or malformed: "file:line: reason".
class DataFileError : public Error {
 public:
  using Error::Error;
  ExitCode exit_code() const override { return ExitCode::kBadInputOrUnavailable; }
};

// Something the request needs is not there: no LibTorch backend, no GPU, no such device.
class ResourceUnavailable : public Error {
 public:
  using Error::Error;
  ExitCode exit_code() const override { return ExitCode::kBadInputOrUnavailable; }
};
class BackendUnavailable : public ResourceUnavailable {
 public:
  using ResourceUnavailable::ResourceUnavailable;
};
class DeviceUnavailable : public ResourceUnavailable {
 public:
  using ResourceUnavailable::ResourceUnavailable;
};
// The output path already exists: results are never overwritten.
class OutputExists : public ResourceUnavailable {
 public:
  using ResourceUnavailable::ResourceUnavailable;
};

// Standard output (or another stream the report goes to) cannot be written: closed, full, a
// pipe whose reader is gone. Whatever the command committed before stays committed.
class OutputUnwritable : public ResourceUnavailable {
 public:
  using ResourceUnavailable::ResourceUnavailable;
};

// A model named by a Hub id could not be read over the network: a timeout, a refused
// connection, a TLS failure, an answer cut short or not what was asked. A missing repository
// or a gated one is a UsageError (the request names something that cannot be had).
class HubUnreachable : public Error {
 public:
  using Error::Error;
  ExitCode exit_code() const override { return ExitCode::kHubUnreachable; }
};

// The device failed while measuring. Nothing was written.
class MeasurementFailed : public Error {
 public:
  using Error::Error;
  ExitCode exit_code() const override { return ExitCode::kMeasurementFailed; }
};
class OutOfMemory : public MeasurementFailed {
 public:
  using MeasurementFailed::MeasurementFailed;
};

class Interrupted : public Error {
 public:
  using Error::Error;
  ExitCode exit_code() const override { return ExitCode::kInterrupted; }
};

// An error crosses a process boundary (a measurement worker to its runner) as its class
// name, field, and message, and is thrown again there as the same class: callers still
// never parse messages.
struct ErrorRecord {
  std::string type;     // "OutOfMemory", "UsageError", ... ("Error" for anything else)
  std::string field;    // UsageError only
  std::string message;  // UsageError: the reason, without the "--field: " prefix
};
ErrorRecord record_of(const Error& error);
[[noreturn]] void throw_recorded(const ErrorRecord& record);

}  // namespace iteragpu
