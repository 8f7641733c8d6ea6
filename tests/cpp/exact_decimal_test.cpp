// ExactDecimal: parsing, canonical text and display rounding.
#include <gtest/gtest.h>

#include "iteragpu/error.hpp"
#include "iteragpu/exact_decimal.hpp"

namespace iteragpu {
namespace {

TEST(ExactDecimal, ParsesToCanonicalText) {
  EXPECT_EQ(ExactDecimal::parse("4").str(), "4");
  EXPECT_EQ(ExactDecimal::parse("4.500").str(), "4.5");
  EXPECT_EQ(ExactDecimal::parse("0010").str(), "10");  // decimal, never octal
  EXPECT_EQ(ExactDecimal::parse("09.90").str(), "9.9");
  EXPECT_EQ(ExactDecimal::parse("-0.25").str(), "-0.25");
  EXPECT_EQ(ExactDecimal::parse("0.000").str(), "0");
  EXPECT_TRUE(ExactDecimal::parse("12").is_integer());
  EXPECT_FALSE(ExactDecimal::parse("1.2").is_integer());
}

TEST(ExactDecimal, RejectsWhatIsNotAPlainDecimal) {
  for (const char* bad : {"", "abc", "1e9", "nan", "inf", "1.", ".5", "1.2.3", " 1", "1 ", "0x10",
                          "--1", "1,5"}) {
    EXPECT_THROW(ExactDecimal::parse(bad, "value"), UsageError) << "'" << bad << "'";
  }
}

TEST(ExactDecimal, RejectsAbsurdlyLongInputWithAClearMessage) {
  try {
    ExactDecimal::parse(std::string(5000, '9'), "reserve-gib");
    FAIL() << "no exception";
  } catch (const UsageError& e) {
    EXPECT_EQ(e.field(), "reserve-gib");
    EXPECT_NE(std::string(e.what()).find("too long"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("expected"), std::string::npos) << e.what();
  }
}

TEST(ExactDecimal, RoundsHalvesAwayFromZeroForDisplayOnly) {
  const ExactDecimal gib = ExactDecimal::parse("13.03851604461669921875");
  EXPECT_EQ(gib.rounded(2), "13.04");
  EXPECT_EQ(gib.rounded(0), "13");
  EXPECT_EQ(ExactDecimal::parse("0.125").rounded(2), "0.13");
  EXPECT_EQ(ExactDecimal::parse("-0.125").rounded(2), "-0.13");
  EXPECT_EQ(ExactDecimal::parse("2.5").rounded(0), "3");
  EXPECT_EQ(ExactDecimal::parse("1.2").rounded(3), "1.200");
  EXPECT_EQ(ExactDecimal::parse("0.004").rounded(2), "0.00");
  EXPECT_EQ(gib.str(), "13.03851604461669921875");  // the exact value is untouched
}

TEST(ExactDecimal, GroupsThousands) {
  EXPECT_EQ(ExactDecimal::parse("14000000000").grouped(0), "14,000,000,000");
  EXPECT_EQ(ExactDecimal::parse("999").grouped(0), "999");
  EXPECT_EQ(ExactDecimal::parse("1000").grouped(2), "1,000.00");
  EXPECT_EQ(ExactDecimal::parse("-1234567.891").grouped(1), "-1,234,567.9");
}

TEST(ExactDecimal, SmallValuesKeepSignificantDigits) {
  EXPECT_EQ(ExactDecimal::parse("0.000523868560791015625").readable(2), "0.000524");
  EXPECT_EQ(ExactDecimal::parse("0.0005625").readable(2), "0.000563");  // halves away from zero
  EXPECT_EQ(ExactDecimal::parse("0.5").readable(2), "0.50");
  EXPECT_EQ(ExactDecimal::parse("0.9999").readable(2), "1.00");
  EXPECT_EQ(ExactDecimal::parse("0").readable(2), "0.00");
  EXPECT_EQ(ExactDecimal::parse("1234.5678").readable(2), "1,234.57");  // from 1 up: grouped()
}

TEST(ExactDecimal, ApproximatesForPlotsOnly) {
  EXPECT_DOUBLE_EQ(ExactDecimal::parse("13.03851604461669921875").approx(), 13.03851604461669921875);
}

}  // namespace
}  // namespace iteragpu
