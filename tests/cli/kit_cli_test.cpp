// `iteragpu kit verify DIR` end to end on the archive the build makes: intact kit → exit 0;
// a changed byte, a deleted file, an added file, a wrong size → exit 2 and one error line
// naming the member; schema-valid JSON; bad usage is one line and exit 2.
#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <cstdio>

#include "process_runner.hpp"
#include "schema_check.hpp"

namespace iteragpu::testing {
namespace {

class KitCli : public ::testing::Test {
 protected:
  void SetUp() override {
    if (std::string(ITERAGPU_LAB_KIT_ZIP).empty())
      GTEST_SKIP() << "this build has no lab_kit target (it needs Info-ZIP zip and CMake 3.19)";
    const ProcessResult unpack = run_process(
        {ITERAGPU_CMAKE_COMMAND, "-E", "tar", "xf", ITERAGPU_LAB_KIT_ZIP}, {}, dir_.path());
    ASSERT_EQ(unpack.exit_code, 0) << unpack.err;
  }
  std::string kit() const { return dir_.file("iteragpu-lab-v1"); }
  std::string member(const std::string& name) const { return kit() + "/" + name; }

  // Exit 2, one error line on stderr that counts the problems and names `expected`.
  void expect_broken(const std::string& expected, const std::string& kind) {
    const ProcessResult text = run_cli({"kit", "verify", kit()});
    EXPECT_EQ(text.exit_code, 2) << text.out;
    EXPECT_EQ(text.err.find('\n'), text.err.size() - 1) << text.err;
    EXPECT_NE(text.err.find("iteragpu kit: error: " + kit() + ": 1 problem: " + expected),
              std::string::npos)
        << text.err;
    EXPECT_NE(text.out.find("Problem: " + expected), std::string::npos) << text.out;

    const ProcessResult json = run_cli({"kit", "verify", kit(), "--format", "json"});
    EXPECT_EQ(json.exit_code, 2);
    EXPECT_EQ(schema_violation(json.out, "kit-verification.schema.json"), "") << json.out;
    rapidjson::Document doc;
    doc.Parse(json.out.c_str());
    ASSERT_TRUE(doc.IsObject());
    EXPECT_FALSE(doc["intact"].GetBool());
    ASSERT_EQ(doc["problems"].Size(), 1u);
    EXPECT_EQ(doc["problems"][0]["kind"].GetString(), kind);
  }
  TempDir dir_;
};

TEST_F(KitCli, TheBuiltKitIsIntact) {
  const ProcessResult text = run_cli({"kit", "verify", kit()});
  EXPECT_EQ(text.exit_code, 0) << text.err;
  EXPECT_EQ(text.err, "");
  // The folder is named after the kit: its path says both.
  EXPECT_EQ(text.out.rfind("Lab kit " + kit() + ": 7 members listed", 0), 0u) << text.out;
  EXPECT_NE(text.out.find("Intact"), std::string::npos) << text.out;

  // --kit DIR is the same as DIR.
  const ProcessResult json = run_cli({"kit", "verify", "--format", "json", "--kit", kit()});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  EXPECT_EQ(schema_violation(json.out, "kit-verification.schema.json"), "");
  rapidjson::Document doc;
  doc.Parse(json.out.c_str());
  EXPECT_TRUE(doc["intact"].GetBool());
  EXPECT_EQ(doc["members"].Size(), 7u);
}

TEST_F(KitCli, OneChangedByteIsReported) {
  std::string content = read_file(member("tarifs-forfaits.csv"));
  content[content.size() / 2] ^= 0x01;
  write_file(member("tarifs-forfaits.csv"), content);
  expect_broken("tarifs-forfaits.csv: SHA-256 ", "hash_mismatch");
}

TEST_F(KitCli, ADeletedFileIsReported) {
  ASSERT_EQ(std::remove(member("protocole-qualite.md").c_str()), 0);
  expect_broken("protocole-qualite.md: missing", "missing");
}

TEST_F(KitCli, AnAddedFileIsReported) {
  write_file(member("mesures.json"), "{}");
  expect_broken("mesures.json: present but not listed in MANIFEST.json", "unlisted");
}

TEST_F(KitCli, AWrongSizeIsReported) {
  write_file(member("resultats-bruts.csv"),
             read_file(member("resultats-bruts.csv")) + "2026-12-01,x\n");
  expect_broken("resultats-bruts.csv: ", "size_mismatch");
  EXPECT_NE(run_cli({"kit", "verify", kit()}).err.find("bytes, MANIFEST.json lists 162"),
            std::string::npos);
}

TEST(KitCliUsage, BadUsageIsOneLineAndExitTwo) {
  TempDir dir;
  const std::vector<std::vector<std::string>> cases = {
      {"kit"},
      {"kit", "check", dir.path()},
      {"kit", "verify"},
      {"kit", "verify", dir.path(), dir.path()},
      {"kit", "verify", dir.path(), "--format", "xml"},
      {"kit", "verify", dir.file("absent")},
      {"kit", "verify", dir.path()},  // a folder without MANIFEST.json
  };
  for (const auto& args : cases) {
    const ProcessResult result = run_cli(args);
    EXPECT_EQ(result.exit_code, 2) << args.back();
    EXPECT_EQ(result.out, "");
    EXPECT_EQ(result.err.rfind("iteragpu kit: error: ", 0), 0u) << result.err;
    EXPECT_EQ(result.err.find('\n'), result.err.size() - 1) << result.err;
  }
  EXPECT_NE(run_cli({"kit", "verify", dir.path()}).err.find("MANIFEST.json: not found"),
            std::string::npos);
  EXPECT_EQ(run_cli({"kit", "verify", "--help"}).exit_code, 0);
  EXPECT_EQ(run_cli({"kit", "--help"}).exit_code, 0);
}

}  // namespace
}  // namespace iteragpu::testing
