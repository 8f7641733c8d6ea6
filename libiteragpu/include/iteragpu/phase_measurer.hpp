#pragma once
// A bounded, reproducible memory and time measurement of Linear→GELU→Linear on one GPU,
// phase by phase (SPEC §3).

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "iteragpu/backend.hpp"
#include "iteragpu/environment.hpp"

namespace iteragpu {

struct MeasureRequest {
  std::string device = "cuda:0";
  std::int64_t batch = 1;
  std::int64_t context = 16;   // positions; no attention, no KV cache
  std::int64_t width = 64;
  std::int64_t hidden = 0;     // 0 = 4 × width
  std::string dtype = "float32";  // float32 | float16 | bfloat16
  int warmup = 1;
  int repeats = 2;
  std::uint64_t seed = 20260924;
  std::string output;          // JSON file to create; must not exist
  std::string backend_path;    // explicit plugin file; empty = default search
};

struct PhaseRow {
  std::string phase;      // model_load | inputs | cold_forward | warmup | warm_forward
  int repeat = 0;         // 1-based for warm_forward, 0 otherwise
  int forwards = 0;       // forward passes inside the phase
  double host_seconds = 0;  // host wall clock, overhead and synchronization included
  std::optional<double> gpu_event_seconds;  // between GPU events around the phase's work
  AllocatorCounters baseline;  // allocated/reserved before (peaks unused)
  AllocatorCounters end;       // allocated/reserved after, and the peaks during the phase
};

struct SyntheticModel {
  std::int64_t batch = 0, context = 0, width = 0, hidden = 0;
  std::string dtype;
  int dtype_bytes = 0;
  std::int64_t parameter_count = 0;
  std::int64_t parameter_bytes = 0;
  std::int64_t input_bytes = 0;

  static SyntheticModel from(const MeasureRequest& request);  // validates; UsageError
};

struct Measurement {
  EnvironmentReport environment;
  MeasureRequest configuration;
  SyntheticModel model;
  std::vector<PhaseRow> phases;

  std::string to_json() const;  // schema "iteragpu.measurement"
  std::string to_text() const;
};

// Called after each phase row, for progress display.
using PhaseProgress = std::function<void(const PhaseRow& row, int rows_done, int rows_total)>;

class PhaseMeasurer {
 public:
  PhaseMeasurer();  // the LibTorch plugin, loaded on first use
  explicit PhaseMeasurer(std::shared_ptr<Backend> backend);

  // Validates, refuses an existing output path, measures, then publishes the JSON file
  // atomically (create exclusively, write, link into place). On any failure no file is
  // left. Throws UsageError, BackendUnavailable, DeviceUnavailable, OutputExists,
  // OutOfMemory (naming the phase and configuration), MeasurementFailed, Interrupted.
  Measurement measure(const MeasureRequest& request, const PhaseProgress& progress = {}) const;

  // Same protocol without writing a file (request.output is ignored).
  Measurement run(const MeasureRequest& request, const PhaseProgress& progress = {}) const;

  // Makes measure() stop between phases with Interrupted (async-signal-safe).
  static void request_interrupt();

 private:
  std::shared_ptr<Backend> backend_;
};

}  // namespace iteragpu
