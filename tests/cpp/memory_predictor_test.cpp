// MemoryPredictor: the phase rows of a prediction, against counters PyTorch 2.11 recorded on
// an H200 (torch.nn from Python, the peer script tests/bench/measure_peer.py), the branches
// of its rules (cuBLASLt used or not, workspace per architecture, environment settings), its
// JSON, and its place beside every measured row.
#include <gtest/gtest.h>
#include <stdlib.h>

#include "expect_error.hpp"
#include "fake_backend.hpp"
#include "iteragpu/error.hpp"
#include "iteragpu/memory_predictor.hpp"
#include "iteragpu/phase_measurer.hpp"
#include "schema_check.hpp"

namespace iteragpu::testing {
namespace {

constexpr std::uint64_t MiB = 1024 * 1024;

MeasureRequest seed_large() {  // the seed's second command
  MeasureRequest request;
  request.batch = "2";
  request.context = "128";
  request.width = "1024";
  request.warmup = "3";
  request.repeats = "5";
  return request;
}

struct Expected {
  const char* phase;
  std::uint64_t allocated_baseline, allocated_end, peak_allocated;
  std::uint64_t reserved_baseline, reserved_end, peak_reserved;
};

void expect_rows(const MemoryPrediction& prediction, const std::vector<Expected>& expected) {
  ASSERT_EQ(prediction.phases.size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    const PhasePrediction& row = prediction.phases[i];
    SCOPED_TRACE(row.phase + " " + std::to_string(row.repeat));
    EXPECT_EQ(row.phase, expected[i].phase);
    EXPECT_EQ(row.baseline.allocated_bytes, expected[i].allocated_baseline);
    EXPECT_EQ(row.end.allocated_bytes, expected[i].allocated_end);
    EXPECT_EQ(row.end.peak_allocated_bytes, expected[i].peak_allocated);
    EXPECT_EQ(row.baseline.reserved_bytes, expected[i].reserved_baseline);
    EXPECT_EQ(row.end.reserved_bytes, expected[i].reserved_end);
    EXPECT_EQ(row.end.peak_reserved_bytes, expected[i].peak_reserved);
  }
}

// Unsets an environment variable for the test's duration, restoring it after.
class ScopedEnvironment {
 public:
  ScopedEnvironment(const char* name, const char* value) : name_(name) {
    if (const char* old = getenv(name)) old_ = old;
    setenv(name, value, 1);
  }
  ~ScopedEnvironment() {
    if (old_) {
      setenv(name_, old_->c_str(), 1);
    } else {
      unsetenv(name_);
    }
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

TEST(MemoryPredictor, PredictsTheSeedLargeCommandOnHopperAsPyTorchRecordedIt) {
  // PyTorch 2.11 from Python on the H200 (issue #10): 33,574,912 parameter bytes, then from
  // the cold forward on 70,275,072 allocated at the end of each forward (outputs alive), the
  // 32 MiB cuBLAS and 1 MiB cuBLASLt workspaces included.
  const MemoryPrediction p = MemoryPredictor::predict(MeasureConfiguration::parse(seed_large()), PredictionTarget::from_table(9, 0));
  const std::vector<Expected> warm = {
      {"warm_forward", 69226496, 70275072, 77615104, 92274688, 92274688, 92274688}};
  std::vector<Expected> expected = {
      {"model_load", 0, 33574912, 33574912, 0, 35651584, 35651584},
      {"inputs", 33574912, 34623488, 34623488, 35651584, 35651584, 35651584},
      {"cold_forward", 34623488, 70275072, 77615104, 35651584, 92274688, 92274688},
      {"warmup", 69226496, 70275072, 77615104, 92274688, 92274688, 92274688}};
  for (int i = 0; i < 5; ++i) expected.push_back(warm[0]);
  expect_rows(p, expected);
  EXPECT_TRUE(p.cublaslt_used);
  EXPECT_EQ(p.target.cublas_workspace_bytes, 32 * MiB);
  EXPECT_EQ(p.target.cublaslt_workspace_bytes, 1 * MiB);
}

TEST(MemoryPredictor, PredictsTheSeedSmallCommandInTheSmallPool) {
  MeasureRequest request;  // batch 1, context 16, width 64, warmup 1, repeats 2
  const MemoryPrediction p = MemoryPredictor::predict(MeasureConfiguration::parse(request), PredictionTarget::from_table(9, 0));
  // 132,608 parameter bytes in one 2 MiB small segment; the 32 MiB cuBLAS workspace gets its
  // own segment; the 1 MiB cuBLASLt workspace fits in the first small segment.
  expect_rows(p, {{"model_load", 0, 132608, 132608, 0, 2 * MiB, 2 * MiB},
                  {"inputs", 132608, 136704, 136704, 2 * MiB, 2 * MiB, 2 * MiB},
                  {"cold_forward", 136704, 34743808, 34772480, 2 * MiB, 34 * MiB, 34 * MiB},
                  {"warmup", 34739712, 34743808, 34772480, 34 * MiB, 34 * MiB, 34 * MiB},
                  {"warm_forward", 34739712, 34743808, 34772480, 34 * MiB, 34 * MiB, 34 * MiB},
                  {"warm_forward", 34739712, 34743808, 34772480, 34 * MiB, 34 * MiB, 34 * MiB}});
}

TEST(MemoryPredictor, UsesTheSmallerCublasWorkspaceOutsideComputeCapability90) {
  const PredictionTarget ampere = PredictionTarget::from_table(8, 0);
  EXPECT_EQ(ampere.cublas_workspace_bytes, 4096u * 1024 * 2 + 16 * 1024 * 8);  // 8 MiB + 128 KiB
  MeasureRequest request;
  const MemoryPrediction p = MemoryPredictor::predict(MeasureConfiguration::parse(request), ampere);
  // 8 MiB + 128 KiB is a mid-sized request: a 20 MiB segment, split.
  EXPECT_EQ(p.phases[2].end.reserved_bytes, 2 * MiB + 20 * MiB);
  EXPECT_EQ(p.phases[2].end.allocated_bytes, 136704 + 4096 + ampere.cublas_workspace_bytes + 1 * MiB);
}

TEST(MemoryPredictor, NoCublasLtWorkspaceWhenAWeightDimensionIsOne) {
  MeasureRequest request;
  request.width = "1";
  request.hidden = "8";
  const MemoryPrediction p = MemoryPredictor::predict(MeasureConfiguration::parse(request), PredictionTarget::from_table(9, 0));
  EXPECT_FALSE(p.cublaslt_used);
  // Parameters 8+8+8+1 floats: four 512-byte blocks; input 16 floats; output 16 floats.
  EXPECT_EQ(p.phases[2].end.allocated_bytes, 4 * 512 + 512 + 32 * MiB + 512);
}

TEST(MemoryPredictor, FollowsDisableAddmmCudaLt) {
  ScopedEnvironment disable("DISABLE_ADDMM_CUDA_LT", "1");
  const MemoryPrediction p = MemoryPredictor::predict(MeasureConfiguration::parse(seed_large()), PredictionTarget::from_table(9, 0));
  EXPECT_FALSE(p.cublaslt_used);
  EXPECT_EQ(p.phases[2].end.allocated_bytes, 70275072 - 1 * MiB);
}

TEST(MemoryPredictor, SaysWhenTheAllocatorSettingsAreNotTheDefaults) {
  ScopedEnvironment settings("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True");
  const MemoryPrediction p = MemoryPredictor::predict(MeasureConfiguration::parse(seed_large()), PredictionTarget::from_table(9, 0));
  ASSERT_EQ(p.caveats.size(), 1u);
  EXPECT_NE(p.caveats[0].find("PYTORCH_CUDA_ALLOC_CONF"), std::string::npos);
  EXPECT_NE(p.to_text().find("Caveat: PYTORCH_CUDA_ALLOC_CONF"), std::string::npos);
  // Every counter of every row is unchecked, either way.
  for (const PhasePrediction& row : p.phases) {
    EXPECT_EQ(row.uncertain_counters.size(), 6u) << row.phase;
    EXPECT_FALSE(row.lower_bound) << row.phase;
  }
  EXPECT_NE(p.to_text().find("~ marks a counter a caveat below leaves unchecked"), std::string::npos);
}

// The workspace variables with the table: from the first forward, the workspaces that stay.
TEST(MemoryPredictor, WorkspaceVariablesLeaveTheForwardsCountersUnchecked) {
  ScopedEnvironment workspace("CUBLAS_WORKSPACE_CONFIG", ":4096:2");
  const MemoryPrediction p = MemoryPredictor::predict(MeasureConfiguration::parse(seed_large()), PredictionTarget::from_table(9, 0));
  ASSERT_EQ(p.phases[2].phase, "cold_forward");
  EXPECT_TRUE(p.phases[0].uncertain_counters.empty());
  EXPECT_TRUE(p.phases[1].uncertain_counters.empty());
  EXPECT_EQ(p.phases[2].uncertain_counters,
            (std::vector<std::string>{"allocated_bytes.end", "reserved_bytes.end", "peak_allocated_bytes",
                                      "peak_reserved_bytes"}));
  EXPECT_EQ(p.phases[3].uncertain_counters.size(), 6u);
}

TEST(MemoryPredictor, ValidatesTheRequestAndTheComputeCapability) {
  MeasureRequest request;
  request.batch = "0";
  EXPECT_NE(message_of<UsageError>([&] { MemoryPredictor::predict(MeasureConfiguration::parse(request), PredictionTarget::from_table(9, 0)); })
                .find("batch"),
            std::string::npos);
  EXPECT_NE(message_of<UsageError>([] { PredictionTarget::from_table(0, 0); }).find("compute capability"),
            std::string::npos);
}

TEST(MemoryPredictor, JsonFollowsItsSchema) {
  MeasureRequest request = seed_large();
  request.device = "";
  const std::string json = MemoryPredictor::predict(MeasureConfiguration::parse(request), PredictionTarget::from_table(9, 0)).to_json();
  EXPECT_EQ(schema_violation(json, "prediction.schema.json"), "") << json;
  EXPECT_NE(json.find("\"device\": null"), std::string::npos);
  std::string broken = json;
  broken.replace(broken.find("\"peak_reserved_bytes\""), 21, "\"peak_cached_bytes\"");
  EXPECT_NE(schema_violation(broken, "prediction.schema.json"), "");
}

TEST(MemoryPredictor, UsesTheWorkspaceSizesTheBackendReports) {
  EnvironmentReport environment;
  environment.stack = StackReport{};
  environment.stack->torch_version = "2.11.0+cu130";
  environment.stack->gpus.push_back({0, "NVIDIA H200", 9, 0, 150ULL << 30, 132});
  environment.stack->cublas_workspace_bytes = 4 * MiB;
  environment.stack->cublaslt_workspace_bytes = 2 * MiB;
  environment.selected_index = 0;
  environment.selected_present = true;
  const PredictionTarget target = PredictionTarget::from_environment(environment);
  EXPECT_EQ(target.cublas_workspace_bytes, 4 * MiB);
  EXPECT_EQ(target.cublaslt_workspace_bytes, 2 * MiB);
  EXPECT_EQ(target.gpu_name, "NVIDIA H200");
  EXPECT_EQ(target.workspace_source, "reported by LibTorch 2.11.0+cu130");

  environment.stack->cublas_workspace_bytes.reset();  // an older plugin: the table
  EXPECT_EQ(PredictionTarget::from_environment(environment).cublas_workspace_bytes, 32 * MiB);
  environment.selected_present = false;
  EXPECT_THROW(PredictionTarget::from_environment(environment), UsageError);
}

TEST(MemoryPredictor, EveryMeasuredRowCarriesItsPredictionAndTheDifference) {
  MeasureRequest request;
  request.warmup = "0";
  request.repeats = "3";
  const Measurement m = PhaseMeasurer(std::make_shared<FakeBackend>()).run(MeasureConfiguration::parse(request));
  ASSERT_TRUE(m.prediction.has_value());
  ASSERT_EQ(m.prediction->phases.size(), m.phases.size());
  for (std::size_t i = 0; i < m.phases.size(); ++i) {
    ASSERT_NE(m.predicted_row(i), nullptr);
    EXPECT_EQ(m.predicted_row(i)->phase, m.phases[i].phase);
  }
  // The test double's model_load allocates the parameter bytes rounded like the allocator,
  // but its reserved bytes grow in its own 2 MiB steps: some counters agree, not all.
  EXPECT_EQ(m.phases[0].end.allocated_bytes, m.predicted_row(0)->end.allocated_bytes);
  EXPECT_GT(m.exact_predicted_counters(), 0);
  EXPECT_LT(m.exact_predicted_counters(), static_cast<int>(6 * m.phases.size()));
  const std::string json = m.to_json();
  EXPECT_EQ(schema_violation(json, "measurement.schema.json"), "") << json;
  EXPECT_NE(json.find("\"difference\""), std::string::npos);
  EXPECT_NE(m.to_text().find("counters exact"), std::string::npos);
}

}  // namespace
}  // namespace iteragpu::testing
