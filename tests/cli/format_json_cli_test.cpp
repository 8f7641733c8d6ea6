// The README's contract for --format json: every command whose --help offers it prints one
// JSON document there, naming its schema (a file of data/schema/) and valid against it, or
// the option is not offered. The commands are discovered from the help texts themselves
// (`iteragpu --help`, then each command's, then each action's), so a command added later is
// walked too; a hard-coded list is only a cross-check that the discovery found them all.
#include <gtest/gtest.h>
#include <rapidjson/document.h>
#include <sys/stat.h>

#include <map>
#include <set>
#include <sstream>

#include "process_runner.hpp"
#include "schema_check.hpp"

namespace iteragpu::testing {
namespace {

const std::string kFakePlugin = ITERAGPU_FAKE_BACKEND_PATH;

std::vector<std::string> words(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> out;
  for (std::string word; in >> word;) out.push_back(word);
  return out;
}

// The commands `iteragpu --help` lists: the first word of each line under "Commands:".
std::vector<std::string> listed_commands(const std::string& help) {
  std::vector<std::string> commands;
  std::istringstream in(help);
  bool listing = false;
  for (std::string line; std::getline(in, line);) {
    if (line == "Commands:") {
      listing = true;
    } else if (listing && line.rfind("  ", 0) == 0 && line.size() > 2 && line[2] != ' ') {
      commands.push_back(words(line).front());
    } else if (listing && line.rfind("   ", 0) == 0) {
      continue;  // a description's continuation line
    } else if (listing) {
      break;
    }
  }
  return commands;
}

// The actions of a command with actions: "Usage: iteragpu results add|check|report [options]"
// gives add, check and report; "Usage: iteragpu kit verify DIR ..." gives verify; a command
// whose usage goes on with its options ("[options]") has none.
std::vector<std::string> listed_actions(const std::string& command, const std::string& help) {
  const std::string usage = help.substr(0, help.find('\n'));
  const std::vector<std::string> w = words(usage);
  if (w.size() < 4 || w[0] != "Usage:" || w[1] != "iteragpu" || w[2] != command) return {};
  // Actions are lower-case words ("add|check|report", "verify"); what else may follow is
  // options or operands ("[options]", "A.json B.json ...").
  std::vector<std::string> actions;
  std::istringstream in(w[3]);
  for (std::string action; std::getline(in, action, '|');) {
    if (action.empty() || action.find_first_not_of("abcdefghijklmnopqrstuvwxyz-") != std::string::npos) return {};
    actions.push_back(action);
  }
  return actions;
}

// The option table's entry for --format (up to the next option), or "" when not offered.
std::string format_entry(const std::string& help) {
  const std::size_t at = help.find("\n  --format");
  if (at == std::string::npos) return "";
  const std::size_t end = help.find("\n  -", at + 1);
  return help.substr(at + 1, end == std::string::npos ? std::string::npos : end - at - 1);
}

class EveryJsonFormat : public ::testing::Test {
 protected:
  void SetUp() override {
    // A real measurement (H200) and a table with one row: results add, check and report.
    write_file(dir_.file("m.json"),
               read_file(std::string(ITERAGPU_SOURCE_DIR) + "/examples/results/mesures-float32.json"));
    const ProcessResult add = run_cli(add_args());
    ASSERT_EQ(add.exit_code, 0) << add.err;
    // A hand-made lab kit, intact: one member and its manifest.
    ASSERT_EQ(::mkdir(dir_.file("kit").c_str(), 0755), 0);
    write_file(dir_.file("kit/a.txt"), "abc");
    write_file(dir_.file("kit/MANIFEST.json"),
               R"({"schema": "iteragpu.lab-kit-manifest", "schema_version": 1, "kit": "kit", )"
               R"("note": "hand-made", "members": [{"path": "a.txt", "size": 3, "sha256": )"
               R"("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"}, )"
               R"({"path": "MANIFEST.json", "size": null, "sha256": null}]})");
  }

  std::vector<std::string> add_args() const {
    // The H200 measurement against a B200 package, allowed: the mismatch is reported.
    return {"results", "add", "--table", dir_.file("resultats.csv"), "--measurement", dir_.file("m.json"),
            "--gpu", "b200", "--days", "7", "--work-unit", "labelled image", "--attempted", "10",
            "--accepted", "3", "--metric", "IoU", "--threshold", ">= 0.8", "--observed", "0.84",
            "--date", "2026-12-01", "--gpu-mismatch-ok"};
  }

 public:
  struct Invocation {
    std::vector<std::string> args;  // without --format json
    std::map<std::string, std::string> environment;
  };

