#pragma once
// One measurement per GPU, each made by its own process at the same time
// (`iteragpu measure --device all` or `--device cuda:0,cuda:1`): what to measure and where
// each result goes, and the summary of what came back. Starting the processes is the
// caller's part (the CLI re-executes itself); the plan and the summary live here so that
// every front end checks and reports the same way.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "iteragpu/backend.hpp"
#include "iteragpu/phase_measurer.hpp"

namespace iteragpu {

// True for "all" or a comma-separated list: the request names several devices.
bool names_several_devices(const std::string& device);

// The result file of one device: <stem>-cuda<N>.json beside the summary file, where <stem>
// is the summary's file name without its last extension ("runs/m.json" → "runs/m-cuda1.json").
std::string per_device_result_path(const std::string& summary_path, int device_index);

struct DeviceTarget {
  std::string device;       // "cuda:1"
  int index = 0;
  std::string result_file;  // per_device_result_path(summary, index)
};

// Checks everything before any process starts, and throws at the first problem (nothing is
// written): the configuration (UsageError), the device list — "all" or cuda:N entries
// separated by commas, no duplicates (UsageError) —, the summary path request.output, a
// backend that sees GPUs (BackendUnavailable, DeviceUnavailable), each listed index among
// them (DeviceUnavailable), and every result path absent (OutputExists). "all" means every
// GPU the backend reports, in index order; a list keeps its order. The backend (or, when
// null, the LibTorch plugin) is only asked to describe the stack with no device selected,
// so this process allocates nothing on any GPU.
std::vector<DeviceTarget> plan_device_targets(const MeasureRequest& request,
                                              const std::shared_ptr<Backend>& backend = nullptr);

// A few figures of one result file, so the GPUs can be compared at a glance.
struct DeviceResultFigures {
  std::string gpu_name;                          // of the selected device
  double warm_forward_host_seconds_median = 0;   // mean of the middle two for an even count
  std::int64_t model_load_allocated_bytes = 0;   // allocated end − baseline of model_load
  std::uint64_t peak_allocated_bytes_max = 0;    // the largest peak over all phases

  // Reads a measurement file (schema iteragpu.measurement) and checks that it measured
  // `device`: its configuration and selected device both name it. Throws DataFileError
  // naming the file otherwise.
  static DeviceResultFigures read(const std::string& result_file, const std::string& device);
};

// What became of one device's process.
struct DeviceOutcome {
  std::string device;       // "cuda:1"
  int exit_code = 0;        // the process's; 128 + N when ended by signal N
  std::string result_file;  // empty when no result was written
  std::string error;        // the process's error line; empty on success
  std::optional<DeviceResultFigures> figures;  // set for a result that was read back

  bool ok() const { return exit_code == 0 && figures.has_value(); }
};

struct MeasurementSummary {
  MeasureRequest request;  // the configuration every device ran; output = the summary file
  std::vector<DeviceOutcome> devices;
  bool interrupted = false;  // SIGINT/SIGTERM reached the run

  // Every device succeeded and nothing was interrupted.
  bool complete() const;
  // 0 when complete; 130 when interrupted; otherwise the first non-zero exit code in device
  // order, or 1 (internal error) when a process reported success but its result could not
  // be read back.
  int exit_code() const;

  std::string to_json() const;  // schema "iteragpu.measurement-summary"
  std::string to_text() const;
  // Creates request.output with to_json(), atomically and exclusively (never overwritten).
  void publish() const;
};

}  // namespace iteragpu
