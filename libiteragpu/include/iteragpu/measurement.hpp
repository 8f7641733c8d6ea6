#pragma once
// A measurement: the environment it ran in, its configuration and model, its phase rows, the
// counters predicted for it and the spread of its warm repeats. Written by PhaseMeasurer (in a
// worker process), read back by Measurement::read: the one reader of measurement files.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "iteragpu/decoder_architecture.hpp"
#include "iteragpu/environment.hpp"
#include "iteragpu/error.hpp"
#include "iteragpu/measure_configuration.hpp"
#include "iteragpu/synthetic_model.hpp"
#include "iteragpu/memory_predictor.hpp"
#include "iteragpu/phase_row.hpp"
#include "iteragpu/timing_statistics.hpp"
#include "iteragpu/workload_run.hpp"

namespace iteragpu {

// What Measurement::from_json and Measurement::read throw for anything that is not a whole
// measurement: what() is "SOURCE: reason"; problem() is the reason alone, for a caller that
// names the file its own way (the results table).
class NotAMeasurement : public DataFileError {
 public:
  NotAMeasurement(const std::string& message, std::string problem)
      : DataFileError(message), problem_(std::move(problem)) {}
  const std::string& problem() const { return problem_; }

 private:
  std::string problem_;
};

class Workload;  // what ran inside the phases (libiteragpu/src/workload/workload.hpp), opaque here

struct Measurement {
  EnvironmentReport environment;
  MeasureConfiguration configuration;
  SyntheticModel model;
  std::vector<PhaseRow> phases;
  // The counters predicted for this configuration on this GPU before it was touched, one
  // row per phase row, in the same order; absent when no prediction could be made.
  std::optional<MemoryPrediction> prediction;
  // Spread of the warm repeats' host and GPU event times, with warnings (a checkpoint: its warm
  // decode steps).
  TimingSummary timing;
  // The checkpoint a --model measurement ran (its `model` is then unused).
  std::optional<CheckpointRecord> checkpoint;
  // What the workload's run produced besides the rows, as the workload records it (a
  // checkpoint's tokens, rates and device memory); null when it keeps none.
  std::shared_ptr<const WorkloadRun> run;
  // The workload the measurement ran, or the one its file describes: what writes its sections
  // of the file and the text. Null in a Measurement built by hand: found from the
  // configuration when needed.
  std::shared_ptr<const Workload> workload;

  // The decoder workload's record; null for any other.
  const DecoderRun* decoder_run() const { return dynamic_cast<const DecoderRun*>(run.get()); }
  // The training workload's record; null for any other.
  const TrainingRun* training_run() const { return dynamic_cast<const TrainingRun*>(run.get()); }

  // The prediction for phases[index]; null when there is none.
  const PhasePrediction* predicted_row(std::size_t index) const;
  // How many of the six counters of every row (allocated and reserved at baseline and end,
  // both peaks) equal their prediction.
  int exact_predicted_counters() const;
  // What was measured, as the workload says it (the heading of a prediction): "Linear(64→256)
  // → GELU → Linear(256→64), float32, input [1, 16, 64]", or the checkpoint's architecture,
  // dtype, token ids and new tokens.
  std::string heading() const;

  std::string to_json() const;  // schema "iteragpu.measurement"
  std::string to_text() const;

  // A measurement file read back: from_json(m.to_json(), ...).to_json() == m.to_json().
  // Anything that is not a whole measurement (not JSON, another schema, invalid against the
  // measurement or environment schema, a synthetic model or rows that do not follow from the
  // configuration) is a one-line NotAMeasurement "SOURCE: reason". Files written before the
  // timing summary existed get it computed from their warm rows.
  static Measurement from_json(const std::string& text, const std::string& source);
  // The file at `path`, read like every input of the core (regular files only, bounded).
  static Measurement read(const std::string& path);
};

}  // namespace iteragpu
