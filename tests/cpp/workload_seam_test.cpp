// The workload seam: the registry answers which workload a configuration asks for and which
// one a measurement file describes; a measurement and a prediction carry the workload they
// ran and its own record of the run; a checkpoint's config.json is read once per process
// however many readers ask for it.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "fake_backend.hpp"
#include "iteragpu/measurement.hpp"
#include "iteragpu/memory_predictor.hpp"
#include "iteragpu/phase_measurer.hpp"
#include "process_runner.hpp"
#include "tiny_checkpoint.hpp"
#include "workload/workload.hpp"

namespace iteragpu::testing {
namespace {

class WorkloadSeam : public ::testing::Test {
 protected:
  void SetUp() override { TinyCheckpoint().write(model_); }

  MeasureRequest decoder_request() const {
    MeasureRequest request;
    request.context = "8";
    request.model = model_;
    request.new_tokens = "2";
    return request;
  }

  TempDir dir_;
  std::string model_ = dir_.file("tiny-llama");
};

TEST_F(WorkloadSeam, TheRegistryNamesEachWorkloadOnce) {
  std::vector<std::string> names;
  for (const WorkloadKind& kind : workload_kinds()) names.push_back(kind.name);
  EXPECT_EQ(names, (std::vector<std::string>{"decoder", "synthetic-mlp"}));
}

TEST_F(WorkloadSeam, AConfigurationAsksForOneKind) {
  EXPECT_STREQ(workload_kind_of(MeasureConfiguration::parse(MeasureRequest{})).name, "synthetic-mlp");
  EXPECT_STREQ(workload_kind_of(MeasureConfiguration::parse(decoder_request())).name, "decoder");
}

TEST_F(WorkloadSeam, AMeasurementCarriesItsWorkloadAndItsRunRecord) {
  const auto backend = std::make_shared<FakeBackend>();
  const Measurement measured = PhaseMeasurer(backend).run(MeasureConfiguration::parse(decoder_request()));
  ASSERT_NE(measured.workload, nullptr);
  ASSERT_NE(measured.decoder_run(), nullptr);
  EXPECT_EQ(measured.decoder_run()->first_sequence_tokens, (std::vector<std::int64_t>{1, 2, 3}));

  // Read back, the file's own description gives the workload (the folder is not needed) and
  // the workload reads its record; both write the same file again.
  std::filesystem::remove_all(model_);
  const Measurement read = Measurement::from_json(measured.to_json(), "measurement.json");
  ASSERT_NE(read.workload, nullptr);
  ASSERT_NE(read.decoder_run(), nullptr);
  EXPECT_EQ(read.decoder_run()->last_logits_sha256, measured.decoder_run()->last_logits_sha256);
  EXPECT_EQ(read.to_json(), measured.to_json());
  EXPECT_EQ(read.to_text(), measured.to_text());
}

TEST_F(WorkloadSeam, TheSyntheticMlpKeepsNoRunRecord) {
  const auto backend = std::make_shared<FakeBackend>();
  const Measurement measured = PhaseMeasurer(backend).run(MeasureConfiguration::parse(MeasureRequest{}));
  ASSERT_NE(measured.workload, nullptr);
  EXPECT_EQ(measured.run, nullptr);
  EXPECT_EQ(measured.decoder_run(), nullptr);
  const Measurement read = Measurement::from_json(measured.to_json(), "measurement.json");
  EXPECT_EQ(read.run, nullptr);
  EXPECT_EQ(read.to_json(), measured.to_json());
}

TEST_F(WorkloadSeam, ACheckpointIsReadOncePerConfiguration) {
  const MeasureConfiguration configuration = MeasureConfiguration::parse(decoder_request());
  // Gone after the first read: every later reader (the workload, the predictor, a copy of the
  // configuration) gets what was read, not the folder again.
  ASSERT_EQ(std::remove((model_ + "/config.json").c_str()), 0);
  const MeasureConfiguration copy = configuration;
  EXPECT_STREQ(workload_kind_of(copy).name, "decoder");
  EXPECT_NE(workload_for(copy), nullptr);
  const MemoryPrediction prediction = MemoryPredictor::predict(copy, PredictionTarget::from_table(9, 0));
  EXPECT_EQ(prediction.phases.size(), 2u + 4 * 3);  // weights_load, inputs, 4 sequences of a prefill and 2 decode steps
  EXPECT_NE(prediction.workload, nullptr);
  EXPECT_EQ(prediction.to_json(), MemoryPredictor::predict(configuration, PredictionTarget::from_table(9, 0)).to_json());
}

}  // namespace
}  // namespace iteragpu::testing
