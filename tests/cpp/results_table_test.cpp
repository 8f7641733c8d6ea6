// ResultsTable and report_results: validation with line numbers, round trips, exact costs,
// and the cost per million generated tokens of a checkpoint run.
#include <gtest/gtest.h>
#include <rapidjson/document.h>
#include <unistd.h>

#include "iteragpu/error.hpp"
#include "iteragpu/results_table.hpp"
#include "process_runner.hpp"
#include "schema_check.hpp"

namespace iteragpu::testing {
namespace {

const std::string kHeader =
    "date,measurement_file,measurement_sha256,gpu,days,lots,work_unit,units_attempted,"
    "units_accepted_distinct,quality_metric,acceptance_threshold,observed_value,notes\n";

class ResultsTableTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // A real measurement (the H200 example): results add accepts nothing less.
    write_file(measurement(), read_file(std::string(ITERAGPU_SOURCE_DIR) + "/examples/results/mesures-petit-essai.json"));
  }
  std::string measurement() const { return dir_.file("mesures.json"); }
  std::string table() const { return dir_.file("resultats.csv"); }
  // The SHA-256 as coreutils computes it: an independent check of the library's hash.
  std::string sha256sum(const std::string& path) const {
    return run_process({"/usr/bin/sha256sum", path}).out.substr(0, 64);
  }
  ResultRowRequest request(const std::string& accepted = "163") const {
    ResultRowRequest r;
    r.measurement_file = measurement();
    r.gpu = "h100-sxm";
    r.days = "7";
    r.work_unit = "translated ticket";
    r.attempted = "200";
    r.accepted = accepted;
    r.metric = "reviewer score 1-5";
    r.threshold = ">= 4";
    r.observed = "mean 4.2";
    r.date = "2026-12-01";
    r.notes = "tickets 1-200, reviewer \"A\"";
    r.gpu_mismatch_ok = true;  // the H200 example against other packages, on purpose
    return r;
  }
  void expect_rejected(const std::string& content, const std::string& fragment) {
    write_file(table(), content);
    try {
      ResultsTable::load(table(), catalog_);
      FAIL() << "accepted: " << content;
    } catch (const DataFileError& e) {
      EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
    }
  }
  std::string row(const std::string& fields_after_hash) const {
    return "2026-12-01,mesures.json," + sha256sum(measurement()) + "," + fields_after_hash + "\n";
  }

  TempDir dir_;
  Catalog catalog_ = Catalog::load(Catalog::shipped_path(), true);
};

TEST_F(ResultsTableTest, ShippedTableIsTheHeaderAlone) {
  const ResultsTable shipped =
      ResultsTable::load(std::string(ITERAGPU_DATA_DIR) + "/resultats-bruts.csv", catalog_);
  EXPECT_TRUE(shipped.rows().empty());
  EXPECT_EQ(read_file(std::string(ITERAGPU_DATA_DIR) + "/resultats-bruts.csv"), kHeader);
}

TEST_F(ResultsTableTest, AddThenLoadRoundTrips) {
  ResultsTable::add_result(table(), request(), catalog_);
  ResultsTable::add_result(table(), request("0"), catalog_);
  const ResultsTable loaded = ResultsTable::load(table(), catalog_);
  ASSERT_EQ(loaded.rows().size(), 2u);
  const ResultRow& first = loaded.rows()[0];
  EXPECT_EQ(first.line, 2);
  EXPECT_EQ(first.measurement_file, "mesures.json");  // relative to the table's folder
  EXPECT_EQ(first.measurement_sha256, sha256sum(measurement()));
  EXPECT_EQ(first.gpu, "h100-sxm");
  EXPECT_EQ(first.units_attempted, 200);
  EXPECT_EQ(first.units_accepted_distinct, 163);
  EXPECT_EQ(first.notes, "tickets 1-200, reviewer \"A\"");  // quoted and unquoted intact
  EXPECT_EQ(loaded.rows()[1].units_accepted_distinct, 0);
  EXPECT_EQ(read_file(table()).rfind(kHeader, 0), 0u);
}

