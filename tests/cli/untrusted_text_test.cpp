// Text that came from a file is printed as text from outside: a GPU name holding a terminal
// escape (ESC [2J clears the screen) and a line break followed by a forged line is shown
// escaped by every text and Markdown view and every error line, through every command that
// prints it (compare, results add, check and report). The JSON and CSV writers quote it.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "process_runner.hpp"

namespace iteragpu::testing {
namespace {

const std::string kRealMeasurement = ITERAGPU_SOURCE_DIR "/examples/results/mesures-float32.json";
// As JSON writes it, and the forged line it would print raw.
const std::string kHostileNameJson = "NVIDIA H200\\u001b[2J\\nFORGED LINE: all results deleted";
const std::string kForgedLine = "FORGED LINE: all results deleted";

// True when `output` holds an escape character or a line that starts with the forged text.
std::string problem_in(const std::string& output) {
  if (output.find('\x1b') != std::string::npos) return "a raw ESC character";
  std::size_t start = 0;
  while (start <= output.size()) {
    const std::size_t end = output.find('\n', start);
    const std::string line = output.substr(start, end == std::string::npos ? std::string::npos : end - start);
    if (line.rfind(kForgedLine, 0) == 0) return "a forged line: " + line;
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return "";
}

class UntrustedText : public ::testing::Test {
 protected:
  // The real H200 measurement with the selected GPU renamed; still a whole measurement.
  void SetUp() override {
    std::string text = read_file(kRealMeasurement);
    const std::string name = "\"name\": \"NVIDIA H200\"";
    for (std::size_t at = text.find(name); at != std::string::npos; at = text.find(name, at + 1))
      text.replace(at, name.size(), "\"name\": \"" + kHostileNameJson + "\"");
    write_file(hostile(), text);
  }
  std::string hostile() const { return dir_.file("hostile.json"); }
  std::vector<std::string> add_args(const std::string& table, const std::string& package) const {
    return {"results", "add", "--table", table, "--measurement", hostile(), "--gpu", package,
            "--days", "7", "--work-unit", "labelled image", "--attempted", "10", "--accepted", "3",
            "--metric", "IoU", "--threshold", ">= 0.8", "--observed", "0.84", "--date", "2026-12-01"};
  }
  static void expect_clean(const ProcessResult& r, const std::string& what) {
    EXPECT_EQ(problem_in(r.out), "") << what << " (stdout)";
    EXPECT_EQ(problem_in(r.err), "") << what << " (stderr)";
  }
  TempDir dir_;
};

TEST_F(UntrustedText, ControlCharactersInAGpuNameNeverReachTheTerminalRaw) {
  const std::string name_shown = "NVIDIA H200\\x1b[2J\\x0aFORGED LINE";
  for (const char* format : {"text", "markdown"}) {
    const ProcessResult r = run_cli({"compare", "--format", format, hostile(), kRealMeasurement});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    expect_clean(r, std::string("compare --format ") + format);
    EXPECT_NE(r.out.find(name_shown), std::string::npos) << r.out;  // shown, escaped
  }
  const ProcessResult json = run_cli({"compare", "--format", "json", hostile(), kRealMeasurement});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  EXPECT_EQ(problem_in(json.out), "");

  // A GPU mismatch is refused with an error line naming the GPU measured.
  const std::string table = dir_.file("t.csv");
  const ProcessResult refused = run_cli(add_args(table, "b200"));
  EXPECT_EQ(refused.exit_code, 2) << refused.err;
  EXPECT_NE(refused.err.find("\\x1b[2J"), std::string::npos) << refused.err;
  expect_clean(refused, "results add (refused)");

  // Recorded with the mismatch allowed, then checked and reported.
  std::vector<std::string> allowed = add_args(table, "b200");
  allowed.push_back("--gpu-mismatch-ok");
  const ProcessResult added = run_cli(allowed);
  ASSERT_EQ(added.exit_code, 0) << added.err;
  expect_clean(added, "results add");
  const ProcessResult checked = run_cli({"results", "check", "--table", table});
  ASSERT_EQ(checked.exit_code, 0) << checked.err;
  expect_clean(checked, "results check");
  EXPECT_NE(checked.out.find("\\x1b[2J"), std::string::npos) << checked.out;
  for (const char* format : {"text", "csv", "json"}) {
    const ProcessResult reported = run_cli({"results", "report", "--table", table, "--format", format});
    ASSERT_EQ(reported.exit_code, 0) << reported.err;
    if (std::string(format) != "csv") expect_clean(reported, std::string("results report --format ") + format);
  }
}

}  // namespace
}  // namespace iteragpu::testing
