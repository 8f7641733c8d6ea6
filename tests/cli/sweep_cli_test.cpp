// `iteragpu sweep` end to end with the fake plugin: the table and the JSON file (against its
// schema, never overwritten), and one-line refusals with exit 2.
#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include "process_runner.hpp"
#include "schema_check.hpp"

namespace iteragpu::testing {
namespace {

const std::string kFakePlugin = ITERAGPU_FAKE_BACKEND_PATH;
const std::map<std::string, std::string> kFakeGpu = {{"ITERAGPU_FAKE_BACKEND", "memory=268435456"}};

std::vector<std::string> sweep(std::initializer_list<std::string> more) {
  std::vector<std::string> args = {"sweep", "--device", "cuda:0", "--vary", "batch", "--width", "1024",
                                   "--backend", kFakePlugin};
  args.insert(args.end(), more);
  return args;
}

TEST(SweepCli, WritesTheTableAndANewJsonFile) {
  TempDir dir;
  const ProcessResult r = run_cli(sweep({"--budget", "50%", "--output", dir.file("s.json")}), kFakeGpu);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("Largest batch under the budget: "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("does not fit (measured)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("measurements, each in its own worker process"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Sweep written to " + dir.file("s.json")), std::string::npos);
  const std::string json = read_file(dir.file("s.json"));
  EXPECT_EQ(schema_violation(json, "sweep.schema.json"), "");
  rapidjson::Document doc;
  doc.Parse(json.c_str());
  EXPECT_EQ(doc["smallest_not_fitting"].GetInt64(), doc["largest_fitting"].GetInt64() + 1);
  EXPECT_EQ(doc["budget"]["bytes"].GetUint64(), 268435456u / 2);

  // Never overwritten: refused before anything runs.
  const ProcessResult again = run_cli(sweep({"--output", dir.file("s.json")}), kFakeGpu);
  EXPECT_EQ(again.exit_code, 2);
  EXPECT_NE(again.err.find("already exists"), std::string::npos) << again.err;
  EXPECT_EQ(read_file(dir.file("s.json")), json);
}

TEST(SweepCli, JsonOnStdoutValidates) {
  const ProcessResult r = run_cli(sweep({"--budget", "100000000", "--format", "json"}), kFakeGpu);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(schema_violation(r.out, "sweep.schema.json"), "") << r.out;
}

TEST(SweepCli, BadInputIsOneLineAndExitTwo) {
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"sweep", "--vary", "depth"},
           {"sweep", "--width", "64"},
           {"sweep", "--vary", "batch", "--budget", "200%"},
           {"sweep", "--vary", "batch", "--budget", "1.5"},
           {"sweep", "--vary", "batch", "--device", "all"},
           {"sweep", "--vary", "batch", "--batch", "1e3"},
           {"sweep", "--vary", "batch", "--output", ""},  // refused as measure refuses it
           {"sweep", "--vary", "batch", "--package", "h999"},
           {"sweep", "--vary", "batch", "--package", "mi300x"},  // not assessed: no budget
           {"sweep", "--vary", "batch", "--package", "h200", "--budget", "10"},
       }) {
    const ProcessResult r = run_cli(args, kFakeGpu);
    EXPECT_EQ(r.exit_code, 2) << args[2] << ": " << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_EQ(r.out, "");
  }
}

TEST(SweepCli, APackageGivesItsGpuMemoryLessTheFootprintOutsideTheAllocator) {
  // The budget is known before any worker starts: a nonexistent plugin shows nothing ran.
  const ProcessResult r = run_cli({"sweep", "--vary", "batch", "--package", "h200", "--backend", "/nonexistent.so"},
                                  kFakeGpu);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(r.err.find("package"), std::string::npos) << r.err;  // the package was accepted
  const ProcessResult unknown = run_cli({"sweep", "--vary", "batch", "--package", "h999"}, kFakeGpu);
  EXPECT_NE(unknown.err.find("expected one of a10, a100-40gb"), std::string::npos) << unknown.err;
}

}  // namespace
}  // namespace iteragpu::testing
