#pragma once
// The spread of the warm repeats' times, and warnings when a time cannot be trusted, in the
// manner of pyperf: a coefficient of variation above 10 %, too few repeats for a stable
// median, a repeat shorter than the timer resolves, a first warm repeat far from the rest.

#include <optional>
#include <string>
#include <vector>

namespace iteragpu {

// Statistics of one series of times, in seconds.
struct SpreadStatistics {
  int count = 0;
  double median = 0;
  double iqr = 0;      // third quartile − first quartile (linear interpolation, as numpy)
  double min = 0;
  double max = 0;
  double mean = 0;
  double stdev = 0;    // sample standard deviation (n − 1); 0 for one value
  double cv = 0;       // stdev / mean; 0 when the mean is 0

  static SpreadStatistics of(const std::vector<double>& seconds);  // count 0 when empty
};

struct TimingWarning {
  std::string code;     // high_cv | few_repeats | below_timer_resolution | first_repeat_outlier
  std::string clock;    // host | gpu_event
  std::string message;  // one sentence a person can act on
};

struct TimingSummary {
  int warm_repeats = 0;
  SpreadStatistics host_seconds;
  std::optional<SpreadStatistics> gpu_event_seconds;  // absent without a GPU timer
  std::vector<TimingWarning> warnings;

  // From the warm repeats' times, in order (the GPU event times absent without a GPU timer).
  static TimingSummary of_warm_repeats(const std::vector<double>& host_seconds,
                                       const std::optional<std::vector<double>>& gpu_event_seconds);
};

}  // namespace iteragpu
