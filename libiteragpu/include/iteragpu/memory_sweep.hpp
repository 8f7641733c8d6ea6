#pragma once
// `iteragpu sweep`: what the original kit leaves to its users ("grow one dimension at a time
// and watch free memory"), done for them. From a starting configuration one dimension grows
// geometrically until the peak reserved memory passes a budget, then a bisection finds the
// largest value that stays under it; the value above it is measured too, so the boundary is
// shown, not inferred. Every point is a whole measurement in its own worker process; an
// out-of-memory point is a data point. Where the predictor applies, it proposes the boundary
// before the search and two measurements confirm it.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "iteragpu/measure_configuration.hpp"
#include "iteragpu/measurement_runner.hpp"

namespace iteragpu {

struct SweepRequest {
  MeasureConfiguration start;   // the configuration grown from: one cuda:N; its output is ignored
  std::string vary;             // batch | context | width | hidden
  // A percentage of the free memory the runtime reports at the first point ("50%"), or a
  // number of bytes ("40000000000").
  std::string budget = "50%";
  std::string output;           // new JSON file for the sweep (never overwritten); empty: none
  // The catalog GPU whose memory less the footprint outside the allocator gave `budget` (in
  // bytes); empty when the budget was given as such.
  std::string package;
};

struct SweepPoint {
  std::int64_t value = 0;
  // fits | over budget | out of memory
  std::string outcome;
  bool fits = false;                                  // peak reserved ≤ the budget
  std::optional<std::uint64_t> peak_reserved_bytes;   // the largest over the phases
  std::optional<std::uint64_t> peak_allocated_bytes;
  std::optional<std::uint64_t> predicted_peak_reserved_bytes;  // the predictor's, for this point
  std::optional<double> warm_forward_host_seconds_median;
  std::string error;                                  // why it did not run to the end
};

struct SweepResult {
  MeasureConfiguration start;
  std::string vary;
  std::string budget;                   // as given
  std::string package;                  // the catalog GPU that gave the budget, if one did
  std::uint64_t budget_bytes = 0;
  std::uint64_t free_bytes = 0;         // what the runtime reported at the first point
  std::string gpu_name;
  std::vector<SweepPoint> points;       // in the order they were measured
  std::optional<std::int64_t> predicted_largest;     // the predictor's proposal, before measuring
  std::optional<std::int64_t> largest_fitting;       // none: not even 1 fits
  std::optional<std::int64_t> smallest_not_fitting;  // largest_fitting + 1 when measured
  // The largest value the workload accepts (a checkpoint's positions, a bounded measurement's
  // sizes): the search never goes above it. Why the value above it is refused; empty when
  // kMaxModelDimension itself is accepted.
  std::int64_t largest_accepted = kMaxModelDimension;
  std::string beyond_largest_accepted;

  int measurements() const { return static_cast<int>(points.size()); }
  std::vector<SweepPoint> points_by_value() const;

  std::string to_json() const;  // schema "iteragpu.sweep"
  std::string to_text() const;
  void publish() const;         // to output, exclusively; nothing when output is empty
  std::string output;
};

// The search alone, over any way of measuring a point: the sweep gives it the runner, the
// tests a memory model they know. `measure` must be monotone (a larger value never needs
// less memory); `predict`, when set, proposes the peak reserved bytes of a value.
struct SweepProbe {
  std::function<SweepPoint(std::int64_t value)> measure;
  std::function<std::optional<std::uint64_t>(std::int64_t value)> predict;
};
struct SweepSearch {
  std::vector<SweepPoint> points;
  std::optional<std::int64_t> predicted_largest;
  std::optional<std::int64_t> largest_fitting;
  std::optional<std::int64_t> smallest_not_fitting;
};
// `first` is the starting point, already measured; values stay within [1, max_value].
SweepSearch search_largest_fitting(const SweepPoint& first, std::int64_t max_value,
                                   std::uint64_t budget_bytes, const SweepProbe& probe);

class MemorySweep {
 public:
  // Points are measured through `runner` (its progress and cancellation apply); `on_point`
  // is called after each one.
  explicit MemorySweep(MeasurementRunner runner,
                       std::function<void(const SweepPoint& point, int measurements)> on_point = {});

  // UsageError for a bad request (before any worker starts); the first point's errors as
  // the runner throws them (no GPU, no backend); Interrupted when cancelled (no file).
  SweepResult run(const SweepRequest& request) const;

 private:
  MeasurementRunner runner_;
  std::function<void(const SweepPoint&, int)> on_point_;
};

}  // namespace iteragpu
