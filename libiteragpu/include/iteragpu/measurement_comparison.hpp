#pragma once
// Measurements side by side (`iteragpu compare`, iteragpu.compare): the configurations, the
// environment fields that differ, each phase's peaks, the warm forwards' times with their
// spread, and each figure's ratio to the first measurement's, with one finding per
// measurement that says what differs from the first and what follows from it.
// Measurements of one workload only: synthetic-MLP measurements with each other (model rows
// from the MLP's sizes, phases model_load ... warm_forward), or checkpoint measurements with
// each other (model rows from the recorded checkpoint, phases weights_load, inputs, the
// largest prefill and decode peaks, and the run's rates).

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "iteragpu/phase_measurer.hpp"

namespace iteragpu {

// One measurement's value of one figure.
struct ComparedValue {
  enum class Kind {
    kAbsent,    // the measurement has no such figure (no warmup row, no GPU timer)
    kText,      // a dtype, a GPU name, a version
    kInteger,   // a size, a count, bytes
    kSeconds,   // a time
    kFraction,  // a coefficient of variation (0.05 = 5 %)
    kRate,      // tokens per second (a checkpoint's prefill and decode rates)
  };
  Kind kind = Kind::kAbsent;
  std::string text;
  std::uint64_t integer = 0;
  double number = 0;  // seconds or fraction

  bool operator==(const ComparedValue& other) const;
  bool operator!=(const ComparedValue& other) const { return !(*this == other); }
};

struct ComparisonRow {
  std::string name;   // unique in its section: "dtype", "warm_forward.peak_reserved_bytes"
  std::string label;  // for people: "warm_forward peak reserved (largest of the repeats)"
  std::string unit;   // "bytes", "seconds", "fraction", "tokens_per_second", or "" (text, counts, sizes)
  std::vector<ComparedValue> values;  // one per measurement, in order
  bool same = true;                   // every value is equal
  // value ÷ the first measurement's value, one per measurement, for the figures whose ratio
  // means something (sizes, bytes, median times); empty for the others. nullopt where
  // either value is absent or the first is 0.
  std::vector<std::optional<double>> ratios;
};

struct ComparisonSection {
  std::string name;   // configuration | model | environment | peaks | times
  std::string title;  // "Peak bytes per phase"
  std::vector<ComparisonRow> rows;

  const ComparisonRow* row(const std::string& row_name) const;  // null when absent
};

struct MeasurementComparison {
  std::vector<std::string> sources;        // each measurement's file, or its label
  std::vector<Measurement> measurements;
  std::vector<ComparisonSection> sections;
  // One sentence per measurement after the first: the configuration and environment fields
  // that differ from the first, and the ratios of the parameter bytes, the largest peaks and
  // the warm median times.
  std::vector<std::string> findings;
  // Every measurement ran a checkpoint (generation, or fine-tuning when `training`); false:
  // every one the synthetic MLP.
  bool checkpoints = false;
  bool training = false;

  // The comparison of `measurements`, labelled by `sources` (as many). UsageError for fewer
  // than two, a count mismatch, or a synthetic-MLP measurement beside a checkpoint one.
  static MeasurementComparison of(const std::vector<std::string>& sources,
                                  const std::vector<Measurement>& measurements);
  // Measurement::read of each path (a DataFileError names the file), then of().
  static MeasurementComparison of_files(const std::vector<std::string>& paths);

  const ComparisonSection* section(const std::string& section_name) const;  // null when absent

  std::string to_text() const;
  std::string to_markdown() const;
  std::string to_csv() const;   // one line per row: section, name, values, ratios
  std::string to_json() const;  // schema "iteragpu.comparison"
};

}  // namespace iteragpu