  // A valid invocation of every command known to offer --format json. A command discovered
  // in the help that is missing here fails the test: give it an invocation.
  std::map<std::string, Invocation> invocations() const {
    const std::string examples = std::string(ITERAGPU_SOURCE_DIR) + "/examples/results/";
    const std::map<std::string, std::string> fake_gpu = {{"ITERAGPU_FAKE_BACKEND", "memory=268435456"}};
    return {
        {"estimate", {{"estimate", "--parameters", "7B", "--bits", "16"}, {}}},
        {"environment", {{"environment", "--backend", kFakePlugin}, {}}},
        {"measure",
         {{"measure", "--device", "cuda:0", "--batch", "1", "--context", "16", "--width", "64", "--dtype",
           "float32", "--warmup", "1", "--repeats", "2", "--output", dir_.file("measured.json"), "--backend",
           kFakePlugin},
          {}}},
        {"predict", {{"predict", "--compute-capability", "9.0"}, {}}},
        {"sweep",
         {{"sweep", "--device", "cuda:0", "--vary", "batch", "--width", "1024", "--backend", kFakePlugin,
           "--budget", "100000000"},
          fake_gpu}},
        {"compare", {{"compare", examples + "mesures-float32.json", examples + "mesures-bfloat16.json"}, {}}},
        {"packages", {{"packages", "--gpu", "b200", "--days", "7", "--lots", "2", "--accepted-results", "3"}, {}}},
        {"results add", {add_args(), {}}},
        {"results check", {{"results", "check", "--table", dir_.file("resultats.csv")}, {}}},
        {"results report", {{"results", "report", "--table", dir_.file("resultats.csv")}, {}}},
        {"kit verify", {{"kit", "verify", dir_.file("kit")}, {}}},
    };
  }

  TempDir dir_;
};

// Runs `invocation` with --format json: exit 0, and stdout one JSON object whose "schema"
// ("iteragpu.NAME") names data/schema/NAME.schema.json, valid against it.
void expect_json_document(const EveryJsonFormat::Invocation& invocation) {
  std::vector<std::string> args = invocation.args;
  args.insert(args.end(), {"--format", "json"});
  const ProcessResult run = run_cli(args, invocation.environment);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  rapidjson::Document doc;
  ASSERT_FALSE(doc.Parse(run.out.c_str()).HasParseError()) << "not JSON:\n" << run.out;
  ASSERT_TRUE(doc.IsObject()) << run.out;
  ASSERT_TRUE(doc.HasMember("schema") && doc["schema"].IsString()) << run.out;
  ASSERT_TRUE(doc.HasMember("schema_version") && doc["schema_version"].IsInt()) << run.out;
  const std::string schema = doc["schema"].GetString();
  ASSERT_EQ(schema.rfind("iteragpu.", 0), 0u) << schema;
  const std::string file = schema.substr(std::string("iteragpu.").size()) + ".schema.json";
  ASSERT_TRUE(path_exists(std::string(ITERAGPU_SOURCE_DIR) + "/data/schema/" + file))
      << schema << " names no file in data/schema/";
  EXPECT_EQ(schema_violation(run.out, file), "") << run.out;
}

TEST_F(EveryJsonFormat, EveryCommandOfferingJsonPrintsASchemaValidDocument) {
  const ProcessResult top = run_cli({"--help"});
  ASSERT_EQ(top.exit_code, 0) << top.err;
  std::vector<std::vector<std::string>> commands;  // each as its words: {"results", "add"}
  for (const std::string& command : listed_commands(top.out)) {
    const ProcessResult help = run_cli({command, "--help"});
    ASSERT_EQ(help.exit_code, 0) << command << ": " << help.err;
    const std::vector<std::string> actions = listed_actions(command, help.out);
    if (actions.empty()) commands.push_back({command});
    for (const std::string& action : actions) commands.push_back({command, action});
  }
  // Cross-check: the discovery finds at least the commands the README documents.
  std::set<std::string> found;
  for (const auto& words : commands) found.insert(words.size() == 1 ? words[0] : words[0] + " " + words[1]);
  for (const char* expected : {"estimate", "environment", "measure", "predict", "sweep", "compare", "packages",
                               "results add", "results check", "results report", "kit verify"})
    EXPECT_EQ(found.count(expected), 1u) << expected << " not found by walking the help texts";

  const auto known = invocations();
  int walked = 0;
  for (const auto& words : commands) {
    const std::string name = words.size() == 1 ? words[0] : words[0] + " " + words[1];
    SCOPED_TRACE(name);
    std::vector<std::string> help_args = words;
    help_args.push_back("--help");
    const ProcessResult help = run_cli(help_args);
    ASSERT_EQ(help.exit_code, 0) << help.err;
    const std::string entry = format_entry(help.out);
    if (entry.find("json") == std::string::npos) continue;  // json not offered: nothing to keep
    ++walked;
    const auto invocation = known.find(name);
    if (invocation == known.end()) {
      ADD_FAILURE() << name << " offers --format json; add a valid invocation of it here";
      continue;
    }
    expect_json_document(invocation->second);
  }
  EXPECT_GE(walked, 11);
}

// The help parsers above, on the texts they read.
TEST(EveryJsonFormatHelp, ReadsTheUsageLinesAndTheFormatEntry) {
  EXPECT_EQ(listed_actions("results", "Usage: iteragpu results add|check|report [options]\n"),
            (std::vector<std::string>{"add", "check", "report"}));
  EXPECT_EQ(listed_actions("kit", "Usage: iteragpu kit verify DIR [--format text|json]\n"),
            (std::vector<std::string>{"verify"}));
  EXPECT_TRUE(listed_actions("estimate", "Usage: iteragpu estimate [options]\n").empty());
  EXPECT_TRUE(listed_actions("compare", "Usage: iteragpu compare A.json B.json [C.json ...] [options]\n").empty());
  EXPECT_EQ(format_entry("Options:\n  --table arg   x\n  --format arg (=text)   output format: text or json\n"
                         "  -h [ --help ]   show this help and exit\n"),
            "  --format arg (=text)   output format: text or json");
  EXPECT_EQ(format_entry("Options:\n  -h [ --help ]   show this help and exit\n"), "");
}

}  // namespace
}  // namespace iteragpu::testing
