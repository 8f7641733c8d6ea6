// parse_whole_number and parse_whole_number_up_to_uint64 (mechanics/quantity_parser.hpp):
// every count and size from a command line, a Python keyword or a worker's request goes
// through them. Exact values at the bounds, and the exact UsageError for everything else.
#include <gtest/gtest.h>

#include <climits>
#include <cstdint>
#include <string>

#include "iteragpu/error.hpp"
#include "mechanics/quantity_parser.hpp"

namespace iteragpu::testing {
namespace {

// The UsageError that parsing `text` into [minimum, maximum] throws; a test failure when
// it throws nothing or something else.
UsageError refusal(const std::string& text, const std::string& field, long long minimum, long long maximum) {
  try {
    const long long value = parse_whole_number(text, field, minimum, maximum);
    ADD_FAILURE() << "accepted '" << text << "' as " << value;
  } catch (const UsageError& error) {
    return error;
  }
  return UsageError("", "");
}

UsageError refusal_up_to_uint64(const std::string& text) {
  try {
    const std::uint64_t value = parse_whole_number_up_to_uint64(text, "seed");
    ADD_FAILURE() << "accepted '" << text << "' as " << value;
  } catch (const UsageError& error) {
    return error;
  }
  return UsageError("", "");
}

TEST(ParseWholeNumber, TakesBothBoundsAndNothingPastThem) {
  EXPECT_EQ(parse_whole_number("1", "batch", 1, 16), 1);
  EXPECT_EQ(parse_whole_number("16", "batch", 1, 16), 16);
  EXPECT_EQ(parse_whole_number("7", "batch", 7, 7), 7);
  EXPECT_EQ(parse_whole_number("0", "warmup", 0, 0), 0);
  EXPECT_EQ(std::string(refusal("0", "batch", 1, 16).what()),
            "--batch: '0' is out of range; expected a whole number from 1 to 16");
  EXPECT_EQ(std::string(refusal("17", "batch", 1, 16).what()),
            "--batch: '17' is out of range; expected a whole number from 1 to 16");
  EXPECT_EQ(std::string(refusal("8", "batch", 7, 7).what()),
            "--batch: '8' is out of range; expected a whole number from 7 to 7");
}

TEST(ParseWholeNumber, ReachesTheLargestLongLongExactly) {
  EXPECT_EQ(parse_whole_number("9223372036854775807", "budget", 1, LLONG_MAX), LLONG_MAX);
  EXPECT_EQ(parse_whole_number("9223372036854775806", "budget", 1, LLONG_MAX), LLONG_MAX - 1);
  EXPECT_EQ(std::string(refusal("9223372036854775808", "budget", 1, LLONG_MAX).what()),
            "--budget: '9223372036854775808' is out of range; expected a whole number from 1 to "
            "9223372036854775807");
  // Far past 64 bits: still "out of range" (never wrapped into range, never "not a number").
  EXPECT_EQ(std::string(refusal("340282366920938463463374607431768211457", "budget", 1, LLONG_MAX).what()),
            "--budget: '340282366920938463463374607431768211457' is out of range; expected a whole "
            "number from 1 to 9223372036854775807");
  // 2^64 + 5 would wrap to 5 in 64-bit arithmetic, inside [1, 16].
  EXPECT_EQ(std::string(refusal("18446744073709551621", "batch", 1, 16).what()),
            "--batch: '18446744073709551621' is out of range; expected a whole number from 1 to 16");
}

TEST(ParseWholeNumber, TakesALeadingPlusAndLeadingZeros) {
  EXPECT_EQ(parse_whole_number("+1", "batch", 1, 16), 1);
  EXPECT_EQ(parse_whole_number("0016", "batch", 1, 16), 16);
  EXPECT_EQ(parse_whole_number("+0016", "batch", 1, 16), 16);
  EXPECT_EQ(parse_whole_number("+0", "warmup", 0, 5), 0);
  EXPECT_EQ(parse_whole_number("000", "warmup", 0, 5), 0);
  EXPECT_EQ(std::string(refusal("00017", "batch", 1, 16).what()),
            "--batch: '00017' is out of range; expected a whole number from 1 to 16");
}

TEST(ParseWholeNumber, RefusesSignsSpacesSeparatorsAndOtherNotations) {
  const char* const texts[] = {
      "-0", "-1", "+", "-", "++1", "+-1", "-+1",            // signs: one '+' at most, never '-'
      " 1", "1 ", "  16",                                   // no surrounding space
      "1_000", "1,000", "1'000", "1 000", "1.000",          // no digit separators
      "1.", ".5", "1.0", "1e1", "0x1", "0b1", "010.", "inf", "nan", "one",
      "\xd9\xa1",      // ARABIC-INDIC DIGIT ONE
      "\xef\xbc\x91",  // FULLWIDTH DIGIT ONE
  };
  for (const char* text : texts) {
    const UsageError error = refusal(text, "batch", 0, 1000);
    EXPECT_EQ(std::string(error.what()),
              "--batch: '" + std::string(text) + "' is not a whole number; expected a whole number from 0 to 1000")
        << "for '" << text << "'";
  }
}

TEST(ParseWholeNumber, ShowsControlCharactersEscaped) {
  EXPECT_EQ(std::string(refusal("1\n", "batch", 1, 16).what()),
            "--batch: '1\\x0a' is not a whole number; expected a whole number from 1 to 16");
  EXPECT_EQ(std::string(refusal(std::string("1\0" "2", 3), "batch", 1, 16).what()),
            "--batch: '1\\x002' is not a whole number; expected a whole number from 1 to 16");
  EXPECT_EQ(std::string(refusal("\t16", "batch", 1, 16).what()),
            "--batch: '\\x0916' is not a whole number; expected a whole number from 1 to 16");
  EXPECT_EQ(std::string(refusal("\r16", "batch", 1, 16).what()),
            "--batch: '\\x0d16' is not a whole number; expected a whole number from 1 to 16");
}

TEST(ParseWholeNumber, RefusesEmptyAndOverlongTextBeforeReadingIt) {
  EXPECT_EQ(std::string(refusal("", "batch", 1, 16).what()),
            "--batch: empty value; expected a whole number from 1 to 16");
  // 1000 characters is the longest text read at all: leading zeros up to it still parse.
  EXPECT_EQ(parse_whole_number(std::string(998, '0') + "16", "batch", 1, 16), 16);
  EXPECT_EQ(std::string(refusal(std::string(999, '0') + "16", "batch", 1, 16).what()),
            "--batch: value too long (1001 characters), at most 1000 are accepted; expected a whole "
            "number from 1 to 16");
}

TEST(ParseWholeNumber, CutsALongValueInItsMessage) {
  const std::string long_number(50, '9');
  EXPECT_EQ(std::string(refusal(long_number, "width", 1, 65536).what()),
            "--width: '" + std::string(40, '9') + "...' is out of range; expected a whole number from 1 to 65536");
  EXPECT_EQ(std::string(refusal(std::string(40, '9'), "width", 1, 65536).what()),
            "--width: '" + std::string(40, '9') + "' is out of range; expected a whole number from 1 to 65536");
}

TEST(ParseWholeNumber, ErrorCarriesFieldReasonAndExitCode) {
  const UsageError error = refusal("x", "context", 1, 8);
  EXPECT_EQ(error.field(), "context");
  EXPECT_EQ(error.reason(), "'x' is not a whole number; expected a whole number from 1 to 8");
  EXPECT_EQ(std::string(error.what()), "--context: " + error.reason());
  EXPECT_EQ(error.exit_code(), ExitCode::kBadInputOrUnavailable);
  // Without a field name the message is the reason alone (a value that is not an option).
  const UsageError unnamed = refusal("x", "", 1, 8);
  EXPECT_EQ(unnamed.field(), "");
  EXPECT_EQ(std::string(unnamed.what()), "'x' is not a whole number; expected a whole number from 1 to 8");
}

TEST(ParseWholeNumberUpToUint64, TakesZeroToTwoToTheSixtyFourMinusOne) {
  EXPECT_EQ(parse_whole_number_up_to_uint64("0", "seed"), 0u);
  EXPECT_EQ(parse_whole_number_up_to_uint64("+0", "seed"), 0u);
  EXPECT_EQ(parse_whole_number_up_to_uint64("9223372036854775808", "seed"), 9223372036854775808ULL);
  EXPECT_EQ(parse_whole_number_up_to_uint64("18446744073709551615", "seed"), 18446744073709551615ULL);
  EXPECT_EQ(parse_whole_number_up_to_uint64("+00018446744073709551615", "seed"), 18446744073709551615ULL);
  const std::string range = "expected a whole number from 0 to 18446744073709551615";
  EXPECT_EQ(std::string(refusal_up_to_uint64("18446744073709551616").what()),
            "--seed: '18446744073709551616' is out of range; " + range);
  EXPECT_EQ(std::string(refusal_up_to_uint64("36893488147419103232").what()),  // 2^65
            "--seed: '36893488147419103232' is out of range; " + range);
  EXPECT_EQ(std::string(refusal_up_to_uint64("-1").what()), "--seed: '-1' is not a whole number; " + range);
  EXPECT_EQ(std::string(refusal_up_to_uint64(" 1").what()), "--seed: ' 1' is not a whole number; " + range);
  EXPECT_EQ(std::string(refusal_up_to_uint64("").what()), "--seed: empty value; " + range);
  EXPECT_EQ(refusal_up_to_uint64("1.5").field(), "seed");
}

}  // namespace
}  // namespace iteragpu::testing