TEST_F(ResultsTableTest, AddRefusesBadRequestsNamingTheOption) {
  const auto expect_usage = [&](ResultRowRequest r, const std::string& field) {
    try {
      ResultsTable::add_result(table(), r, catalog_);
      FAIL() << "accepted a bad " << field;
    } catch (const UsageError& e) {
      EXPECT_EQ(e.field(), field) << e.what();
    }
    EXPECT_FALSE(path_exists(table())) << "nothing may be written for a refused row";
  };
  ResultRowRequest r = request();
  r.accepted = "201";
  expect_usage(r, "accepted");
  r = request();
  r.attempted = "-3";
  expect_usage(r, "attempted");
  r = request();
  r.attempted = "2.5";
  expect_usage(r, "attempted");
  r = request();
  r.threshold = "";
  expect_usage(r, "threshold");
  r = request();
  r.gpu = "gtx-9999";
  expect_usage(r, "gpu");
  r = request();
  r.days = "5";
  expect_usage(r, "days");
  r = request();
  r.date = "2026-02-30";
  expect_usage(r, "date");
  r = request();
  r.measurement_file = dir_.file("missing.json");
  expect_usage(r, "measurement");
  write_file(dir_.file("other.json"), "{\"not\": \"a measurement\"}");
  r = request();
  r.measurement_file = dir_.file("other.json");
  expect_usage(r, "measurement");
}

TEST_F(ResultsTableTest, BadTablesAreRejectedWithLineNumbers) {
  expect_rejected("date,gpu\n", "resultats.csv:1: unexpected header");
  expect_rejected(std::string("\xEF\xBB\xBF") + kHeader, "byte-order mark");
  expect_rejected(kHeader + row("h100-sxm,7,1,t,ten,1,m,>= 4,o,"), "resultats.csv:2: units_attempted");
  expect_rejected(kHeader + row("h100-sxm,7,1,t,10,1,m,>= 4,o,") + row("h100-sxm,7,1,t,2,3,m,>= 4,o,"),
                  "resultats.csv:3: units_accepted_distinct: 3 distinct accepted units exceed the 2");
  expect_rejected(kHeader + row("h100-sxm,7,1,t,10,1,m,,o,"), ":2: acceptance_threshold: empty");
  expect_rejected(kHeader + row("h100-sxm,7,0,t,10,1,m,t,o,"), ":2: lots");
  expect_rejected(kHeader + row("nope,7,1,t,10,1,m,t,o,"), ":2: gpu");
  expect_rejected(kHeader + row("h100-sxm,7,1,\"unterminated,10,1,m,t,o,"), "resultats.csv:2:");
  expect_rejected(kHeader + row("h100-sxm,7,1,t,10,1,m,t,o"), ":2:");  // a field missing
  expect_rejected(kHeader + "2026-12-01,mesures.json,abc,h100-sxm,7,1,t,10,1,m,t,o,\n",
                  ":2: measurement_sha256");
  expect_rejected(kHeader + "2026-12-01,mesures.json," + std::string(64, '0') +
                      ",h100-sxm,7,1,t,10,1,m,t,o,\n",
                  ":2: measurement_sha256: ");  // hash mismatch
  expect_rejected(kHeader + "2026-12-01,gone.json," + std::string(64, '0') + ",h100-sxm,7,1,t,10,1,m,t,o,\n",
                  ":2: measurement_file:");
}

TEST_F(ResultsTableTest, CrlfQuotingAndEmbeddedCommasAreAccepted) {
  std::string content = kHeader;
  content += row("h100-sxm,7,1,\"unit, with comma\",10,4,\"say \"\"hi\"\"\",>= 4,o,\"multi\nline\"");
  std::string crlf;
  for (char c : content) crlf += c == '\n' ? std::string("\r\n") : std::string(1, c);
  write_file(table(), crlf);
  const ResultsTable loaded = ResultsTable::load(table(), catalog_);
  ASSERT_EQ(loaded.rows().size(), 1u);
  EXPECT_EQ(loaded.rows()[0].work_unit, "unit, with comma");
  EXPECT_EQ(loaded.rows()[0].quality_metric, "say \"hi\"");
  // Adding to a CRLF table keeps its line ends.
  ResultsTable::add_result(table(), request(), catalog_);
  EXPECT_EQ(ResultsTable::load(table(), catalog_).rows().size(), 2u);
  const std::string after = read_file(table());
  EXPECT_EQ(after.substr(after.size() - 2), "\r\n");
}

TEST_F(ResultsTableTest, AddRefusesToExtendACorruptTable) {
  write_file(table(), std::string(kHeader) + "garbage\n");
  const std::string before = read_file(table());
  EXPECT_THROW(ResultsTable::add_result(table(), request(), catalog_), DataFileError);
  EXPECT_EQ(read_file(table()), before);
}

