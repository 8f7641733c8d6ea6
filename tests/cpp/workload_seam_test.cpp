// The workload seam: the registry answers which workload a configuration asks for and which
// one a measurement file describes; a measurement and a prediction carry the workload they
// ran and its own record of the run; a checkpoint's config.json is read once per process
// however many readers ask for it; a workload's own options, declared by its kind, are parsed,
// completed, refused and written from that declaration.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "expect_error.hpp"
#include "fake_backend.hpp"
#include "iteragpu/measurement.hpp"
#include "iteragpu/memory_predictor.hpp"
#include "iteragpu/phase_measurer.hpp"
#include "iteragpu/workload_options.hpp"
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
    request.workload_options["new-tokens"] = "2";
    return request;
  }

  TempDir dir_;
  std::string model_ = dir_.file("tiny-llama");
};

TEST_F(WorkloadSeam, TheRegistryNamesEachWorkloadOnce) {
  std::vector<std::string> names;
  for (const WorkloadKind& kind : workload_kinds()) names.push_back(kind.name);
  EXPECT_EQ(names, (std::vector<std::string>{"training", "decoder", "synthetic-mlp"}));
}

TEST_F(WorkloadSeam, AConfigurationAsksForOneKind) {
  EXPECT_STREQ(workload_kind_of(MeasureConfiguration::parse(MeasureRequest{})).name, "synthetic-mlp");
  EXPECT_STREQ(workload_kind_of(MeasureConfiguration::parse(decoder_request())).name, "decoder");
  MeasureRequest training = decoder_request();
  training.workload_options = {{"train", "lora"}};
  EXPECT_STREQ(workload_kind_of(MeasureConfiguration::parse(training)).name, "training");
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

// A workload's own options: declared once by its kind, parsed, completed and written from the
// declaration.

TEST_F(WorkloadSeam, EachKindDeclaresItsOwnOptions) {
  std::vector<std::string> declared;
  for (const WorkloadOption& option : declared_workload_options()) declared.push_back(option.name);
  EXPECT_EQ(declared, (std::vector<std::string>{"train", "steps", "lora-rank", "lora-alpha", "lora-targets",
                                                "gradient-checkpointing", "new-tokens"}));
  const WorkloadOption* new_tokens = declared_workload_option("new-tokens");
  ASSERT_NE(new_tokens, nullptr);
  EXPECT_STREQ(new_tokens->keyword, "new_tokens");
  EXPECT_EQ(declared_workload_option("new_tokens"), nullptr);  // the command line's spelling only
  EXPECT_EQ(new_tokens->check("7"), WorkloadOptions::Value{std::int64_t{7}});
  EXPECT_EQ(message_of<UsageError>([&] { new_tokens->check("0"); }),
            "--new-tokens: '0' is out of range; expected a whole number from 1 to 100000");
}

TEST_F(WorkloadSeam, AnOptionNoWorkloadDeclaresIsRefused) {
  MeasureRequest request = decoder_request();
  request.workload_options["draft-model"] = "8";
  EXPECT_EQ(message_of<UsageError>([&] { MeasureConfiguration::parse(request); }),
            "--draft-model: is not an option of any workload");
  MeasureConfiguration configuration = MeasureConfiguration::parse(decoder_request());
  configuration.workload_options.set("draft-model", 8);
  EXPECT_EQ(message_of<UsageError>([&] { configuration.checked(); }), "--draft-model: is not an option of any workload");
}

TEST_F(WorkloadSeam, AnOptionOfAnotherWorkloadIsRefusedWithItsReason) {
  MeasureRequest request;
  request.workload_options["new-tokens"] = "4";
  EXPECT_EQ(message_of<UsageError>([&] { MeasureConfiguration::parse(request); }),
            "--new-tokens: needs --model without --train (only generation has decode steps)");
  MeasureConfiguration configuration = MeasureConfiguration::parse(MeasureRequest{});
  configuration.workload_options.set("new-tokens", 4);
  EXPECT_EQ(message_of<UsageError>([&] { configuration.checked(); }),
            "--new-tokens: needs --model without --train (only generation has decode steps)");
}

TEST_F(WorkloadSeam, AnOptionLeftOutTakesItsDeclaredDefault) {
  MeasureRequest request = decoder_request();
  request.workload_options.clear();
  const MeasureConfiguration parsed = MeasureConfiguration::parse(request);
  EXPECT_EQ(parsed.workload_options.whole_number("new-tokens"), 16);
  EXPECT_EQ(parsed.workload_options.values().size(), 1u);
  // A configuration built in code gets the default from checked(), and keeps what it gives.
  MeasureConfiguration built;
  built.context = 8;
  built.model = model_;
  EXPECT_FALSE(built.workload_options.has("new-tokens"));
  EXPECT_EQ(built.checked().workload_options.whole_number("new-tokens"), 16);
  built.workload_options.set("new-tokens", 3);
  EXPECT_EQ(built.checked().workload_options.whole_number("new-tokens"), 3);
  // The synthetic MLP declares none: its configuration has none.
  EXPECT_TRUE(MeasureConfiguration::parse(MeasureRequest{}).workload_options.values().empty());
}

TEST_F(WorkloadSeam, TheOptionsGoToTheConfigurationsJsonAndComeBack) {
  const auto backend = std::make_shared<FakeBackend>();
  const Measurement measured = PhaseMeasurer(backend).run(MeasureConfiguration::parse(decoder_request()));
  const std::string json = measured.to_json();
  // After the model, at the key the declaration names, as a whole number.
  EXPECT_NE(json.find("\"model\": \"" + model_ + "\",\n    \"new_tokens\": 2\n"), std::string::npos) << json;
  const Measurement read = Measurement::from_json(json, "measurement.json");
  EXPECT_EQ(read.configuration.workload_options, measured.configuration.workload_options);
  EXPECT_EQ(read.configuration.workload_options.whole_number("new-tokens"), 2);

  const Measurement synthetic = PhaseMeasurer(backend).run(MeasureConfiguration::parse(MeasureRequest{}));
  EXPECT_EQ(synthetic.to_json().find("new_tokens"), std::string::npos);
  EXPECT_TRUE(Measurement::from_json(synthetic.to_json(), "m.json").configuration.workload_options.values().empty());
}

}  // namespace
}  // namespace iteragpu::testing
