#include "iteragpu/timing_statistics.hpp"

#include <time.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>

namespace iteragpu {
namespace {

// pyperf calls a benchmark unstable when the standard deviation exceeds 10 % of the mean.
constexpr double kMaxCoefficientOfVariation = 0.10;
// Below this many samples the median moves by a whole sample when one repeat is added.
constexpr int kMinStableRepeats = 5;
// A time should be at least this many timer ticks long to be read to 1 %.
constexpr double kResolutionsPerRepeat = 100;
// cudaEventElapsedTime has "a resolution of around 0.5 microseconds" (CUDA Runtime API).
constexpr double kGpuEventResolutionSeconds = 0.5e-6;
// The first warm repeat is an outlier when it is this many IQRs of the others from their
// median, and by at least this fraction of it (an IQR of zero would flag any difference).
constexpr double kOutlierIqrs = 3;
constexpr double kOutlierMinimumFraction = 0.10;

// numpy.percentile's default (linear interpolation between closest ranks).
double quantile(const std::vector<double>& sorted, double q) {
  const double position = q * static_cast<double>(sorted.size() - 1);
  const auto below = static_cast<std::size_t>(std::floor(position));
  const std::size_t above = std::min(below + 1, sorted.size() - 1);
  return sorted[below] + (sorted[above] - sorted[below]) * (position - static_cast<double>(below));
}

double host_clock_resolution_seconds() {
  struct timespec resolution {};
  if (clock_getres(CLOCK_MONOTONIC, &resolution) != 0) return 1e-6;  // a safe assumption
  return static_cast<double>(resolution.tv_sec) + static_cast<double>(resolution.tv_nsec) * 1e-9;
}

std::string microseconds(double seconds) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f µs", seconds * 1e6);
  return text;
}

std::string percent(double fraction) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f %%", fraction * 100);
  return text;
}

void add_warnings(const std::vector<double>& seconds, const SpreadStatistics& spread,
                  const std::string& clock, double resolution, std::vector<TimingWarning>& warnings) {
  const std::string label = clock == "host" ? "host time" : "GPU event time";
  if (spread.count == 0) return;
  if (spread.cv > kMaxCoefficientOfVariation)
    warnings.push_back({"high_cv", clock,
                        "the warm repeats' " + label + " varies by " + percent(spread.cv) +
                            " of its mean (more than 10 %): the median is not stable; keep the "
                            "GPU otherwise idle and use more repeats"});
  if (spread.min < kResolutionsPerRepeat * resolution)
    warnings.push_back({"below_timer_resolution", clock,
                        "the shortest warm repeat's " + label + " (" + microseconds(spread.min) +
                            ") is under 100 ticks of its clock (" + microseconds(resolution) +
                            "): the figure is not resolved to 1 %; use a larger configuration"});
  if (seconds.size() >= 3) {
    const std::vector<double> others(seconds.begin() + 1, seconds.end());
    const SpreadStatistics rest = SpreadStatistics::of(others);
    const double distance = std::fabs(seconds.front() - rest.median);
    if (distance > kOutlierIqrs * rest.iqr && distance > kOutlierMinimumFraction * rest.median)
      warnings.push_back({"first_repeat_outlier", clock,
                          "the first warm repeat's " + label + " (" + microseconds(seconds.front()) +
                              ") is far from the others' median (" + microseconds(rest.median) +
                              "): the warm-up did not settle the GPU; use more warm-up forwards"});
  }
}

}  // namespace

SpreadStatistics SpreadStatistics::of(const std::vector<double>& seconds) {
  SpreadStatistics spread;
  if (seconds.empty()) return spread;
  std::vector<double> sorted = seconds;
  std::sort(sorted.begin(), sorted.end());
  const double n = static_cast<double>(sorted.size());
  spread.count = static_cast<int>(sorted.size());
  spread.median = quantile(sorted, 0.5);
  spread.iqr = quantile(sorted, 0.75) - quantile(sorted, 0.25);
  spread.min = sorted.front();
  spread.max = sorted.back();
  spread.mean = std::accumulate(sorted.begin(), sorted.end(), 0.0) / n;
  if (sorted.size() > 1) {
    double squares = 0;
    for (double value : sorted) squares += (value - spread.mean) * (value - spread.mean);
    spread.stdev = std::sqrt(squares / (n - 1));
  }
  spread.cv = spread.mean > 0 ? spread.stdev / spread.mean : 0;
  return spread;
}

TimingSummary TimingSummary::of_warm_repeats(const std::vector<double>& host_seconds,
                                             const std::optional<std::vector<double>>& gpu_event_seconds) {
  TimingSummary summary;
  summary.warm_repeats = static_cast<int>(host_seconds.size());
  summary.host_seconds = SpreadStatistics::of(host_seconds);
  if (gpu_event_seconds) summary.gpu_event_seconds = SpreadStatistics::of(*gpu_event_seconds);
  if (summary.warm_repeats > 0 && summary.warm_repeats < kMinStableRepeats)
    summary.warnings.push_back(
        {"few_repeats", "host",
         std::to_string(summary.warm_repeats) +
             (summary.warm_repeats == 1 ? " warm repeat is" : " warm repeats are") +
             " too few for a stable median; use " + std::to_string(kMinStableRepeats) +
             " repeats or more"});
  add_warnings(host_seconds, summary.host_seconds, "host", host_clock_resolution_seconds(), summary.warnings);
  if (gpu_event_seconds)
    add_warnings(*gpu_event_seconds, *summary.gpu_event_seconds, "gpu_event", kGpuEventResolutionSeconds,
                 summary.warnings);
  return summary;
}

}  // namespace iteragpu
