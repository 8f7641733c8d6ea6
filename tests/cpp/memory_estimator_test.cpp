// MemoryEstimator: exact bytes, GiB and GB; shorthands; rounding of bits; reserves; bad input.
#include <gtest/gtest.h>

#include "iteragpu/error.hpp"
#include "iteragpu/memory_estimator.hpp"

namespace iteragpu {
namespace {

MemoryEstimate estimate(const std::string& parameters, const std::string& bits,
                        const std::string& reserve = "0") {
  return MemoryEstimator().estimate({parameters, bits, reserve});
}

TEST(MemoryEstimator, SeedExampleIsExact) {
  const MemoryEstimate e = estimate("7000000000", "16", "4");
  EXPECT_EQ(e.weights.bytes.str(), "14000000000");
  EXPECT_EQ(e.weights.gib.str(), "13.03851604461669921875");
  EXPECT_EQ(e.weights.gb.str(), "14");
  EXPECT_EQ(e.reserve.bytes.str(), "4294967296");
  EXPECT_EQ(e.reserve.gib.str(), "4");
  EXPECT_EQ(e.total.bytes.str(), "18294967296");
  EXPECT_EQ(e.total.gib.str(), "17.03851604461669921875");
  EXPECT_EQ(e.total.gb.str(), "18.294967296");
}

TEST(MemoryEstimator, ShorthandsMatchPlainCounts) {
  EXPECT_EQ(estimate("7B", "16").weights.bytes, estimate("7000000000", "16").weights.bytes);
  EXPECT_EQ(estimate("70b", "16").parameters.str(), "70000000000");
  EXPECT_EQ(estimate("1.5M", "8").parameters.str(), "1500000");
  EXPECT_EQ(estimate("2K", "8").parameters.str(), "2000");
  EXPECT_EQ(estimate("1.25T", "8").parameters.str(), "1250000000000");
  EXPECT_EQ(estimate("0.5K", "8").parameters.str(), "500");
}

TEST(MemoryEstimator, TotalBitsAreRoundedUpToWholeBytesOnce) {
  EXPECT_EQ(estimate("1", "4").weights.bytes.str(), "1");   // 4 bits → 1 byte
  EXPECT_EQ(estimate("2", "4").weights.bytes.str(), "1");   // half a byte each, not one
  EXPECT_EQ(estimate("3", "4").weights.bytes.str(), "2");   // 12 bits → 2 bytes
  EXPECT_EQ(estimate("7", "1").weights.bytes.str(), "1");
  EXPECT_EQ(estimate("8", "1").weights.bytes.str(), "1");
  EXPECT_EQ(estimate("9", "1").weights.bytes.str(), "2");
  EXPECT_EQ(estimate("10", "9").weights.bytes.str(), "12");  // 90 bits → 11.25 → 12
  EXPECT_EQ(estimate("7B", "4").weights.bytes.str(), "3500000000");
}

TEST(MemoryEstimator, GibBoundariesAreExact) {
  EXPECT_EQ(estimate("1073741824", "8").weights.gib.str(), "1");
  EXPECT_EQ(estimate("1073741823", "8").weights.gib.str(), "0.999999999068677425384521484375");
  EXPECT_EQ(estimate("1073741825", "8").weights.gib.str(), "1.000000000931322574615478515625");
  EXPECT_EQ(estimate("1", "8").weights.gib.str(), "0.000000000931322574615478515625");
  EXPECT_EQ(estimate("1000000000", "8").weights.gb.str(), "1");
  EXPECT_EQ(estimate("1", "8").weights.gb.str(), "0.000000001");
}

TEST(MemoryEstimator, CountsFarBeyondSixtyFourBitsStayExact) {
  // 2^64 parameters at 16 bits = 2^65 bytes = 2^35 GiB.
  const MemoryEstimate e = estimate("18446744073709551616", "16");
  EXPECT_EQ(e.weights.bytes.str(), "36893488147419103232");
  EXPECT_EQ(e.weights.gib.str(), "34359738368");
  EXPECT_EQ(e.weights.gb.str(), "36893488147.419103232");
  const MemoryEstimate huge = estimate(std::string(300, '9'), "3");
  EXPECT_EQ(huge.weights.bytes.str().size(), 300u);
}

TEST(MemoryEstimator, DecimalReservesAreExact) {
  const MemoryEstimate e = estimate("1", "8", "0.1");
  EXPECT_EQ(e.reserve.bytes.str(), "107374182.4");  // 0.1 GiB is not a whole number of bytes
  EXPECT_EQ(e.reserve.gib.str(), "0.1");
  EXPECT_EQ(e.reserve.gb.str(), "0.1073741824");
  EXPECT_EQ(e.total.bytes.str(), "107374183.4");
  EXPECT_EQ(e.total.gib.str(), "0.100000000931322574615478515625");
  EXPECT_EQ(estimate("1", "8", "0").reserve.bytes.str(), "0");
  EXPECT_EQ(estimate("1", "8", "1.50").reserve.gib.str(), "1.5");
}

void expect_usage_error(const EstimateRequest& request, const std::string& field,
                        const std::string& fragment) {
  try {
    MemoryEstimator().estimate(request);
    FAIL() << "accepted " << request.parameters << " / " << request.bits << " / " << request.reserve_gib;
  } catch (const UsageError& e) {
    EXPECT_EQ(e.field(), field);
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
    EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << "one line: " << e.what();
    EXPECT_EQ(e.exit_code(), ExitCode::kBadInputOrUnavailable);
  }
}

TEST(MemoryEstimator, RejectsBadParameterCounts) {
  for (const char* bad : {"0", "-7", "abc", "", "1.5", "7.5K5", "1e9", "NaN", "B", "7X", "1.2345K",
                          "7 B", "0B"}) {
    expect_usage_error({bad, "16", "0"}, "parameters", "expected a positive integer");
  }
}

TEST(MemoryEstimator, RejectsBadBitWidths) {
  for (const char* bad : {"0", "-16", "16.5", "sixteen", "", "1e2"})
    expect_usage_error({"7B", bad, "0"}, "bits", "expected a positive integer such as 16");
}

TEST(MemoryEstimator, RejectsBadReserves) {
  expect_usage_error({"7B", "16", "-1"}, "reserve-gib", "negative");
  for (const char* bad : {"nan", "inf", "1e999999999", "four", ""})
    expect_usage_error({"7B", "16", bad}, "reserve-gib", "non-negative decimal");
}

TEST(MemoryEstimator, ListsWhatIsNotIncluded) {
  const auto& items = MemoryEstimate::not_included();
  for (const char* expected : {"activations", "KV cache", "quantization metadata", "gradients",
                               "optimizer states", "libraries and the CUDA context"}) {
    EXPECT_NE(std::find(items.begin(), items.end(), expected), items.end()) << expected;
  }
}

TEST(MemoryEstimator, TextNamesTheAssumptionAndTheRounding) {
  const std::string text = estimate("7000000000", "16", "4").to_text();
  EXPECT_NE(text.find("14,000,000,000 bytes = 13.04 GiB = 14.00 GB"), std::string::npos) << text;
  EXPECT_NE(text.find("13.03851604461669921875"), std::string::npos) << text;
  EXPECT_NE(text.find("assumption"), std::string::npos);
  EXPECT_NE(text.find("ceil(parameters x bits / 8)"), std::string::npos);
  EXPECT_NE(text.find("KV cache"), std::string::npos);
  EXPECT_EQ(text.find("--"), std::string::npos) << text;  // Python prints this text too
}

TEST(MemoryEstimator, SmallEstimatesShowSignificantDigits) {
  // 1.5M x 3 bits = 562,500 bytes: not "0.00 GiB = 0.00 GB".
  const std::string text = estimate("1.5M", "3", "0").to_text();
  EXPECT_NE(text.find("562,500 bytes = 0.000524 GiB = 0.000563 GB"), std::string::npos) << text;
}

}  // namespace
}  // namespace iteragpu
