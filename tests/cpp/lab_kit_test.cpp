// The lab kit: verify_lab_kit() on hand-made kits (every kind of problem, malformed
// manifests), and the archive the build makes (data/kit/build_lab_kit.cmake): its members,
// its manifest, the notebook without outputs, and byte-identical rebuilds.
#include "iteragpu/lab_kit.hpp"

#include <gtest/gtest.h>
#include <rapidjson/document.h>
#include <sys/stat.h>

#include <cctype>

#include "iteragpu/error.hpp"
#include "process_runner.hpp"
#include "schema_check.hpp"

namespace iteragpu::testing {
namespace {

// SHA-256 test vectors (FIPS 180-2), so the expected hashes do not come from the code tested.
constexpr const char* kSha256OfAbc =
    "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
constexpr const char* kSha256OfEmpty =
    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

std::string manifest_with(const std::string& members_json) {
  return R"({"schema": "iteragpu.lab-kit-manifest", "schema_version": 1, "kit": "test-kit", )"
         R"("members": [)" +
         members_json + "]}\n";
}

// One member entry; `size` and `sha256` are JSON values as written ("3", "null", "\"...\"").
std::string entry(const std::string& path, const std::string& size, const std::string& sha256) {
  return R"({"path": ")" + path + R"(", "size": )" + size + R"(, "sha256": )" + sha256 + "}";
}
std::string quoted(const std::string& text) { return "\"" + text + "\""; }

const std::string kAbcEntry = entry("abc.txt", "3", quoted(kSha256OfAbc));
const std::string kEmptyEntry = entry("empty.csv", "0", quoted(kSha256OfEmpty));
const std::string kValidMembers =
    kAbcEntry + ", " + kEmptyEntry + ", " + entry("MANIFEST.json", "null", "null");

// A two-file kit, intact until a test tampers with it.
class HandMadeKit : public ::testing::Test {
 protected:
  void SetUp() override {
    write_file(dir_.file("abc.txt"), "abc");
    write_file(dir_.file("empty.csv"), "");
    write_file(dir_.file("MANIFEST.json"), manifest_with(kValidMembers));
  }
  // The only problem found: its kind and member; its message names the member.
  void expect_single_problem(LabKitProblemKind kind, const std::string& member) {
    const LabKitVerification report = verify_lab_kit(dir_.path());
    EXPECT_FALSE(report.intact());
    ASSERT_EQ(report.problems.size(), 1u) << report.to_text();
    EXPECT_EQ(report.problems[0].kind, kind) << report.problems[0].message;
    EXPECT_EQ(report.problems[0].member, member);
    EXPECT_EQ(report.problems[0].message.rfind(member + ": ", 0), 0u) << report.problems[0].message;
    EXPECT_EQ(schema_violation(report.to_json(), "kit-verification.schema.json"), "");
  }
  TempDir dir_;
};

TEST_F(HandMadeKit, IntactKitHasNoProblems) {
  const LabKitVerification report = verify_lab_kit(dir_.path());
  // The folder is not named after the kit: both are said, once each.
  EXPECT_EQ(report.to_text().rfind("Lab kit test-kit in " + dir_.path() + ": 3 members listed", 0), 0u)
      << report.to_text();
  EXPECT_TRUE(report.intact()) << report.to_text();
  EXPECT_EQ(report.kit_name, "test-kit");
  ASSERT_EQ(report.members.size(), 3u);
  EXPECT_EQ(report.members[0].path, "abc.txt");
  EXPECT_EQ(report.members[0].size, 3u);
  EXPECT_FALSE(report.members[2].sha256.has_value());
  EXPECT_NE(report.to_text().find("Intact"), std::string::npos);

  const std::string json = report.to_json();
  EXPECT_EQ(schema_violation(json, "kit-verification.schema.json"), "");
  rapidjson::Document doc;
  doc.Parse(json.c_str());
  EXPECT_TRUE(doc["intact"].GetBool());
  EXPECT_EQ(doc["problems"].Size(), 0u);
  EXPECT_STREQ(doc["members"][0]["status"].GetString(), "ok");
  EXPECT_STREQ(doc["members"][2]["status"].GetString(), "manifest");
}

TEST_F(HandMadeKit, OneChangedByteIsAHashMismatch) {
  write_file(dir_.file("abc.txt"), "abd");
  expect_single_problem(LabKitProblemKind::kHashMismatch, "abc.txt");
  EXPECT_NE(verify_lab_kit(dir_.path()).problems[0].message.find(kSha256OfAbc), std::string::npos);
}

TEST_F(HandMadeKit, ADifferentSizeIsASizeMismatch) {
  write_file(dir_.file("empty.csv"), "x");
  expect_single_problem(LabKitProblemKind::kSizeMismatch, "empty.csv");
  EXPECT_NE(verify_lab_kit(dir_.path()).problems[0].message.find("1 bytes, MANIFEST.json lists 0"),
            std::string::npos);
}

TEST_F(HandMadeKit, ADeletedFileIsMissing) {
  ASSERT_EQ(std::remove(dir_.file("abc.txt").c_str()), 0);
  expect_single_problem(LabKitProblemKind::kMissing, "abc.txt");
}

TEST_F(HandMadeKit, AnAddedFileOrFolderIsUnlisted) {
  write_file(dir_.file(".hidden"), "");
  expect_single_problem(LabKitProblemKind::kUnlisted, ".hidden");
  ASSERT_EQ(std::remove(dir_.file(".hidden").c_str()), 0);
  ASSERT_EQ(mkdir(dir_.file("results").c_str(), 0755), 0);
  expect_single_problem(LabKitProblemKind::kUnlisted, "results");
}

TEST_F(HandMadeKit, AFolderInPlaceOfAMemberIsNotAFile) {
  ASSERT_EQ(std::remove(dir_.file("empty.csv").c_str()), 0);
  ASSERT_EQ(mkdir(dir_.file("empty.csv").c_str(), 0755), 0);
  expect_single_problem(LabKitProblemKind::kNotAFile, "empty.csv");
}

TEST_F(HandMadeKit, AManifestThatHashesItselfIsAProblem) {
  write_file(dir_.file("MANIFEST.json"), manifest_with(kAbcEntry + ", " + kEmptyEntry + ", " +
                                                       entry("MANIFEST.json", "1", "null")));
  expect_single_problem(LabKitProblemKind::kManifestSelfHash, "MANIFEST.json");
}

TEST_F(HandMadeKit, AManifestThatDoesNotListItselfLeavesItUnlisted) {
  write_file(dir_.file("MANIFEST.json"), manifest_with(kAbcEntry + ", " + kEmptyEntry));
  expect_single_problem(LabKitProblemKind::kUnlisted, "MANIFEST.json");
}

TEST_F(HandMadeKit, EveryProblemIsReportedInOrder) {
  write_file(dir_.file("abc.txt"), "abcd");
  ASSERT_EQ(std::remove(dir_.file("empty.csv").c_str()), 0);
  write_file(dir_.file("zz.txt"), "");
  write_file(dir_.file("aa.txt"), "");
  const LabKitVerification report = verify_lab_kit(dir_.path());
  ASSERT_EQ(report.problems.size(), 4u);
  EXPECT_EQ(report.problems[0].kind, LabKitProblemKind::kSizeMismatch);
  EXPECT_EQ(report.problems[1].kind, LabKitProblemKind::kMissing);
  EXPECT_EQ(report.problems[2].member, "aa.txt");
  EXPECT_EQ(report.problems[3].member, "zz.txt");
  const std::string summary = report.problem_summary();
  EXPECT_EQ(summary.find('\n'), std::string::npos);
  EXPECT_NE(summary.find("4 problems: abc.txt: 4 bytes"), std::string::npos) << summary;
  EXPECT_EQ(schema_violation(report.to_json(), "kit-verification.schema.json"), "");
}

TEST_F(HandMadeKit, MalformedManifestsAreRejectedNamingTheField) {
  const std::string hash = quoted(kSha256OfAbc);
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"not json", "not valid JSON"},
      {R"({"schema": "iteragpu.catalog", "schema_version": 1, "kit": "k", "members": []})",
       "schema:"},
      {R"({"schema": "iteragpu.lab-kit-manifest", "schema_version": 2, "kit": "k", "members": []})",
       "schema_version:"},
      {manifest_with(""), "members: expected a non-empty array"},
      {manifest_with(R"({"path": "abc.txt", "size": 3})"),
       "members[0] (abc.txt): a content file needs"},
      {manifest_with(entry("sub/abc.txt", "3", hash)), "members[0].path:"},
      {manifest_with(entry("abc.txt", "-3", hash)), "members[0].size:"},
      {manifest_with(entry("abc.txt", "3", quoted("ABC"))), "members[0].sha256:"},
      {manifest_with(entry("abc.txt", "3", quoted(std::string(kSha256OfAbc).substr(1)))),
       "members[0].sha256:"},
      {manifest_with(kAbcEntry + ", " + kAbcEntry), "members[1].path: abc.txt is listed twice"},
  };
  for (const auto& [manifest, expected] : cases) {
    write_file(dir_.file("MANIFEST.json"), manifest);
    try {
      verify_lab_kit(dir_.path());
      ADD_FAILURE() << "accepted: " << manifest;
    } catch (const DataFileError& e) {
      const std::string message = e.what();
      EXPECT_NE(message.find(dir_.file("MANIFEST.json") + ": " + expected), std::string::npos)
          << message;
    }
  }
}

