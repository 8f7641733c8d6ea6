// Quotes and cost per accepted result, checked against hand-computed exact figures.

#include "iteragpu/package_calculator.hpp"

#include <gtest/gtest.h>

#include "iteragpu/error.hpp"
#include "process_runner.hpp"
#include "schema_check.hpp"

namespace iteragpu {
namespace {

// A catalog with chosen prices, so every figure below can be worked out by hand.
Catalog test_catalog(const testing::TempDir& dir) {
  const std::string path = dir.file("prices.csv");
  testing::write_file(path,
                      "gpu,gpu_name,days,lot_price_cents,gpus_per_lot,snapshot_date,source\n"
                      "one-cent,Penny Card,7,1,1,2026-01-15,test price\n"
                      "dollar,Dollar Card,3,100,1,2026-01-15,test price\n"
                      "big,Big Card,30,999999999999,8,2026-01-15,test price\n");
  return Catalog::load(path);
}

QuoteRequest request(const std::string& gpu, const std::string& days, const std::string& lots,
                     std::optional<std::string> accepted = std::nullopt) {
  QuoteRequest r;
  r.gpu = gpu;
  r.days = days;
  r.lots = lots;
  r.accepted_results = std::move(accepted);
  return r;
}

// The field a rejected request names, or "accepted".
std::string rejected_field(const PackageCalculator& calculator, const QuoteRequest& r) {
  try {
    calculator.quote(r);
  } catch (const UsageError& e) {
    return e.field();
  }
  return "accepted";
}

TEST(PackageCalculator, TwoB200LotsAreFourGpusAtTwiceTheLotPrice) {
  const PackageCalculator calculator;  // the shipped catalog
  const std::int64_t lot_price = calculator.catalog().find("b200", 7).lot_price_cents;
  ASSERT_EQ(lot_price, 159281);  // data/tarifs-forfaits.csv, line 3
  const Quote quote = calculator.quote(request("b200", "7", "2"));
  EXPECT_EQ(quote.entry.gpu_name, "NVIDIA B200");
  EXPECT_EQ(quote.entry.gpus_per_lot, 2);
  EXPECT_EQ(quote.lots, 2);
  EXPECT_EQ(quote.total_gpus, 4);
  EXPECT_EQ(quote.total_cents.str(), std::to_string(2 * lot_price));
  EXPECT_EQ(quote.total_usd.str(), "3185.62");
  EXPECT_FALSE(quote.unit_cost.has_value());
  EXPECT_EQ(quote.catalog_path, Catalog::shipped_path());
}

TEST(PackageCalculator, GpuKeyIsCaseInsensitiveAndLotsDefaultToOne) {
  const PackageCalculator calculator;
  QuoteRequest r;
  r.gpu = "H100-SXM";
  r.days = "30";
  const Quote quote = calculator.quote(r);
  EXPECT_EQ(quote.entry.gpu, "h100-sxm");
  EXPECT_EQ(quote.lots, 1);
  EXPECT_EQ(quote.total_cents.str(), std::to_string(quote.entry.lot_price_cents));
}

TEST(UnitCost, EvenDivisionIsExact) {
  const Quote quote = PackageCalculator().quote(request("b200", "7", "2", "2"));
  ASSERT_TRUE(quote.unit_cost.has_value());
  const UnitCost& cost = *quote.unit_cost;
  EXPECT_EQ(cost.accepted_results, 2);
  EXPECT_EQ(cost.numerator_cents.str(), "159281");  // 318562 / 2
  EXPECT_EQ(cost.denominator.str(), "1");
  ASSERT_TRUE(cost.exact_usd.has_value());
  EXPECT_EQ(cost.exact_usd->str(), "1592.81");
  EXPECT_EQ(cost.display_usd, "1592.8100");
}

TEST(UnitCost, RepeatingFractionIsReducedAndRoundedForDisplayOnly) {
  // 318562 cents / 6 = 159281/3 cents = 530.936666... dollars.
  const Quote quote = PackageCalculator().quote(request("b200", "7", "2", "6"));
  const UnitCost& cost = *quote.unit_cost;
  EXPECT_EQ(cost.numerator_cents.str(), "159281");
  EXPECT_EQ(cost.denominator.str(), "3");
  EXPECT_FALSE(cost.exact_usd.has_value());
  EXPECT_EQ(cost.display_usd, "530.9367");

  // 318562 cents / 3 = 106187.333... cents = 1061.87333... dollars (gcd 1).
  const UnitCost three = *PackageCalculator().quote(request("b200", "7", "2", "3")).unit_cost;
  EXPECT_EQ(three.numerator_cents.str(), "318562");
  EXPECT_EQ(three.denominator.str(), "3");
  EXPECT_FALSE(three.exact_usd.has_value());
  EXPECT_EQ(three.display_usd, "1061.8733");
}

TEST(UnitCost, TerminatingFractionKeepsAllDigits) {
  // 318562 / 16 = 159281/8 cents = 19910.125 cents = 199.10125 dollars.
  const UnitCost cost = *PackageCalculator().quote(request("b200", "7", "2", "16")).unit_cost;
  EXPECT_EQ(cost.numerator_cents.str(), "159281");
  EXPECT_EQ(cost.denominator.str(), "8");
  ASSERT_TRUE(cost.exact_usd.has_value());
  EXPECT_EQ(cost.exact_usd->str(), "199.10125");
  EXPECT_EQ(cost.display_usd, "199.1013");  // the half rounds away from zero
}

TEST(UnitCost, DisplayRoundsHalvesAwayFromZeroAndSaysSo) {
  const testing::TempDir dir;
  const PackageCalculator calculator(test_catalog(dir));
  // 1 cent / 200 = $0.00005 exactly: a half at the 4th decimal place.
  const UnitCost half = *calculator.quote(request("one-cent", "7", "1", "200")).unit_cost;
  EXPECT_EQ(half.exact_usd->str(), "0.00005");
  EXPECT_EQ(half.display_usd, "0.0001");
  // 1 cent / 300 = $0.0000333...: rounds to zero for display, exact value kept.
  const UnitCost small = *calculator.quote(request("one-cent", "7", "1", "300")).unit_cost;
  EXPECT_EQ(small.numerator_cents.str(), "1");
  EXPECT_EQ(small.denominator.str(), "300");
  EXPECT_EQ(small.display_usd, "0.0000");
  // 100 cents / 3 = $0.3333...
  const UnitCost third = *calculator.quote(request("dollar", "3", "1", "3")).unit_cost;
  EXPECT_EQ(third.display_usd, "0.3333");
  const std::string rule = UnitCost::display_rounding();
  EXPECT_NE(rule.find("4 decimal places"), std::string::npos);
  EXPECT_NE(rule.find("halves away from zero"), std::string::npos);
}

TEST(PackageCalculator, HugeOrdersStayExact) {
  const testing::TempDir dir;
  const PackageCalculator calculator(test_catalog(dir));
  // 1,000,000 lots × 999,999,999,999 cents: beyond 2^53, where a double would round.
  // Money stays exact text; counts are capped below 2^53 so their JSON integers are exact.
  const Quote quote = calculator.quote(request("big", "30", "1000000", "1000000000000000"));
  EXPECT_EQ(quote.total_cents.str(), "999999999999000000");
  EXPECT_EQ(quote.total_usd.str(), "9999999999990000");
  EXPECT_EQ(quote.total_gpus, 8000000);
  EXPECT_EQ(quote.unit_cost->accepted_results, 1000000000000000);
  EXPECT_EQ(quote.unit_cost->numerator_cents.str(), "999999999999");
  EXPECT_EQ(quote.unit_cost->denominator.str(), "1000000000");
  EXPECT_EQ(quote.unit_cost->display_usd, "10.0000");
  EXPECT_EQ(rejected_field(calculator, request("big", "30", "1000001")), "lots");
  EXPECT_EQ(rejected_field(calculator, request("big", "30", "1", std::string("1000000000000001"))),
            "accepted-results");
}

TEST(PackageCalculator, BadInputNamesTheField) {
  const PackageCalculator calculator;
  for (const char* lots : {"0", "-1", "abc", "1.5", "", "1e3", "1000001"})
    EXPECT_EQ(rejected_field(calculator, request("b200", "7", lots)), "lots") << lots;
  for (const char* accepted : {"0", "-3", "x", "2.5", ""})
    EXPECT_EQ(rejected_field(calculator, request("b200", "7", "1", std::string(accepted))),
              "accepted-results")
        << accepted;
  for (const char* gpu : {"b300", "", "b 200"})
    EXPECT_EQ(rejected_field(calculator, request(gpu, "7", "1")), "gpu") << gpu;
  for (const char* days : {"5", "0", "seven", "-7", "31"})
    EXPECT_EQ(rejected_field(calculator, request("b200", days, "1")), "days") << days;
}

TEST(PackageCalculator, MessagesSayWhatIsAccepted) {
  const PackageCalculator calculator;
  try {
    calculator.quote(request("b200", "7", "1", std::string("0")));
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()),
              "--accepted-results: '0' is zero; expected a positive integer such as 1");
  }
  try {
    calculator.quote(request("b200", "14", "1"));
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()),
              "--days: 14 days is not offered for b200 in the catalog; expected 3, 7 or 30");
  }
}