TEST_F(ResultsTableTest, ReportMatchesHandCalculation) {
  ResultsTable::add_result(table(), request("163"), catalog_);  // h100-sxm 7 days: 47720 cents
  ResultRowRequest b200 = request("0");
  b200.gpu = "b200";
  b200.lots = "2";
  ResultsTable::add_result(table(), b200, catalog_);
  ResultRowRequest even = request("40");  // 47720 / 40 = 1193 cents exactly
  ResultsTable::add_result(table(), even, catalog_);

  const PackageCalculator calculator(catalog_);
  const ResultsReport report =
      report_results(ResultsTable::load(table(), catalog_), calculator, ReportSort::kCost);
  ASSERT_EQ(report.rows.size(), 3u);
  // Cheapest per result first, the row with nothing accepted last.
  EXPECT_EQ(report.rows[0].row.line, 2);  // 47720/163 = 292.76 cents
  EXPECT_EQ(report.rows[0].quote.unit_cost->numerator_cents.str(), "47720");
  EXPECT_EQ(report.rows[0].quote.unit_cost->denominator.str(), "163");
  EXPECT_EQ(report.rows[0].quote.unit_cost->display_usd, "2.9276");
  EXPECT_FALSE(report.rows[0].quote.unit_cost->exact_usd.has_value());
  EXPECT_EQ(report.rows[1].row.line, 4);
  EXPECT_EQ(report.rows[1].quote.unit_cost->exact_usd->str(), "11.93");
  EXPECT_EQ(report.rows[2].row.line, 3);
  EXPECT_FALSE(report.rows[2].quote.unit_cost.has_value());
  EXPECT_EQ(report.rows[2].quote.total_cents.str(), "318562");  // 2 × 159281

  const ResultsReport descending =
      report_results(ResultsTable::load(table(), catalog_), calculator, ReportSort::kCost, true);
  EXPECT_EQ(descending.rows[0].row.line, 4);
  EXPECT_EQ(descending.rows[2].row.line, 3);  // unpriced rows stay last

  const std::string csv = report.to_csv();
  EXPECT_NE(csv.find("2,2026-12-01,h100-sxm,7,1,47720,163,47720,163,2.9276"), std::string::npos) << csv;
  EXPECT_NE(report.to_text().find("illustrative"), std::string::npos);
  EXPECT_THROW(parse_report_sort("price"), UsageError);

  // Every row has its exact line; the row with nothing accepted says so itself.
  const std::string text = report.to_text();
  EXPECT_NE(text.find("  line 2: 47720/163 cents\n"), std::string::npos) << text;
  EXPECT_NE(text.find("  line 4: $11.93\n"), std::string::npos) << text;
  EXPECT_NE(text.find("  line 3: none (no accepted unit, so no cost per result)\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("(3 rows)"), std::string::npos) << text;
  // JSON: counts are integers, money exact text.
  const std::string json = report.to_json();
  EXPECT_EQ(schema_violation(json, "results-report.schema.json"), "");
  EXPECT_NE(json.find("\"lots\": 2,"), std::string::npos) << json;
  EXPECT_NE(json.find("\"total_gpus\": 4,"), std::string::npos) << json;
  EXPECT_NE(json.find("\"accepted_results\": 163,"), std::string::npos) << json;
  EXPECT_NE(json.find("\"package_price_cents\": \"318562\""), std::string::npos) << json;
}

TEST_F(ResultsTableTest, EmptyTableIsSaidToBeEmpty) {
  write_file(table(), std::string(kHeader));
  const ResultsReport report =
      report_results(ResultsTable::load(table(), catalog_), PackageCalculator(catalog_));
  const std::string text = report.to_text();
  EXPECT_NE(text.find("(0 rows)"), std::string::npos) << text;
  EXPECT_NE(text.find("The table has no rows yet"), std::string::npos) << text;
  EXPECT_EQ(text.find("per result\n"), std::string::npos) << text;  // no bare column header
  EXPECT_EQ(text.find("no accepted unit"), std::string::npos) << text;
}

TEST_F(ResultsTableTest, OneRowIsOneRowAndNeedsNoNoteAboutUnacceptedRows) {
  ResultsTable::add_result(table(), request("163"), catalog_);
  const std::string text =
      report_results(ResultsTable::load(table(), catalog_), PackageCalculator(catalog_)).to_text();
  EXPECT_NE(text.find("(1 row)"), std::string::npos) << text;
  EXPECT_EQ(text.find("no accepted unit"), std::string::npos) << text;
}

// --- a checkpoint run: cost per million generated tokens ----------------------------------

// The real H200 run of a Llama 8B checkpoint (bfloat16, batch 4, context 4096, 16 new tokens):
// decode 228.80291828970159 tokens/s as the file writes it (17 significant digits), the double
// whose shortest text is 228.80291828970158.
const std::string kCheckpointRun =
    std::string(ITERAGPU_SOURCE_DIR) + "/examples/results/llama-8b-bfloat16-h200.json";

class CheckpointResultsTest : public ResultsTableTest {
 protected:
  std::string checkpoint_measurement() const { return dir_.file("llama-8b.json"); }
  ResultRowRequest checkpoint_request(const std::string& days = "3", const std::string& lots = "1") const {
    ResultRowRequest r = request("80");
    r.measurement_file = checkpoint_measurement();
    r.gpu = "h200";  // the GPU measured: no mismatch to allow
    r.days = days;
    r.lots = lots;
    r.work_unit = "generated answer";
    r.gpu_mismatch_ok = false;
    return r;
  }
  void SetUp() override {
    ResultsTableTest::SetUp();
    write_file(checkpoint_measurement(), read_file(kCheckpointRun));
  }
};

TEST_F(CheckpointResultsTest, AddAcceptsACheckpointRunAndReadsItsDecodeRate) {
  const ResultRow added = ResultsTable::add_result(table(), checkpoint_request(), catalog_);
  EXPECT_EQ(added.measured_device, "NVIDIA H200");
  EXPECT_TRUE(added.gpu_mismatch.empty());
  ResultsTable::add_result(table(), request(), catalog_);  // a synthetic-MLP run beside it
  const ResultsTable loaded = ResultsTable::load(table(), catalog_);
  ASSERT_EQ(loaded.rows().size(), 2u);
  const auto& rate = loaded.rows()[0].decode_rate;
  ASSERT_TRUE(rate.has_value());
  EXPECT_EQ(rate->decode_tokens_per_second, 228.80291828970158);
  EXPECT_EQ(rate->architecture, "LlamaForCausalLM");
  EXPECT_EQ(rate->dtype, "bfloat16");
  EXPECT_EQ(rate->batch, 4);
  EXPECT_EQ(rate->context, 4096);
  EXPECT_EQ(rate->new_tokens, 16);
  EXPECT_FALSE(loaded.rows()[1].decode_rate.has_value());  // the MLP has no decode rate
  // Not read without verification: nothing to price the tokens with.
  EXPECT_FALSE(ResultsTable::load(table(), catalog_, false).rows()[0].decode_rate.has_value());
}

// By hand: h200 3 days is 27288 cents for 1 GPU, 72 GPU-hours, 379 cents per GPU-hour; an hour
// of decoding at 228.80291828970158 tokens/s is 823,690.505842925688 tokens, so a million
// cost 379 × 10^6 / (3600 × 228.80291828970158) = 379 × 10^20 / (3600 × 22880291828970158)
// cents = 47375000000000000000/102961313230365711 cents (reduced by 800), $4.6012.
TEST_F(CheckpointResultsTest, ReportPricesAMillionGeneratedTokensExactly) {
  ResultsTable::add_result(table(), checkpoint_request(), catalog_);
  ResultsTable::add_result(table(), request(), catalog_);
  const ResultsReport report = report_results(ResultsTable::load(table(), catalog_), PackageCalculator(catalog_));
  ASSERT_EQ(report.rows.size(), 2u);
  const auto& cost = report.rows[0].generated_tokens_cost;
  ASSERT_TRUE(cost.has_value());
  EXPECT_EQ(cost->measured_gpu, "NVIDIA H200");
  // The shortest text of the double, not the file's 17 digits (...159): the same double.
  EXPECT_EQ(cost->price.tokens_per_second.str(), "228.80291828970158");
  EXPECT_EQ(cost->price.gpu_hours, 72);
  EXPECT_EQ(cost->price.numerator_cents.str(), "47375000000000000000");
  EXPECT_EQ(cost->price.denominator.str(), "102961313230365711");
  EXPECT_FALSE(cost->price.exact_usd.has_value());
  EXPECT_EQ(cost->price.display_usd, "4.6012");
  EXPECT_FALSE(report.rows[1].generated_tokens_cost.has_value());  // the MLP's row

  const std::string text = report.to_text();
  EXPECT_NE(text.find("\nPer million generated tokens (checkpoint runs, from the measured decode rate):\n"
                      "  line 2: $4.6012 (exactly 47375000000000000000/102961313230365711 cents), decode "
                      "228.80291828970158 tokens/s measured on NVIDIA H200 (LlamaForCausalLM, bfloat16, batch 4, "
                      "context 4096, 16 new tokens), package $272.88 for 72 GPU-hours; prices: illustrative: "),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("written as its shortest decimal text"), std::string::npos) << text;
  // The MLP's row has a cost per result only.
  EXPECT_EQ(text.find("line 3: $", text.find("Per million generated tokens")), std::string::npos) << text;

  const std::string json = report.to_json();
  ASSERT_EQ(schema_violation(json, "results-report.schema.json"), "") << json;
  rapidjson::Document doc;
  doc.Parse(json.c_str());
  const auto& tokens = doc["rows"][0]["generated_tokens_cost"];
  EXPECT_STREQ(tokens["measured_gpu"].GetString(), "NVIDIA H200");
  EXPECT_STREQ(tokens["decode_tokens_per_second"].GetString(), "228.80291828970158");
  EXPECT_EQ(tokens["gpu_hours"].GetInt64(), 72);
  EXPECT_EQ(tokens["batch"].GetInt64(), 4);
  EXPECT_STREQ(tokens["numerator_cents"].GetString(), "47375000000000000000");
  EXPECT_STREQ(tokens["denominator"].GetString(), "102961313230365711");
  EXPECT_TRUE(tokens["exact_usd"].IsNull());
  EXPECT_STREQ(tokens["display_usd"].GetString(), "4.6012");
  EXPECT_FALSE(doc["rows"][1].HasMember("generated_tokens_cost"));  // MLP rows as before
  // The CSV keeps its columns.
  EXPECT_EQ(report.to_csv().find("generated"), std::string::npos);
}

// The price per GPU-hour does not depend on the lots: 2 lots of h200 7 days is 120976 cents
// for 2 × 7 × 24 = 336 GPU-hours, and 120976 × 10^20 / (336 × 3600 × 22880291828970158)
// = 945125000000000000000/2162187577837679931 cents, $4.3712.
TEST_F(CheckpointResultsTest, GpuHoursCountEveryGpuOfEveryLot) {
  ResultsTable::add_result(table(), checkpoint_request("7", "2"), catalog_);
  const ResultsReport report = report_results(ResultsTable::load(table(), catalog_), PackageCalculator(catalog_));
  const auto& cost = report.rows[0].generated_tokens_cost;
  ASSERT_TRUE(cost.has_value());
  EXPECT_EQ(cost->price.gpu_hours, 336);
  EXPECT_EQ(cost->price.numerator_cents.str(), "945125000000000000000");
  EXPECT_EQ(cost->price.denominator.str(), "2162187577837679931");
  EXPECT_EQ(cost->price.display_usd, "4.3712");
}

// A rate whose shortest text is in exponent form is read digit for digit: a hand-edited copy of
// the real file (a rate no GPU gave), to exercise the conversion only.
TEST_F(CheckpointResultsTest, ARateInExponentFormIsTakenExactly) {
  const struct {
    const char* written;  // in the file
    const char* decimal;
    const char* numerator;
    const char* denominator;
  } cases[] = {
      // 379 × 10^6 / (3600 × 0.000025) = 37900000000/9 cents
      {"2.5e-05", "0.000025", "37900000000", "9"},
      // 379 × 10^6 / (3600 × 1.25 × 10^18) = 379/4500000000000000 cents (the reader takes no
      // number beyond the 64-bit integer range)
      {"1.25e+18", "1250000000000000000", "379", "4500000000000000"},
  };
  for (const auto& c : cases) {
    std::string text = read_file(kCheckpointRun);
    const std::string measured = "\"decode_tokens_per_second\": 228.80291828970159";  // as written
    const std::size_t at = text.find(measured);
    ASSERT_NE(at, std::string::npos);
    text.replace(at, measured.size(), std::string("\"decode_tokens_per_second\": ") + c.written);
    write_file(checkpoint_measurement(), text);
    ::unlink(table().c_str());
    ResultsTable::add_result(table(), checkpoint_request(), catalog_);
    const ResultsReport report = report_results(ResultsTable::load(table(), catalog_), PackageCalculator(catalog_));
    const auto& cost = report.rows[0].generated_tokens_cost;
    ASSERT_TRUE(cost.has_value()) << c.decimal;
    EXPECT_EQ(cost->price.tokens_per_second.str(), c.decimal);
    EXPECT_EQ(cost->price.numerator_cents.str(), c.numerator);
    EXPECT_EQ(cost->price.denominator.str(), c.denominator);
    EXPECT_EQ(schema_violation(report.to_json(), "results-report.schema.json"), "") << c.decimal;
  }
}

}  // namespace
}  // namespace iteragpu::testing