TEST(LabKit, AMissingFolderOrManifestIsUnavailable) {
  TempDir dir;
  EXPECT_THROW(verify_lab_kit(dir.file("absent")), ResourceUnavailable);
  EXPECT_THROW(verify_lab_kit(dir.path()), ResourceUnavailable);  // no MANIFEST.json
  write_file(dir.file("kit.zip"), "PK");
  try {
    verify_lab_kit(dir.file("kit.zip"));
    ADD_FAILURE() << "a file was taken for a kit folder";
  } catch (const ResourceUnavailable& e) {
    EXPECT_NE(std::string(e.what()).find("not a folder; unpack the kit archive first"),
              std::string::npos);
  }
}

// ---- The archive the build makes --------------------------------------------------------

const std::vector<std::string> kKitMembers = {
    "README.md",           "mesure-memoire.ipynb", "protocole-qualite.md", "resultats-bruts.csv",
    "tarifs-forfaits.csv", "LICENSE.txt",          "MANIFEST.json"};

// Runs data/kit/build_lab_kit.cmake on `source_dir`, writing `output`.
ProcessResult build_kit(const std::string& source_dir, const std::string& work_dir,
                        const std::string& output) {
  return run_process({ITERAGPU_CMAKE_COMMAND, "-DSOURCE_DIR=" + source_dir,
                      "-DWORK_DIR=" + work_dir, "-DOUTPUT=" + output,
                      "-DZIP_EXECUTABLE=" ITERAGPU_ZIP_EXECUTABLE, "-P", ITERAGPU_LAB_KIT_SCRIPT});
}

