// SpreadStatistics and TimingSummary: values computed by hand (numpy's quartiles, the
// sample standard deviation), each warning on both sides of its threshold, and the summary
// a measurement carries in every view.
#include <gtest/gtest.h>

#include <cmath>

#include "fake_backend.hpp"
#include "iteragpu/phase_measurer.hpp"
#include "iteragpu/timing_statistics.hpp"
#include "schema_check.hpp"

namespace iteragpu::testing {
namespace {

std::vector<std::string> codes(const TimingSummary& summary, const std::string& clock) {
  std::vector<std::string> found;
  for (const TimingWarning& warning : summary.warnings)
    if (warning.clock == clock) found.push_back(warning.code);
  return found;
}

bool has(const std::vector<std::string>& codes, const std::string& code) {
  return std::find(codes.begin(), codes.end(), code) != codes.end();
}

TEST(SpreadStatistics, OddCountByHand) {
  // sorted 1 2 3 4 100: median 3, Q1 2, Q3 4, mean 22; squared deviations 441 + 400 + 361 +
  // 324 + 6084 = 7610, sample stdev sqrt(7610 / 4) = 43.62
  const SpreadStatistics s = SpreadStatistics::of({4, 1, 100, 3, 2});
  EXPECT_EQ(s.count, 5);
  EXPECT_DOUBLE_EQ(s.median, 3);
  EXPECT_DOUBLE_EQ(s.iqr, 2);
  EXPECT_DOUBLE_EQ(s.min, 1);
  EXPECT_DOUBLE_EQ(s.max, 100);
  EXPECT_DOUBLE_EQ(s.mean, 22);
  EXPECT_DOUBLE_EQ(s.stdev, std::sqrt(7610.0 / 4));
  EXPECT_DOUBLE_EQ(s.cv, std::sqrt(7610.0 / 4) / 22);
}

TEST(SpreadStatistics, EvenCountInterpolatesLikeNumpy) {
  // numpy.percentile([1, 2, 3, 4], [25, 50, 75]) = 1.75, 2.5, 3.25
  const SpreadStatistics s = SpreadStatistics::of({1, 2, 3, 4});
  EXPECT_DOUBLE_EQ(s.median, 2.5);
  EXPECT_DOUBLE_EQ(s.iqr, 1.5);
}

TEST(SpreadStatistics, OneValueAndIdenticalValuesHaveNoSpread) {
  const SpreadStatistics one = SpreadStatistics::of({0.25});
  EXPECT_EQ(one.count, 1);
  EXPECT_DOUBLE_EQ(one.median, 0.25);
  EXPECT_DOUBLE_EQ(one.stdev, 0);
  EXPECT_DOUBLE_EQ(one.cv, 0);
  const SpreadStatistics same = SpreadStatistics::of({2, 2, 2});
  EXPECT_DOUBLE_EQ(same.iqr, 0);
  EXPECT_DOUBLE_EQ(same.cv, 0);
  EXPECT_EQ(SpreadStatistics::of({}).count, 0);
}

TEST(TimingSummary, SteadyRepeatsRaiseNoWarning) {
  const std::vector<double> host = {1.00e-3, 1.01e-3, 0.99e-3, 1.00e-3, 1.02e-3, 0.98e-3};
  const TimingSummary summary = TimingSummary::of_warm_repeats(host, host);
  EXPECT_TRUE(summary.warnings.empty());
  EXPECT_EQ(summary.warm_repeats, 6);
  ASSERT_TRUE(summary.gpu_event_seconds.has_value());
}

TEST(TimingSummary, CoefficientOfVariationAboveTenPercent) {
  // CV 13.0 % against 5.5 %.
  const std::vector<double> noisy = {0.9e-3, 1.1e-3, 0.9e-3, 1.1e-3, 0.85e-3, 1.15e-3};
  const std::vector<double> calm = {0.95e-3, 1.05e-3, 0.95e-3, 1.05e-3, 0.95e-3, 1.05e-3};
  EXPECT_GT(SpreadStatistics::of(noisy).cv, 0.10);
  EXPECT_LT(SpreadStatistics::of(calm).cv, 0.10);
  EXPECT_TRUE(has(codes(TimingSummary::of_warm_repeats(noisy, std::nullopt), "host"), "high_cv"));
  EXPECT_FALSE(has(codes(TimingSummary::of_warm_repeats(calm, std::nullopt), "host"), "high_cv"));
}

TEST(TimingSummary, FewerThanFiveRepeats) {
  const std::vector<double> four(4, 1e-3), five(5, 1e-3);
  EXPECT_TRUE(has(codes(TimingSummary::of_warm_repeats(four, std::nullopt), "host"), "few_repeats"));
  EXPECT_FALSE(has(codes(TimingSummary::of_warm_repeats(five, std::nullopt), "host"), "few_repeats"));
}

TEST(TimingSummary, GpuRepeatShorterThanOneHundredEventTicks) {
  // CUDA events resolve about 0.5 µs: 100 ticks are 50 µs.
  const std::vector<double> short_ones(5, 40e-6), long_ones(5, 60e-6);
  EXPECT_TRUE(has(codes(TimingSummary::of_warm_repeats(long_ones, short_ones), "gpu_event"),
                  "below_timer_resolution"));
  EXPECT_FALSE(has(codes(TimingSummary::of_warm_repeats(long_ones, long_ones), "gpu_event"),
                   "below_timer_resolution"));
}

TEST(TimingSummary, FirstRepeatFarFromTheOthers) {
  // Others: median 1.0 ms, IQR 0.02 ms. 1.2 ms is 10 IQRs and 20 % away; 1.05 ms only 5 %.
  const std::vector<double> rest = {1.00e-3, 0.99e-3, 1.01e-3, 0.98e-3, 1.02e-3};
  std::vector<double> slow_first = {1.2e-3}, close_first = {1.05e-3};
  slow_first.insert(slow_first.end(), rest.begin(), rest.end());
  close_first.insert(close_first.end(), rest.begin(), rest.end());
  EXPECT_TRUE(has(codes(TimingSummary::of_warm_repeats(slow_first, std::nullopt), "host"),
                  "first_repeat_outlier"));
  EXPECT_FALSE(has(codes(TimingSummary::of_warm_repeats(close_first, std::nullopt), "host"),
                   "first_repeat_outlier"));
}

TEST(TimingSummary, EveryMeasurementCarriesItInEveryView) {
  MeasureRequest request;
  request.repeats = "3";
  const Measurement m = PhaseMeasurer(std::make_shared<FakeBackend>()).run(MeasureConfiguration::parse(request));
  EXPECT_EQ(m.timing.warm_repeats, 3);
  ASSERT_TRUE(m.timing.gpu_event_seconds.has_value());
  EXPECT_DOUBLE_EQ(m.timing.gpu_event_seconds->median, FakeBackend::kGpuEventSeconds);
  EXPECT_TRUE(has(codes(m.timing, "host"), "few_repeats"));
  const std::string json = m.to_json();
  EXPECT_EQ(schema_violation(json, "measurement.schema.json"), "") << json;
  EXPECT_NE(json.find("\"few_repeats\""), std::string::npos);
  const std::string text = m.to_text();
  EXPECT_NE(text.find("Warm repeats (3)"), std::string::npos);
  EXPECT_NE(text.find("warning (few_repeats)"), std::string::npos);
}

TEST(TimingSummary, NoGpuFiguresWithoutAGpuTimer) {
  FakeBackend::Script script;
  script.has_gpu_timer = false;
  const Measurement m = PhaseMeasurer(std::make_shared<FakeBackend>(script)).run(MeasureConfiguration::parse(MeasureRequest{}));
  EXPECT_FALSE(m.timing.gpu_event_seconds.has_value());
  EXPECT_NE(m.to_json().find("\"gpu_event_seconds\": null"), std::string::npos);
}

}  // namespace
}  // namespace iteragpu::testing
