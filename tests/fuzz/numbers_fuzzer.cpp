// Numbers as users write them: parameter counts with shorthands (7B, 1.5M), bit widths,
// decimals, dates, and the exact estimate built from them.
#include <string>

#include "iteragpu/error.hpp"
#include "iteragpu/memory_estimator.hpp"
#include "mechanics/quantity_parser.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  const auto attempt = [](const auto& action) {
    try {
      action();
    } catch (const iteragpu::Error&) {
    }
  };
  attempt([&] { (void)iteragpu::parse_positive_integer(text, "fuzz"); });
  attempt([&] { (void)iteragpu::parse_bounded_positive_integer(text, "fuzz", 1000000); });
  attempt([&] { (void)iteragpu::parse_decimal(text, "fuzz", true); });
  attempt([&] { (void)iteragpu::parse_parameter_count(text, "fuzz"); });
  (void)iteragpu::is_calendar_date(text);
  const iteragpu::MemoryEstimator estimator;
  attempt([&] { (void)estimator.estimate({text, "16", "4"}).to_json(); });
  attempt([&] { (void)estimator.estimate({"7B", text, "0"}).to_text(); });
  attempt([&] { (void)estimator.estimate({"7B", "4", text}).to_json(); });
  return 0;
}
