// `iteragpu estimate` end to end: exit codes, JSON against its schema, one-line errors.
#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include "process_runner.hpp"
#include "schema_check.hpp"

namespace iteragpu::testing {
namespace {

TEST(EstimateCli, SeedExampleAsJson) {
  const ProcessResult r = run_cli({"estimate", "--parameters", "7000000000", "--bits", "16",
                                   "--reserve-gib", "4", "--format", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(schema_violation(r.out, "estimate.schema.json"), "");
  rapidjson::Document doc;
  doc.Parse(r.out.c_str());
  ASSERT_FALSE(doc.HasParseError());
  EXPECT_STREQ(doc["weights"]["bytes"].GetString(), "14000000000");
  EXPECT_STREQ(doc["weights"]["gib"].GetString(), "13.03851604461669921875");
  EXPECT_STREQ(doc["total"]["gib"].GetString(), "17.03851604461669921875");
  EXPECT_STREQ(doc["reserve"]["gib"].GetString(), "4");
  EXPECT_TRUE(doc["reserve_is_assumption"].GetBool());
}

TEST(EstimateCli, TextIsTheDefault) {
  const ProcessResult r = run_cli({"estimate", "--parameters", "7B", "--bits", "16"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("13.03851604461669921875 GiB"), std::string::npos) << r.out;
}

TEST(EstimateCli, HugeCountsAreValidJson) {
  const ProcessResult r = run_cli({"estimate", "--parameters", std::string(200, '9'), "--bits",
                                   "4", "--format", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(schema_violation(r.out, "estimate.schema.json"), "");
}

TEST(EstimateCli, BadInputIsOneLineExitTwoAndNoOutput) {
  const std::vector<std::vector<std::string>> cases = {
      {"--parameters", "-5", "--bits", "16"},
      {"--parameters", "0", "--bits", "16"},
      {"--parameters", "abc", "--bits", "16"},
      {"--parameters", "", "--bits", "16"},
      {"--parameters", "7B", "--bits", "0"},
      {"--parameters", "7B", "--bits", "nan"},
      {"--parameters", "7B", "--bits", "16", "--reserve-gib", "NaN"},
      {"--parameters", "7B", "--bits", "16", "--reserve-gib", "-4"},
      {"--parameters", "7B", "--bits", "16", "--reserve-gib", "1e999999999"},
      {"--parameters", "1e999999999", "--bits", "16"},
      {"--parameters", "7B"},
      {"--bits", "16"},
      {"--parameters", "7B", "--bits", "16", "--frobnicate"},
      {"--parameters", "7B", "--bits", "16", "stray"},
      {"--parameters", "7B", "--bits", "16", "--format", "yaml"},
      {"--parameters"},
  };
  for (const auto& args : cases) {
    std::vector<std::string> argv{"estimate"};
    argv.insert(argv.end(), args.begin(), args.end());
    const ProcessResult r = run_cli(argv);
    std::string joined;
    for (const auto& a : args) joined += a + " ";
    EXPECT_EQ(r.exit_code, 2) << joined;
    EXPECT_EQ(r.out, "") << joined;
    ASSERT_FALSE(r.err.empty()) << joined;
    EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << "not one line: " << r.err;
    EXPECT_EQ(r.err.rfind("iteragpu estimate: error: ", 0), 0u) << r.err;
  }
}

TEST(EstimateCli, ErrorsNameTheOptionAndTheAcceptedForm) {
  const ProcessResult r = run_cli({"estimate", "--parameters", "7B", "--bits", "16", "--reserve-gib", "-4"});
  EXPECT_NE(r.err.find("--reserve-gib"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("non-negative decimal"), std::string::npos) << r.err;
  const ProcessResult p = run_cli({"estimate", "--parameters", "seven", "--bits", "16"});
  EXPECT_NE(p.err.find("--parameters"), std::string::npos) << p.err;
  EXPECT_NE(p.err.find("7B"), std::string::npos) << p.err;
}

// Boost's option errors hold "%name%" placeholders; a token holding one is quoted as given
// (it once made Boost's substitution loop without end: found by the command-line fuzzer).
TEST(EstimateCli, OptionErrorsQuotePlaceholderTextAsGiven) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"-=%canonical_option%"}, "unrecognised option '-=%canonical_option%'"},
      {{"--%value%"}, "unrecognised option '--%value%'"},
      {{"-h%original_token%"}, "unrecognised option '-h%original_token%'"},
      {{"--help=%prefix%"}, "option '--help' does not take any arguments"},
      {{"--bits=%canonical_option%", "--bits=8"}, "option '--bits' cannot be specified more than once"},
      {{"--bits"}, "the required argument for option '--bits' is missing"},
  };
  for (const auto& [args, message] : cases) {
    std::vector<std::string> argv{"estimate"};
    argv.insert(argv.end(), args.begin(), args.end());
    const ProcessResult r = run_cli(argv);
    EXPECT_EQ(r.exit_code, 2) << args.front();
    EXPECT_EQ(r.err, "iteragpu estimate: error: " + message + " (see iteragpu estimate --help)\n");
  }
}

TEST(Cli, HelpVersionAndUnknownCommands) {
  EXPECT_EQ(run_cli({"estimate", "--help"}).exit_code, 0);
  EXPECT_NE(run_cli({"estimate", "--help"}).out.find("--reserve-gib"), std::string::npos);
  const ProcessResult version = run_cli({"--version"});
  EXPECT_EQ(version.exit_code, 0);
  EXPECT_EQ(version.out.rfind("iteragpu 0.", 0), 0u) << version.out;
  const ProcessResult help = run_cli({"--help"});
  EXPECT_EQ(help.exit_code, 0);
  for (const char* command : {"estimate", "environment", "measure", "packages"})
    EXPECT_NE(help.out.find(command), std::string::npos) << command;
  const ProcessResult unknown = run_cli({"frobnicate"});
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_NE(unknown.err.find("unknown command 'frobnicate'"), std::string::npos) << unknown.err;
  EXPECT_EQ(run_cli({}).exit_code, 2);
}

}  // namespace
}  // namespace iteragpu::testing
