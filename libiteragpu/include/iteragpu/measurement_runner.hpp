#pragma once
// The one way a measurement runs: plan → start worker processes → progress and cancellation
// → collect → summary, for one GPU or many. Each measurement is made by its own worker
// process (iteragpu-measure-worker, installed beside the backend plugin), so its allocator
// counters are that process's on that GPU only, whoever asks: the CLI, Python in a Jupyter
// kernel, or a C++ program. The worker's errors come back as the same exception classes.

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "iteragpu/backend.hpp"
#include "iteragpu/device_target.hpp"
#include "iteragpu/measure_configuration.hpp"
#include "iteragpu/measurement.hpp"
#include "iteragpu/phase_row.hpp"

namespace iteragpu {

// True for "all" or a comma-separated list: the request names several devices.
bool names_several_devices(const std::string& device);

// The result file of one device: <stem>-cuda<N>.json beside the summary file, where <stem>
// is the summary's file name without its last extension ("runs/m.json" → "runs/m-cuda1.json").
std::string per_device_result_path(const std::string& summary_path, int device_index);

// Checks everything before any process starts, and throws at the first problem (nothing is
// written): the configuration (UsageError), the device list — "all" or cuda:N entries
// separated by commas, no duplicates (UsageError) —, the summary path request.output, a
// backend that sees GPUs (BackendUnavailable, DeviceUnavailable), each listed index among
// them (DeviceUnavailable), and every result path absent (OutputExists). "all" means every
// GPU the backend reports, in index order; a list keeps its order. The backend (or, when
// null, the LibTorch plugin) is only asked to describe the stack with no device selected,
// so this process allocates nothing on any GPU.
std::vector<DeviceTarget> plan_device_targets(const MeasureConfiguration& configuration,
                                              const std::shared_ptr<Backend>& backend = nullptr);

// A few figures of one measurement, so the GPUs can be compared at a glance.
struct DeviceResultFigures {
  std::string gpu_name;                          // of the selected device
  double warm_forward_host_seconds_median = 0;   // mean of the middle two for an even count
  std::int64_t model_load_allocated_bytes = 0;   // allocated end − baseline of model_load
  std::uint64_t peak_allocated_bytes_max = 0;    // the largest peak over all phases

  // Checks that `measurement` measured `device` (its configuration and selected device both
  // name it; DataFileError naming `source` otherwise) and takes its figures.
  static DeviceResultFigures of(const Measurement& measurement, const std::string& device,
                                const std::string& source);
};

// What became of one device's worker.
struct DeviceOutcome {
  std::string device;       // "cuda:1"
  int exit_code = 0;        // the worker's; 128 + N when ended by signal N
  std::string result_file;  // empty when no result was written
  std::string error;        // the worker's error message; empty on success
  std::optional<DeviceResultFigures> figures;  // set for a measurement that came back whole
  std::optional<Measurement> measurement;

  bool ok() const { return exit_code == 0 && figures.has_value(); }
};

struct MeasurementSummary {
  MeasureConfiguration configuration;  // what every device ran; output = the summary file
  std::vector<DeviceOutcome> devices;
  bool interrupted = false;  // the run was cancelled (SIGINT/SIGTERM, a kernel interrupt)

  // Every device succeeded and nothing was interrupted.
  bool complete() const;
  // 0 when complete; 130 when interrupted; otherwise the first non-zero exit code in device
  // order, or 1 (internal error) when a worker reported success but its result could not
  // be read back.
  int exit_code() const;

  std::string to_json() const;  // schema "iteragpu.measurement-summary"
  std::string to_text() const;
  // Creates configuration.output with to_json(), atomically and exclusively.
  void publish() const;
};

// Called for each phase row a worker finishes; `device` tells the workers apart.
using RunnerProgress =
    std::function<void(const std::string& device, const PhaseRow& row, int rows_done, int rows_total)>;
// Polled several times a second while workers run: true stops them all, each between two
// phases, writing nothing. A callback that throws stops them the same way, and the runner
// then rethrows its exception.
using CancelRequested = std::function<bool()>;

struct RunnerOptions {
  RunnerProgress progress;
  CancelRequested cancel;
  // Several GPUs: called once the devices are known, before any worker starts.
  std::function<void(const std::vector<DeviceTarget>& targets)> planned;
  // The worker executable; empty: ITERAGPU_MEASURE_WORKER, else beside the core (the
  // `iteragpu` executable, the Python module), else in ../lib/iteragpu from there.
  std::string worker_path;
};

class MeasurementRunner {
 public:
  explicit MeasurementRunner(RunnerOptions options = {});

  // One GPU ("cuda:N") in a fresh worker. Publishes configuration.output when it is set (never
  // overwritten) and returns the measurement; throws what the worker threw (UsageError,
  // DeviceUnavailable, OutOfMemory, Interrupted, ...), or Error when the worker ended
  // without a word.
  Measurement measure(const MeasureConfiguration& configuration) const;

  // Several GPUs ("all" or a list, see plan_device_targets): one worker each, at the same
  // time; a failing GPU does not stop the others. Publishes the summary to
  // configuration.output (required) beside each GPU's result file, and returns it.
  MeasurementSummary measure_devices(const MeasureConfiguration& configuration,
                                     const std::shared_ptr<Backend>& planning_backend = nullptr) const;

 private:
  RunnerOptions options_;
};

}  // namespace iteragpu
