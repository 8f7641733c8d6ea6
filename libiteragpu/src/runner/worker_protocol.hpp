#pragma once
// What a measurement runner and its worker process say to each other. Every message is a
// JSON document in a JSON text sequence (RFC 7464: RS, the document on one line, LF).
//
//   runner → worker, stdin:  a request record ("iteragpu.worker-request", version 2: the
//                            task, measure or plan, the configuration as the measurement file
//                            writes it, the output path and the backend plugin path); then,
//                            when measuring, one byte per
//                            progress record: kContinue goes on, anything else or the end of
//                            stdin stops the worker at that phase boundary, writing nothing.
//   worker → runner, its original stdout:
//                            a progress record per phase row ("progress"), then either the
//                            measurement itself (schema "iteragpu.measurement") or an error
//                            record ("error": type, field, message); for a plan, the devices
//                            to measure ("plan"), or an error record. Library output never
//                            reaches this channel: the worker points fd 1 at stderr first.

#include <string>
#include <vector>

#include "iteragpu/error.hpp"
#include "iteragpu/measure_configuration.hpp"
#include "iteragpu/device_target.hpp"
#include "iteragpu/measurement.hpp"
#include "iteragpu/phase_row.hpp"

namespace iteragpu::worker_protocol {

inline constexpr char kRecordSeparator = '\x1e';
inline constexpr char kContinue = '+';
// Far above any measurement (a few kilobytes); a longer record is a broken worker.
inline constexpr std::size_t kMaxRecordBytes = 16 * 1024 * 1024;

// A document as one record of a sequence.
std::string record(const std::string& json);

// Measure one GPU, or plan several (the devices "all" or a list names, checked by the
// backend in the worker, so the runner's process never loads LibTorch).
enum class Task { kMeasure, kPlan };
struct WorkerRequest {
  Task task = Task::kMeasure;
  MeasureConfiguration configuration;
};
std::string request_record(const MeasureConfiguration& configuration, Task task = Task::kMeasure);
// DataFileError when `json` is not a whole request record. The configuration's values are
// checked where it is used (SyntheticModel::from), as for a parsed request.
WorkerRequest parse_request(const std::string& json);

std::string plan_record(const std::vector<DeviceTarget>& targets);

std::string progress_record(const PhaseRow& row, int rows_done, int rows_total);
std::string error_record(const ErrorRecord& error);

// One record from a worker, parsed.
struct WorkerMessage {
  enum class Kind { kProgress, kMeasurement, kPlan, kError } kind = Kind::kError;
  PhaseRow row;                  // kProgress
  int rows_done = 0, rows_total = 0;
  Measurement measurement;       // kMeasurement
  std::vector<DeviceTarget> targets;  // kPlan
  ErrorRecord error;             // kError
};
// DataFileError naming `worker` when the record is none of the three.
WorkerMessage parse_worker_message(const std::string& json, const std::string& worker);

}  // namespace iteragpu::worker_protocol
