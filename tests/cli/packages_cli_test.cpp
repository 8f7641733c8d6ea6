// `iteragpu packages` end to end: exit codes, stdout/stderr discipline, JSON contracts.

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <algorithm>

#include "process_runner.hpp"
#include "schema_check.hpp"

namespace iteragpu::testing {
namespace {

rapidjson::Document parsed(const std::string& json) {
  rapidjson::Document document;
  document.Parse(json.c_str());
  EXPECT_FALSE(document.HasParseError()) << json;
  return document;
}

// Exit 2, nothing on stdout, exactly one line on stderr containing `fragment`.
void expect_usage_error(const std::vector<std::string>& args, const std::string& fragment) {
  std::string shown;
  for (const auto& arg : args) shown += arg + " ";
  const ProcessResult result = run_cli(args);
  EXPECT_EQ(result.exit_code, 2) << shown << "\n" << result.err;
  EXPECT_EQ(result.out, "") << shown;
  EXPECT_EQ(std::count(result.err.begin(), result.err.end(), '\n'), 1) << shown << "\n"
                                                                       << result.err;
  EXPECT_EQ(result.err.rfind("iteragpu packages: error: ", 0), 0u) << result.err;
  EXPECT_NE(result.err.find(fragment), std::string::npos) << shown << "\n" << result.err;
}

TEST(PackagesCli, QuoteJsonWithoutAcceptedResultsHasNullUnitCost) {
  const ProcessResult result =
      run_cli({"packages", "--gpu", "b200", "--days", "7", "--lots", "2", "--format", "json"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.err, "");
  EXPECT_EQ(schema_violation(result.out, "quote.schema.json"), "");
  const rapidjson::Document quote = parsed(result.out);
  EXPECT_TRUE(quote["unit_cost"].IsNull());
  EXPECT_EQ(quote["total_gpus"].GetInt64(), 4);
  EXPECT_EQ(quote["lots"].GetInt64(), 2);
  EXPECT_STREQ(quote["total_cents"].GetString(), "318562");
  EXPECT_STREQ(quote["total_usd"].GetString(), "3185.62");
  EXPECT_STREQ(quote["snapshot_date"].GetString(), "2026-12-02");
  EXPECT_EQ(std::string(quote["source"].GetString()).rfind("illustrative", 0), 0u);
}

TEST(PackagesCli, QuoteJsonWithAcceptedResultsHasTheExactFraction) {
  const ProcessResult result = run_cli({"packages", "--gpu", "B200", "--days", "7", "--lots", "2",
                                        "--accepted-results", "3", "--format", "json"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(schema_violation(result.out, "quote.schema.json"), "");
  const rapidjson::Document quote = parsed(result.out);
  const rapidjson::Value& cost = quote["unit_cost"];
  ASSERT_TRUE(cost.IsObject());
  EXPECT_STREQ(cost["numerator_cents"].GetString(), "318562");
  EXPECT_STREQ(cost["denominator"].GetString(), "3");
  EXPECT_TRUE(cost["exact_usd"].IsNull());
  EXPECT_STREQ(cost["display_usd"].GetString(), "1061.8733");
  EXPECT_EQ(quote["caveats"].Size(), 3u);
}

TEST(PackagesCli, QuoteTextShowsLabelAndSaysUnitCostIsNotComputed) {
  const ProcessResult result = run_cli({"packages", "--gpu", "l4", "--days", "3"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.err, "");
  EXPECT_NE(result.out.find("Prices: illustrative"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("Snapshot date: 2026-12-02"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("not computed"), std::string::npos) << result.out;
}

TEST(PackagesCli, BadInputIsOneLineAndExitTwo) {
  const std::vector<std::string> quote = {"packages", "--gpu", "b200", "--days", "7"};
  const auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = quote;
    args.insert(args.end(), extra.begin(), extra.end());
    return args;
  };
  expect_usage_error({"packages", "--gpu", "b300", "--days", "7"},
                     "--gpu: 'b300' is not in the catalog");
  expect_usage_error({"packages", "--gpu", "b200", "--days", "14"},
                     "--days: 14 days is not offered");
  expect_usage_error(with({"--lots", "0"}), "--lots: '0' is zero");
  expect_usage_error(with({"--lots", "-1"}), "--lots: '-1' is not a positive integer");
  expect_usage_error(with({"--lots", "abc"}), "--lots: 'abc' is not a positive integer");
  expect_usage_error(with({"--accepted-results", "0"}), "--accepted-results: '0' is zero");
  expect_usage_error(with({"--accepted-results", "-4"}), "--accepted-results:");
  expect_usage_error(with({"--catalog", "/nonexistent/prices.csv"}),
                     "/nonexistent/prices.csv: does not exist (expected the CSV file)");
  expect_usage_error(with({"--colour"}), "unrecognised option '--colour'");
  expect_usage_error(with({"--format", "xml"}), "--format:");
  expect_usage_error({"packages", "--gpu", "b200"}, "--days: required");
  expect_usage_error({"packages"}, "--gpu: required");
  expect_usage_error({"packages", "--list", "--gpu", "b200"}, "--list:");
}

TEST(PackagesCli, CatalogWithABadRowNamesFileAndLine) {
  TempDir dir;
  const std::string path = dir.file("prices.csv");
  write_file(path,
             "gpu,gpu_name,days,lot_price_cents,gpus_per_lot,snapshot_date,source\n"
             "x1,Card X1,7,1000,1,2026-01-15,my own quote\n"
             "x1,Card X1,3,4.5,1,2026-01-15,my own quote\n");
  expect_usage_error({"packages", "--gpu", "x1", "--days", "7", "--catalog", path},
                     path + ":3: lot_price_cents: '4.5' is not a positive integer");
}

TEST(PackagesCli, UserCatalogNeedNotBeTheFullGrid) {
  TempDir dir;
  const std::string path = dir.file("prices.csv");
  write_file(path,
             "gpu,gpu_name,days,lot_price_cents,gpus_per_lot,snapshot_date,source\n"
             "x1,Card X1,7,1000,4,2026-01-15,my own quote\n");
  const ProcessResult result =
      run_cli({"packages", "--gpu", "x1", "--days", "7", "--lots", "3", "--accepted-results", "8",
               "--catalog", path, "--format", "json"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(schema_violation(result.out, "quote.schema.json"), "");
  const rapidjson::Document quote = parsed(result.out);
  EXPECT_STREQ(quote["catalog_path"].GetString(), path.c_str());
  EXPECT_STREQ(quote["source"].GetString(), "my own quote");
  EXPECT_EQ(quote["total_gpus"].GetInt64(), 12);
  EXPECT_STREQ(quote["total_usd"].GetString(), "30");
  EXPECT_STREQ(quote["unit_cost"]["exact_usd"].GetString(), "3.75");  // 3000 cents / 8
}

TEST(PackagesCli, ListPrintsTheCatalogAsTextAndJson) {
  const ProcessResult text = run_cli({"packages", "--list"});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("(45 rows)"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("mi300x"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("Prices: illustrative"), std::string::npos) << text.out;

  const ProcessResult json = run_cli({"packages", "--list", "--format", "json"});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  EXPECT_EQ(schema_violation(json.out, "catalog.schema.json"), "");
  EXPECT_EQ(parsed(json.out)["rows"].Size(), 45u);
}

TEST(PackagesCli, HelpExitsZeroAndListsTheOptions) {
  const ProcessResult result = run_cli({"packages", "--help"});
  EXPECT_EQ(result.exit_code, 0);
  EXPECT_EQ(result.err, "");
  for (const char* option :
       {"--gpu", "--days", "--lots", "--accepted-results", "--catalog", "--list"})
    EXPECT_NE(result.out.find(option), std::string::npos) << option;
}

}  // namespace
}  // namespace iteragpu::testing
