// `iteragpu results` end to end: add/check/report, exit codes, schema-valid JSON, and the
// two promises of the table: concurrent adds lose nothing, an interrupted add never leaves
// a mixed table.
#include <gtest/gtest.h>
#include <rapidjson/document.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <random>
#include <set>
#include <thread>

#include "iteragpu/results_table.hpp"
#include "process_runner.hpp"
#include "schema_check.hpp"

namespace iteragpu::testing {
namespace {

class ResultsCli : public ::testing::Test {
 protected:
  void SetUp() override {
    // A real measurement (the H200 example): results add accepts nothing less.
    write_file(dir_.file("m.json"), read_file(std::string(ITERAGPU_SOURCE_DIR) + "/examples/results/mesures-petit-essai.json"));
  }
  std::vector<std::string> add_args(const std::string& notes, const std::string& accepted = "3") const {
    return {"results", "add", "--table", table(), "--measurement", dir_.file("m.json"),
            "--gpu", "b200", "--days", "7", "--lots", "2", "--work-unit", "labelled image",
            "--attempted", "10", "--accepted", accepted, "--metric", "IoU",
            "--threshold", ">= 0.8", "--observed", "0.84", "--date", "2026-12-01", "--notes", notes,
            // The H200 example against a B200 package, on purpose: these tests are about the
            // table and its prices.
            "--gpu-mismatch-ok"};
  }
  std::string table() const { return dir_.file("resultats.csv"); }
  std::size_t row_count() const {
    return ResultsTable::load(table(), Catalog::load(Catalog::shipped_path(), true)).rows().size();
  }
  TempDir dir_;
};

TEST_F(ResultsCli, AddCheckReport) {
  ASSERT_EQ(run_cli(add_args("first")).exit_code, 0);
  const ProcessResult second = run_cli(add_args("second", "0"));
  ASSERT_EQ(second.exit_code, 0) << second.err;
  EXPECT_NE(second.out.find("added to"), std::string::npos);

  const ProcessResult check = run_cli({"results", "check", "--table", table()});
  EXPECT_EQ(check.exit_code, 0) << check.err;
  EXPECT_NE(check.out.find("2 rows"), std::string::npos) << check.out;
  EXPECT_NE(check.out.find("  line 2: measured on NVIDIA H200, which b200 does not cover (NVIDIA B200)\n"
                           "  line 3: measured on NVIDIA H200"),
            std::string::npos)
      << check.out;

  const ProcessResult report = run_cli({"results", "report", "--table", table(), "--format", "json"});
  ASSERT_EQ(report.exit_code, 0) << report.err;
  EXPECT_EQ(schema_violation(report.out, "results-report.schema.json"), "");
  rapidjson::Document doc;
  doc.Parse(report.out.c_str());
  ASSERT_EQ(doc["rows"].Size(), 2u);
  // b200 7 days = 159281 cents a lot; 2 lots / 3 accepted = 318562/3 cents.
  const auto& cost = doc["rows"][0]["unit_cost"];
  EXPECT_STREQ(doc["rows"][0]["package_price_cents"].GetString(), "318562");
  EXPECT_STREQ(cost["numerator_cents"].GetString(), "318562");
  EXPECT_STREQ(cost["denominator"].GetString(), "3");
  EXPECT_STREQ(cost["display_usd"].GetString(), "1061.8733");
  EXPECT_TRUE(doc["rows"][1]["unit_cost"].IsNull());
  // Recorded with --gpu-mismatch-ok: every view says which GPU was measured.
  EXPECT_STREQ(doc["rows"][0]["measured_gpu"].GetString(), "NVIDIA H200");
  EXPECT_STREQ(doc["rows"][0]["gpu_mismatch"].GetString(),
               "measured on NVIDIA H200, which b200 does not cover (NVIDIA B200)");

  const ProcessResult csv = run_cli({"results", "report", "--table", table(), "--format", "csv"});
  EXPECT_EQ(csv.exit_code, 0);
  EXPECT_NE(csv.out.find("318562,3,318562,3,1061.8733,NVIDIA H200\n"), std::string::npos) << csv.out;
  const ProcessResult text = run_cli({"results", "report", "--table", table(), "--sort", "cost"});
  EXPECT_NE(text.out.find("illustrative"), std::string::npos);
  EXPECT_NE(text.out.find("Measured on another GPU than the package's (recorded with gpu-mismatch-ok):\n"
                          "  line 2: measured on NVIDIA H200, which b200 does not cover (NVIDIA B200)\n"
                          "  line 3: measured on NVIDIA H200"),
            std::string::npos)
      << text.out;
}

// A checkpoint run (the real H200 Llama 8B measurement): added like any real run; the report
// prices its generated tokens from the measured decode rate, naming the GPU and the prices' label.
TEST_F(ResultsCli, ACheckpointRunGetsACostPerMillionGeneratedTokens) {
  write_file(dir_.file("llama.json"),
             read_file(std::string(ITERAGPU_SOURCE_DIR) + "/examples/results/llama-8b-bfloat16-h200.json"));
  const ProcessResult add = run_cli({"results", "add", "--table", table(), "--measurement", dir_.file("llama.json"),
                                     "--gpu", "h200", "--days", "3", "--work-unit", "generated answer",
                                     "--attempted", "100", "--accepted", "80", "--metric", "exact match",
                                     "--threshold", ">= 0.9", "--observed", "0.93", "--date", "2026-12-05"});
  ASSERT_EQ(add.exit_code, 0) << add.err;
  ASSERT_EQ(run_cli(add_args("an MLP run")).exit_code, 0);
  const ProcessResult check = run_cli({"results", "check", "--table", table()});
  EXPECT_EQ(check.exit_code, 0) << check.err;

  const ProcessResult text = run_cli({"results", "report", "--table", table()});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("Per million generated tokens (checkpoint runs, from the measured decode rate):\n"
                          "  line 2: $4.6012 (exactly 47375000000000000000/102961313230365711 cents), decode "
                          "228.80291828970158 tokens/s measured on NVIDIA H200 (LlamaForCausalLM, bfloat16, "
                          "batch 4, context 4096, 16 new tokens), package $272.88 for 72 GPU-hours; prices: "
                          "illustrative: invented prices, not a real offer"),
            std::string::npos)
      << text.out;
  const ProcessResult json = run_cli({"results", "report", "--table", table(), "--format", "json"});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  EXPECT_EQ(schema_violation(json.out, "results-report.schema.json"), "");
  rapidjson::Document doc;
  doc.Parse(json.out.c_str());
  EXPECT_STREQ(doc["rows"][0]["generated_tokens_cost"]["display_usd"].GetString(), "4.6012");
  EXPECT_STREQ(doc["rows"][0]["generated_tokens_cost"]["measured_gpu"].GetString(), "NVIDIA H200");
  EXPECT_FALSE(doc["rows"][1].HasMember("generated_tokens_cost"));
}

// --format json: add describes the row added, check the table's validity; a problem found
// is in the document too, with the same error line and exit status as the text.
TEST_F(ResultsCli, AddAndCheckPrintJsonWhenAsked) {
  ASSERT_EQ(run_cli(add_args("first")).exit_code, 0);
  std::vector<std::string> args = add_args("second, json", "0");
  args.insert(args.end(), {"--format", "json"});
  const ProcessResult add = run_cli(args);
  ASSERT_EQ(add.exit_code, 0) << add.err;
  EXPECT_EQ(add.err, "");
  EXPECT_EQ(schema_violation(add.out, "results-add.schema.json"), "") << add.out;
  rapidjson::Document added;
  added.Parse(add.out.c_str());
  ASSERT_TRUE(added.IsObject()) << add.out;
  EXPECT_STREQ(added["schema"].GetString(), "iteragpu.results-add");
  EXPECT_EQ(added["table_path"].GetString(), table());
  EXPECT_EQ(added["line"].GetInt(), 3);
  const auto& row = added["row"];
  EXPECT_STREQ(row["date"].GetString(), "2026-12-01");
  EXPECT_STREQ(row["measurement_file"].GetString(), "m.json");  // relative to the table's folder
  EXPECT_EQ(row["measurement_sha256"].GetStringLength(), 64u);
  EXPECT_STREQ(row["gpu"].GetString(), "b200");
  EXPECT_EQ(row["days"].GetInt(), 7);
  EXPECT_EQ(row["lots"].GetInt(), 2);
  EXPECT_EQ(row["units_attempted"].GetInt(), 10);
  EXPECT_EQ(row["units_accepted_distinct"].GetInt(), 0);
  EXPECT_STREQ(row["acceptance_threshold"].GetString(), ">= 0.8");
  EXPECT_STREQ(row["notes"].GetString(), "second, json");
  EXPECT_STREQ(added["measured_gpu"].GetString(), "NVIDIA H200");
  EXPECT_STREQ(added["gpu_mismatch"].GetString(),
               "measured on NVIDIA H200, which b200 does not cover (NVIDIA B200)");
  EXPECT_EQ(row_count(), 2u);

  const ProcessResult check = run_cli({"results", "check", "--table", table(), "--format", "json"});
  ASSERT_EQ(check.exit_code, 0) << check.err;
  EXPECT_EQ(schema_violation(check.out, "results-check.schema.json"), "") << check.out;
  rapidjson::Document valid;
  valid.Parse(check.out.c_str());
  ASSERT_TRUE(valid.IsObject()) << check.out;
  EXPECT_TRUE(valid["ok"].GetBool());
  EXPECT_EQ(valid["row_count"].GetInt(), 2);
  EXPECT_EQ(valid["problems"].Size(), 0u);
  ASSERT_EQ(valid["gpu_mismatches"].Size(), 2u);
  EXPECT_EQ(valid["gpu_mismatches"][1]["line"].GetInt(), 3);
  EXPECT_STREQ(valid["gpu_mismatches"][1]["measured_gpu"].GetString(), "NVIDIA H200");

  // The measurement both rows name changed since: exit 2 and one error line, as in text; the
  // problem of each row listed.
  write_file(dir_.file("m.json"), read_file(dir_.file("m.json")) + "\n");
  const ProcessResult text = run_cli({"results", "check", "--table", table()});
  const ProcessResult json = run_cli({"results", "check", "--table", table(), "--format", "json"});
  EXPECT_EQ(text.exit_code, 2);
  EXPECT_EQ(text.out.rfind(table() + ": 2 problems\n", 0), 0u) << text.out;
  EXPECT_EQ(json.exit_code, 2);
  EXPECT_EQ(json.err, text.err);
  EXPECT_EQ(std::count(json.err.begin(), json.err.end(), '\n'), 1) << json.err;
  EXPECT_EQ(schema_violation(json.out, "results-check.schema.json"), "") << json.out;
  rapidjson::Document broken;
  broken.Parse(json.out.c_str());
  ASSERT_TRUE(broken.IsObject()) << json.out;
  EXPECT_FALSE(broken["ok"].GetBool());
  EXPECT_TRUE(broken["row_count"].IsNull());
  ASSERT_EQ(broken["problems"].Size(), 2u);
  EXPECT_EQ(broken["problems"][1]["line"].GetInt(), 3);
  const auto& problem = broken["problems"][0];
  EXPECT_EQ(problem["file"].GetString(), table());
  EXPECT_EQ(problem["line"].GetInt(), 2);
  EXPECT_EQ(std::string(problem["reason"].GetString()).rfind("measurement_sha256: ", 0), 0u);
  EXPECT_EQ(json.err, "iteragpu results: error: " + std::string(problem["message"].GetString()) +
                         " (and 1 more, listed above)\n");
  EXPECT_EQ(std::string(problem["message"].GetString()),
            table() + ":2: " + problem["reason"].GetString());
  EXPECT_EQ(broken["gpu_mismatches"].Size(), 0u);

  // A table that is not there: the file as a whole.
  const ProcessResult missing = run_cli({"results", "check", "--table", dir_.file("nowhere.csv"), "--format", "json"});
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_EQ(schema_violation(missing.out, "results-check.schema.json"), "") << missing.out;
  rapidjson::Document absent;
  absent.Parse(missing.out.c_str());
  ASSERT_TRUE(absent.IsObject()) << missing.out;
  EXPECT_EQ(absent["problems"][0]["file"].GetString(), dir_.file("nowhere.csv"));
  EXPECT_TRUE(absent["problems"][0]["line"].IsNull());
}

TEST_F(ResultsCli, AnotherGpuIsRefusedWithoutGpuMismatchOk) {
  std::vector<std::string> args = add_args("strict");
  args.pop_back();  // --gpu-mismatch-ok
  const ProcessResult refused = run_cli(args);
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_NE(refused.err.find("--gpu: '" + dir_.file("m.json") +
                             "' was measured on NVIDIA H200, which b200 does not cover"),
            std::string::npos)
      << refused.err;
  EXPECT_FALSE(path_exists(table()));
  for (std::size_t i = 0; i < args.size(); ++i)
    if (args[i] == "--gpu") args[i + 1] = "h200";
  ASSERT_EQ(run_cli(args).exit_code, 0);
  const ProcessResult check = run_cli({"results", "check", "--table", table()});
  EXPECT_EQ(check.exit_code, 0) << check.err;
  EXPECT_EQ(check.out.find("Not measured on"), std::string::npos) << check.out;
  const ProcessResult report = run_cli({"results", "report", "--table", table(), "--format", "json"});
  rapidjson::Document doc;
  doc.Parse(report.out.c_str());
  ASSERT_TRUE(doc.IsObject()) << report.out;
  EXPECT_TRUE(doc["rows"][0]["gpu_mismatch"].IsNull());
  const ProcessResult text = run_cli({"results", "report", "--table", table()});
  EXPECT_EQ(text.out.find("Measured on another GPU"), std::string::npos) << text.out;}

// Every row's problem at once: the list on stdout (text) or in the JSON, the error line naming
// the first and how many more; a problem of the file as a whole stays the one problem.
TEST_F(ResultsCli, CheckListsEveryRowsProblem) {
  for (const char* notes : {"one", "two", "three"}) ASSERT_EQ(run_cli(add_args(notes)).exit_code, 0);
  std::string content = read_file(table());
  content.replace(content.find("2026-12-01"), 10, "2026-13-01");    // line 2: no such month
  content.replace(content.rfind(",b200,"), 6, ",nosuchgpu,");       // line 4: not in the catalog
  write_file(table(), content);

  const ProcessResult text = run_cli({"results", "check", "--table", table()});
  EXPECT_EQ(text.exit_code, 2);
  EXPECT_EQ(text.out.rfind(table() + ": 2 problems\n  " + table() + ":2: date: ", 0), 0u) << text.out;
  EXPECT_NE(text.out.find("\n  " + table() + ":4: "), std::string::npos) << text.out;
  EXPECT_EQ(std::count(text.err.begin(), text.err.end(), '\n'), 1) << text.err;
  EXPECT_NE(text.err.find(table() + ":2: date: "), std::string::npos) << text.err;
  EXPECT_NE(text.err.find(" (and 1 more, listed above)\n"), std::string::npos) << text.err;

  const ProcessResult json = run_cli({"results", "check", "--table", table(), "--format", "json"});
  EXPECT_EQ(json.exit_code, 2);
  EXPECT_EQ(schema_violation(json.out, "results-check.schema.json"), "");
  rapidjson::Document doc;
  doc.Parse(json.out.c_str());
  ASSERT_EQ(doc["problems"].Size(), 2u);
  EXPECT_EQ(doc["problems"][0]["line"].GetInt(), 2);
  EXPECT_EQ(doc["problems"][1]["line"].GetInt(), 4);
  EXPECT_TRUE(doc["row_count"].IsNull());

  // A wrong header: the table as a whole, one problem, the error line alone.
  write_file(table(), "date,gpu\n");
  const ProcessResult header = run_cli({"results", "check", "--table", table()});
  EXPECT_EQ(header.exit_code, 2);
  EXPECT_EQ(header.out, "");
  EXPECT_NE(header.err.find("unexpected header"), std::string::npos) << header.err;
  EXPECT_EQ(header.err.find("more"), std::string::npos) << header.err;
}

TEST_F(ResultsCli, BadInputIsOneLineAndExitTwo) {
  std::vector<std::string> too_many = add_args("x", "11");
  const std::vector<std::vector<std::string>> cases = {
      too_many,
      {"results", "add", "--table", table()},
      {"results", "check", "--table", dir_.file("missing.csv")},
      {"results", "report", "--table", table(), "--sort", "price"},
      {"results", "report", "--table", table(), "--format", "xml"},
      {"results", "frobnicate"},
      {"results"},
  };
  for (const auto& args : cases) {
    const ProcessResult r = run_cli(args);
    EXPECT_EQ(r.exit_code, 2) << args.back() << ": " << r.err;
    EXPECT_EQ(r.out, "");
    EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << r.err;
  }
  EXPECT_FALSE(path_exists(table()));
}

TEST_F(ResultsCli, ConcurrentAddsLoseNothing) {
  constexpr int kWriters = 12;
  std::vector<std::thread> writers;
  std::vector<int> exit_codes(kWriters, -1);
  for (int i = 0; i < kWriters; ++i)
    writers.emplace_back([&, i] { exit_codes[i] = run_cli(add_args("writer " + std::to_string(i))).exit_code; });
  for (auto& writer : writers) writer.join();
  for (int code : exit_codes) EXPECT_EQ(code, 0);

  const ResultsTable loaded = ResultsTable::load(table(), Catalog::load(Catalog::shipped_path(), true));
  std::set<std::string> notes;
  for (const auto& row : loaded.rows()) notes.insert(row.notes);
  EXPECT_EQ(loaded.rows().size(), static_cast<std::size_t>(kWriters));
  EXPECT_EQ(notes.size(), static_cast<std::size_t>(kWriters));
}

TEST_F(ResultsCli, KilledAddsLeaveTheOldTableOrTheNewOne) {
  // A large table makes each add's write take long enough for the kill to land inside it.
  ASSERT_EQ(run_cli(add_args("seed")).exit_code, 0);
  std::string content = read_file(table());
  const std::string row = content.substr(content.find('\n') + 1);
  for (int i = 0; i < 8000; ++i) content += row;
  write_file(table(), content);
  std::size_t rows = row_count();

  std::mt19937 random(20261202);
  int interrupted = 0;
  for (int attempt = 0; attempt < 20; ++attempt) {
    std::vector<std::string> args = add_args("attempt " + std::to_string(attempt));
    args.insert(args.begin(), ITERAGPU_CLI_PATH);
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      execv(argv[0], argv.data());
      _exit(127);
    }
    std::this_thread::sleep_for(std::chrono::microseconds(random() % 40000));
    kill(pid, SIGKILL);
    int status = 0;
    waitpid(pid, &status, 0);
    if (WIFSIGNALED(status)) ++interrupted;
    const std::size_t now = row_count();  // throws if the table were damaged
    EXPECT_TRUE(now == rows || now == rows + 1) << "rows " << rows << " -> " << now;
    rows = now;
  }
  EXPECT_GT(interrupted, 0) << "no add was interrupted: the test proved nothing";
}

}  // namespace
}  // namespace iteragpu::testing
