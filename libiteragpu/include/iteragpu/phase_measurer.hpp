#pragma once
// A bounded, reproducible memory and time measurement of a workload (the synthetic MLP of
// workload/synthetic_model.cpp) on one GPU, phase by phase (SPEC §3), in this process.

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "iteragpu/backend.hpp"
#include "iteragpu/measure_configuration.hpp"
#include "iteragpu/measurement.hpp"
#include "iteragpu/phase_row.hpp"

namespace iteragpu {

// Called after each phase row, for progress display.
using PhaseProgress = std::function<void(const PhaseRow& row, int rows_done, int rows_total)>;

class PhaseMeasurer {
 public:
  PhaseMeasurer();  // the LibTorch plugin, loaded on first use
  explicit PhaseMeasurer(std::shared_ptr<Backend> backend);

  // Checks the configuration (UsageError), refuses an existing output path, measures, then publishes the JSON file
  // atomically (create exclusively, write, link into place). On any failure no file is
  // left. Throws UsageError, BackendUnavailable, DeviceUnavailable, OutputExists,
  // OutOfMemory (naming the phase and configuration), MeasurementFailed, Interrupted.
  // `published_json`, when given, receives the document written (built once).
  Measurement measure(const MeasureConfiguration& configuration, const PhaseProgress& progress = {},
                      std::string* published_json = nullptr) const;

  // Same protocol without writing a file (configuration.output is ignored).
  Measurement run(const MeasureConfiguration& configuration, const PhaseProgress& progress = {}) const;

  // Makes measure() stop between phases with Interrupted (async-signal-safe).
  static void request_interrupt();

 private:
  std::shared_ptr<Backend> backend_;
};

}  // namespace iteragpu
