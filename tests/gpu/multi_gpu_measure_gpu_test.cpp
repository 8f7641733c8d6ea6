// `iteragpu measure --device all` on the real GPUs of this machine (ctest label `gpu`): one
// process per visible GPU, each result file a measurement of its own GPU whose counters
// start from nothing and grow by exactly its own model. With one GPU this runs cuda:0
// through the several-device path; with two or more it is the validation. Skips,
// saying why, where no GPU is usable.

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <string>

#include "process_runner.hpp"
#include "schema_check.hpp"

namespace iteragpu::testing {
namespace {

// The seed model Linear(64→256) → GELU → Linear(256→64) in float32: four tensors of 65,536,
// 1,024, 65,536 and 256 bytes, each rounded up to the allocator's 512-byte blocks.
constexpr std::uint64_t kSeedModelAllocation = 65536 + 1024 + 65536 + 512;

TEST(GpuMeasureSeveral, EveryVisibleGpuInItsOwnProcessWithItsOwnCounters) {
  const ProcessResult environment = run_cli({"environment", "--format", "json"});
  rapidjson::Document report;
  if (report.Parse(environment.out.c_str()).HasParseError() || !report.IsObject())
    GTEST_SKIP() << "no environment report: " << environment.err;
  if (!report["gpus"].IsArray() || report["gpus"].Empty() || !report["libtorch"]["gpu_runtime_available"].GetBool())
    GTEST_SKIP() << "no usable GPU here";
  const auto& gpus = report["gpus"];

  TempDir dir;
  const std::string summary = dir.file("mesures.json");
  const ProcessResult r = run_cli({"measure", "--device", "all", "--batch", "1", "--context", "16", "--width",
                                   "64", "--dtype", "float32", "--warmup", "1", "--repeats", "2", "--output",
                                   summary});
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  EXPECT_EQ(list_directory(dir.path()).size(), gpus.Size() + 1);

  const std::string summary_json = read_file(summary);
  ASSERT_EQ(schema_violation(summary_json, "measurement-summary.schema.json"), "") << summary_json;
  rapidjson::Document doc;
  doc.Parse(summary_json.c_str());
  EXPECT_TRUE(doc["complete"].GetBool());
  ASSERT_EQ(doc["devices"].Size(), gpus.Size());

  for (rapidjson::SizeType index = 0; index < gpus.Size(); ++index) {
    const std::string device = "cuda:" + std::to_string(index);
    SCOPED_TRACE(device);
    const auto& outcome = doc["devices"][index];
    EXPECT_EQ(outcome["device"].GetString(), device);
    EXPECT_STREQ(outcome["figures"]["gpu_name"].GetString(), gpus[index]["name"].GetString());
    EXPECT_EQ(outcome["figures"]["model_load_allocated_bytes"].GetUint64(), kSeedModelAllocation);

    const std::string path = dir.file("mesures-cuda" + std::to_string(index) + ".json");
    ASSERT_EQ(outcome["result_file"].GetString(), path);
    const std::string json = read_file(path);
    ASSERT_EQ(schema_violation(json, "measurement.schema.json"), "");
    rapidjson::Document result;
    result.Parse(json.c_str());
    EXPECT_EQ(result["configuration"]["device"].GetString(), device);
    EXPECT_EQ(result["environment"]["selected_device"]["device"].GetString(), device);
    // Its own process on its own GPU: nothing before the model, then exactly the model.
    const auto& model_load = result["phases"][0];
    EXPECT_EQ(model_load["allocated_bytes"]["baseline"].GetUint64(), 0u);
    EXPECT_EQ(model_load["allocated_bytes"]["end"].GetUint64(), kSeedModelAllocation);
  }
}

}  // namespace
}  // namespace iteragpu::testing