// Copies the files the kit is made of into a fresh source tree (new timestamps, other
// permissions), optionally replacing the notebook.
void copy_kit_sources(const std::string& to, const std::string& notebook = "") {
  for (const char* folder : {"/data", "/data/kit", "/examples"})
    ASSERT_EQ(mkdir((to + folder).c_str(), 0700), 0);
  for (const char* file :
       {"/data/kit/README.md", "/data/protocole-qualite.md", "/data/resultats-bruts.csv",
        "/data/tarifs-forfaits.csv", "/LICENSE.txt", "/examples/mesure-memoire.ipynb"}) {
    write_file(to + file, read_file(std::string(ITERAGPU_SOURCE_DIR) + file));
    ASSERT_EQ(chmod((to + file).c_str(), 0600), 0);
  }
  if (!notebook.empty()) write_file(to + "/examples/mesure-memoire.ipynb", notebook);
}

class BuiltKit : public ::testing::Test {
 protected:
  void SetUp() override {
    if (std::string(ITERAGPU_LAB_KIT_ZIP).empty())
      GTEST_SKIP() << "this build has no lab_kit target (it needs Info-ZIP zip and CMake 3.19)";
  }
};

TEST_F(BuiltKit, HoldsTheListedMembersInOneFolderAndVerifies) {
  TempDir dir;
  const ProcessResult listing =
      run_process({ITERAGPU_CMAKE_COMMAND, "-E", "tar", "tf", ITERAGPU_LAB_KIT_ZIP});
  ASSERT_EQ(listing.exit_code, 0) << listing.err;
  std::string expected_listing;
  for (const std::string& member : kKitMembers)
    expected_listing += "iteragpu-lab-v1/" + member + "\n";
  EXPECT_EQ(listing.out, expected_listing);

  const ProcessResult unpack = run_process(
      {ITERAGPU_CMAKE_COMMAND, "-E", "tar", "xf", ITERAGPU_LAB_KIT_ZIP}, {}, dir.path());
  ASSERT_EQ(unpack.exit_code, 0) << unpack.err;
  const std::string kit = dir.file("iteragpu-lab-v1");
  const LabKitVerification report = verify_lab_kit(kit);
  EXPECT_TRUE(report.intact()) << report.to_text();
  EXPECT_EQ(report.kit_name, "iteragpu-lab-v1");
  ASSERT_EQ(report.members.size(), kKitMembers.size());
  for (std::size_t i = 0; i < kKitMembers.size(); ++i)
    EXPECT_EQ(report.members[i].path, kKitMembers[i]);

  const std::string manifest = read_file(kit + "/MANIFEST.json");
  EXPECT_EQ(schema_violation(manifest, "lab-kit-manifest.schema.json"), "");
  // The shipped files, unchanged.
  EXPECT_EQ(read_file(kit + "/README.md"), read_file(ITERAGPU_SOURCE_DIR "/data/kit/README.md"));
  EXPECT_EQ(read_file(kit + "/tarifs-forfaits.csv"),
            read_file(ITERAGPU_DATA_DIR "/tarifs-forfaits.csv"));
  EXPECT_EQ(read_file(kit + "/mesure-memoire.ipynb"),
            read_file(ITERAGPU_SOURCE_DIR "/examples/mesure-memoire.ipynb"));
}

