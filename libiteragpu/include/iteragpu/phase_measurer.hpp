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
#include "iteragpu/measure_request.hpp"
#include "iteragpu/memory_predictor.hpp"
#include "iteragpu/timing_statistics.hpp"

namespace iteragpu {

struct PhaseRow {
  std::string phase;      // model_load | inputs | cold_forward | warmup | warm_forward
  int repeat = 0;         // 1-based for warm_forward, 0 otherwise
  int forwards = 0;       // forward passes inside the phase
  double host_seconds = 0;  // host wall clock, overhead and synchronization included
  std::optional<double> gpu_event_seconds;  // between GPU events around the phase's work
  AllocatorCounters baseline;  // allocated/reserved before (peaks unused)
  AllocatorCounters end;       // allocated/reserved after, and the peaks during the phase
};

struct Measurement {
  EnvironmentReport environment;
  MeasureConfiguration configuration;
  SyntheticModel model;
  std::vector<PhaseRow> phases;
  // The counters predicted for this configuration on this GPU before it was touched, one
  // row per phase row, in the same order; absent when no prediction could be made.
  std::optional<MemoryPrediction> prediction;
  // Spread of the warm repeats' host and GPU event times, with warnings.
  TimingSummary timing;

  // The prediction for phases[index]; null when there is none.
  const PhasePrediction* predicted_row(std::size_t index) const;
  // How many of the six counters of every row (allocated and reserved at baseline and end,
  // both peaks) equal their prediction.
  int exact_predicted_counters() const;

  std::string to_json() const;  // schema "iteragpu.measurement"
  std::string to_text() const;

  // A measurement file read back: from_json(m.to_json(), ...).to_json() == m.to_json().
  // Anything that is not a whole measurement (not JSON, another schema, invalid against the
  // measurement or environment schema, a synthetic model or rows that do not follow from the
  // configuration) is a one-line DataFileError "SOURCE: reason". Files written before the
  // timing summary existed get it computed from their warm rows.
  static Measurement from_json(const std::string& text, const std::string& source);
  // The file at `path`, read like every input of the core (regular files only, bounded).
  static Measurement read(const std::string& path);
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
  // `published_json`, when given, receives the document written (built once).
  Measurement measure(const MeasureRequest& request, const PhaseProgress& progress = {},
                      std::string* published_json = nullptr) const;

  // Same protocol without writing a file (request.output is ignored).
  Measurement run(const MeasureRequest& request, const PhaseProgress& progress = {}) const;

  // Makes measure() stop between phases with Interrupted (async-signal-safe).
  static void request_interrupt();

 private:
  std::shared_ptr<Backend> backend_;
};

}  // namespace iteragpu