TEST(Quote, JsonValidatesWithAndWithoutUnitCost) {
  const PackageCalculator calculator;
  const std::string without = calculator.quote(request("b200", "7", "2")).to_json();
  EXPECT_EQ(testing::schema_violation(without, "quote.schema.json"), "");
  EXPECT_NE(without.find("\"unit_cost\": null"), std::string::npos) << without;
  const std::string with = calculator.quote(request("b200", "7", "2", "3")).to_json();
  EXPECT_EQ(testing::schema_violation(with, "quote.schema.json"), "");
  EXPECT_NE(with.find("\"display_usd\": \"1061.8733\""), std::string::npos) << with;
  EXPECT_NE(with.find("\"exact_usd\": null"), std::string::npos) << with;
}

TEST(Quote, TextCountsAgreeWithTheirNouns) {
  const PackageCalculator calculator;
  const std::string one = calculator.quote(request("b200", "7", "1")).to_text();
  EXPECT_NE(one.find("7 days, 1 lot\n"), std::string::npos) << one;
  EXPECT_NE(one.find("2 (1 lot x 2 per lot)"), std::string::npos) << one;
  EXPECT_NE(one.find("2 GPUs per lot"), std::string::npos) << one;
  const std::string many = calculator.quote(request("h200", "3", "1000")).to_text();
  EXPECT_NE(many.find("1,000 (1,000 lots x 1 per lot)"), std::string::npos) << many;
  EXPECT_NE(many.find("1 GPU per lot"), std::string::npos) << many;
}

TEST(Quote, TextShowsLabelDateCaveatsAndMissingUnitCost) {
  const PackageCalculator calculator;
  const std::string text = calculator.quote(request("b200", "7", "2")).to_text();
  EXPECT_NE(text.find("Prices: illustrative: invented prices"), std::string::npos) << text;
  EXPECT_NE(text.find("Snapshot date: 2026-12-02"), std::string::npos) << text;
  EXPECT_NE(text.find("$3,185.62 (318562 cents"), std::string::npos) << text;
  EXPECT_NE(text.find("not computed"), std::string::npos) << text;
  EXPECT_NE(text.find("check the provider's page before buying"), std::string::npos) << text;
  EXPECT_NE(text.find("Repeats of the same benchmark are not new accepted results"),
            std::string::npos)
      << text;
  const std::string priced = calculator.quote(request("b200", "7", "2", "3")).to_text();
  EXPECT_NE(priced.find("$1,061.8733 (exactly 318562/3 cents"), std::string::npos) << priced;
  EXPECT_EQ(priced.find("not computed"), std::string::npos) << priced;
}

}  // namespace
}  // namespace iteragpu