TEST_F(BuiltKit, NotebookShipsWithEveryOutputEmpty) {
  TempDir dir;
  ASSERT_EQ(
      run_process({ITERAGPU_CMAKE_COMMAND, "-E", "tar", "xf", ITERAGPU_LAB_KIT_ZIP}, {}, dir.path())
          .exit_code,
      0);
  const std::string text = read_file(dir.file("iteragpu-lab-v1/mesure-memoire.ipynb"));
  rapidjson::Document notebook;
  notebook.Parse(text.c_str());
  ASSERT_FALSE(notebook.HasParseError());
  int code_cells = 0;
  for (const auto& cell : notebook["cells"].GetArray()) {
    if (std::string(cell["cell_type"].GetString()) != "code") continue;
    ++code_cells;
    EXPECT_EQ(cell["outputs"].Size(), 0u);
    EXPECT_TRUE(cell["execution_count"].IsNull());
  }
  EXPECT_GT(code_cells, 0);
}

TEST_F(BuiltKit, RebuildsAreByteIdentical) {
  // Once from the source tree, once from a copy with new timestamps and other permissions.
  TempDir first, second, sources;
  copy_kit_sources(sources.path());
  const ProcessResult a = build_kit(ITERAGPU_SOURCE_DIR, first.path(), first.file("kit.zip"));
  ASSERT_EQ(a.exit_code, 0) << a.err;
  const ProcessResult b = build_kit(sources.path(), second.path(), second.file("kit.zip"));
  ASSERT_EQ(b.exit_code, 0) << b.err;
  const std::string built = read_file(ITERAGPU_LAB_KIT_ZIP);
  EXPECT_EQ(read_file(first.file("kit.zip")), built);
  EXPECT_EQ(read_file(second.file("kit.zip")), built);
}

TEST_F(BuiltKit, AnExecutedNotebookFailsTheBuildAndLeavesNoArchive) {
  TempDir work, sources;
  std::string notebook = read_file(ITERAGPU_SOURCE_DIR "/examples/mesure-memoire.ipynb");
  const std::string empty_outputs = "\"outputs\": []";
  const std::size_t at = notebook.find(empty_outputs);
  ASSERT_NE(at, std::string::npos);
  notebook.replace(
      at, empty_outputs.size(),
      "\"outputs\": [{\"output_type\": \"stream\", \"name\": \"stdout\", \"text\": [\"hi\"]}]");
  copy_kit_sources(sources.path(), notebook);
  const ProcessResult result = build_kit(sources.path(), work.path(), work.file("kit.zip"));
  EXPECT_NE(result.exit_code, 0);
  // CMake wraps the message; read it as one line.
  std::string message;
  for (char c : result.err)
    if (!std::isspace(static_cast<unsigned char>(c)) || (!message.empty() && message.back() != ' '))
      message += std::isspace(static_cast<unsigned char>(c)) ? ' ' : c;
  EXPECT_NE(
      message.find("/examples/mesure-memoire.ipynb: code cell(s) 2 (counting from 1) have outputs"),
      std::string::npos)
      << message;
  EXPECT_NE(message.find("the kit ships the notebook with every output empty"), std::string::npos)
      << message;
  EXPECT_FALSE(path_exists(work.file("kit.zip")));
}

}  // namespace
}  // namespace iteragpu::testing
