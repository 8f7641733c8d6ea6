// A training step measured in process: PhaseMeasurer with the FakeBackend test double opened on
// a tiny Llama checkpoint (tests/support/tiny_checkpoint.hpp) with `--train`. The rows of the
// training workload in the protocol's order (weights_load, adapters for LoRA, inputs, then a
// forward, backward and optimizer row per step), the payload the plugin module reads, the run
// record (losses, parameters, trained tokens per second from the warm steps), the measurement
// file (schema, round trip, read back without the checkpoint folder), the prediction made before
// the run (one row per row; its counters as training_allocations.cpp models the steps), and the
// refusals of the options that make no run (an unknown target, a LoRA option without --train lora,
// a decode option with --train).
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <functional>
#include <stdexcept>
#include <memory>
#include <string>
#include <vector>

#include "fake_backend.hpp"
#include "iteragpu/error.hpp"
#include "iteragpu/measurement.hpp"
#include "iteragpu/package_fit.hpp"
#include "iteragpu/phase_measurer.hpp"
#include "process_runner.hpp"
#include "schema_check.hpp"
#include "tiny_checkpoint.hpp"
#include "workload/training_payload.hpp"

namespace iteragpu::testing {
namespace {

class TrainingMeasurement : public ::testing::Test {
 protected:
  void SetUp() override { checkpoint_.write(model_); }

  // model = the tiny checkpoint, LoRA on q_proj and v_proj, 3 steps of [2, 8].
  MeasureRequest request() const {
    MeasureRequest r;
    r.device = "cuda:0";
    r.batch = "2";
    r.context = "8";
    r.model = model_;
    r.workload_options["train"] = "lora";
    r.workload_options["lora-targets"] = "q_proj,v_proj";
    r.output = dir_.file("training.json");
    return r;
  }

  Measurement measure(const MeasureRequest& r, std::string* json = nullptr) {
    return PhaseMeasurer(backend_).measure(MeasureConfiguration::parse(r), {}, json);
  }

  TempDir dir_;
  std::string model_ = dir_.file("tiny-llama");
  TinyCheckpoint checkpoint_;
  std::shared_ptr<FakeBackend> backend_ = std::make_shared<FakeBackend>();
};

// The field and message of the UsageError `action` throws.
void expect_usage_error(const std::function<void()>& action, const std::string& field, const std::string& part) {
  try {
    action();
    ADD_FAILURE() << "accepted; expected a UsageError for " << field;
  } catch (const UsageError& error) {
    EXPECT_EQ(error.field(), field) << error.what();
    EXPECT_NE(std::string(error.what()).find(part), std::string::npos) << error.what();
    EXPECT_EQ(std::string(error.what()).find('\n'), std::string::npos) << error.what();
  }
}

std::string row_name(const PhaseRow& row) {
  return row.phase + (row.step ? " " + std::to_string(*row.step) : "");
}

TEST_F(TrainingMeasurement, RowsAreTheLoopsStepsAndThePayloadItsOptions) {
  const Measurement m = measure(request());
  EXPECT_TRUE(backend_->contract_breaches.empty()) << backend_->contract_breaches.front();
  std::vector<std::string> names;
  for (const PhaseRow& row : m.phases) names.push_back(row_name(row));
  EXPECT_EQ(names, (std::vector<std::string>{"weights_load", "adapters", "inputs", "forward 1", "backward 1",
                                             "optimizer 1", "forward 2", "backward 2", "optimizer 2", "forward 3",
                                             "backward 3", "optimizer 3"}));
  EXPECT_EQ(backend_->spec().kind, "training");
  EXPECT_EQ(m.timing.warm_repeats, 2);  // steps 2 and 3
  ASSERT_TRUE(m.prediction.has_value());
  ASSERT_EQ(m.prediction->phases.size(), m.phases.size());
  for (std::size_t i = 0; i < m.phases.size(); ++i) {
    EXPECT_EQ(m.prediction->phases[i].phase, m.phases[i].phase);
    EXPECT_EQ(m.prediction->phases[i].step, m.phases[i].step);
  }
  const std::string text = m.to_text();
  EXPECT_NE(text.find("LoRA r16 alpha 32 on q_proj,v_proj"), std::string::npos) << text;
  EXPECT_NE(text.find("optimizer 3"), std::string::npos) << text;
  EXPECT_NE(text.find("loss per step: 12.000000 11.000000 10.000000"), std::string::npos) << text;
  EXPECT_EQ(text.find("not predicted yet"), std::string::npos) << text;
}

// The predicted rows follow one another (each row starts where the previous one ended), and
// each step's rows do what the loop does: the forward keeps its activations, the backward frees
// them and leaves the gradients (the same bytes every step), the first optimizer row adds AdamW's state, the later ones
// only free the gradients.
TEST_F(TrainingMeasurement, PredictedStepsKeepAndFreeWhatTheLoopDoes) {
  for (const char* method : {"lora", "full"}) {
    MeasureRequest r = request();
    r.workload_options = {{"train", method}};
    r.output = dir_.file(std::string(method) + ".json");
    const Measurement m = measure(r);
    ASSERT_TRUE(m.prediction.has_value()) << method;
    const std::vector<PhasePrediction>& rows = m.prediction->phases;
    for (std::size_t i = 1; i < rows.size(); ++i) {
      EXPECT_EQ(rows[i].baseline.allocated_bytes, rows[i - 1].end.allocated_bytes) << method << " row " << i;
      EXPECT_EQ(rows[i].baseline.reserved_bytes, rows[i - 1].end.reserved_bytes) << method << " row " << i;
    }
    auto row = [&](const std::string& phase, int step) -> const PhasePrediction& {
      for (const PhasePrediction& p : rows)
        if (p.phase == phase && p.step == step) return p;
      throw std::logic_error("no row " + phase);
    };
    for (int step = 1; step <= 3; ++step) {
      const PhasePrediction &forward = row("forward", step), &backward = row("backward", step),
                            &optimizer = row("optimizer", step);
      EXPECT_GT(forward.end.allocated_bytes, forward.baseline.allocated_bytes) << method << " step " << step;
      // What a backward leaves is the gradients, the same every step (the first backward also
      // allocates the engine thread's cuBLAS workspace, which stays).
      if (step > 1) {
        const PhasePrediction &forward_2 = row("forward", 2), &backward_2 = row("backward", 2);
        EXPECT_EQ(backward.end.allocated_bytes - forward.baseline.allocated_bytes,
                  backward_2.end.allocated_bytes - forward_2.baseline.allocated_bytes)
            << method << " step " << step;
      }
      EXPECT_GT(backward.end.allocated_bytes, forward.baseline.allocated_bytes) << method << " step " << step;
      EXPECT_GE(backward.end.peak_allocated_bytes, backward.baseline.allocated_bytes) << method << " step " << step;
      if (step == 1) {
        EXPECT_GT(optimizer.end.allocated_bytes, optimizer.baseline.allocated_bytes) << method;
      } else {
        EXPECT_EQ(optimizer.end.allocated_bytes, forward.baseline.allocated_bytes) << method << " step " << step;
      }
    }
  }
}

TEST_F(TrainingMeasurement, FullFineTuningHasNoAdaptersRow) {
  MeasureRequest r = request();
  r.workload_options = {{"train", "full"}, {"steps", "2"}};
  const Measurement m = measure(r);
  ASSERT_EQ(m.phases.size(), 2u + 2 * 3);
  EXPECT_EQ(m.phases[1].phase, "inputs");
  EXPECT_EQ(m.timing.warm_repeats, 1);
}

TEST_F(TrainingMeasurement, GradientCheckpointingReachesThePayloadAndTheFile) {
  MeasureRequest r = request();
  r.workload_options["gradient-checkpointing"] = "1";
  std::string published;
  const Measurement m = measure(r, &published);
  TrainingPayload payload;
  ASSERT_EQ(decode_training_payload(backend_->spec().payload, payload), "");
  EXPECT_TRUE(payload.gradient_checkpointing);
  EXPECT_EQ(schema_violation(published, "measurement.schema.json"), "");
  EXPECT_NE(published.find("\"gradient_checkpointing\": true"), std::string::npos) << published;
  EXPECT_NE(m.to_text().find("on q_proj,v_proj, gradient checkpointing"), std::string::npos) << m.to_text();
  // Predicted with the checkpoint: a row for each measured one.
  ASSERT_TRUE(m.prediction.has_value());
  EXPECT_EQ(m.prediction->phases.size(), m.phases.size());
  const Measurement back = Measurement::read(dir_.file("training.json"));
  EXPECT_EQ(back.configuration.workload_options.whole_number("gradient-checkpointing"), 1);
  EXPECT_EQ(back.to_json(), published);
  // Without the flag it is off, in the payload and the file.
  std::filesystem::remove(dir_.file("training.json"));
  const Measurement plain = measure(request(), &published);
  ASSERT_EQ(decode_training_payload(backend_->spec().payload, payload), "");
  EXPECT_FALSE(payload.gradient_checkpointing);
  EXPECT_NE(published.find("\"gradient_checkpointing\": false"), std::string::npos);
}

TEST_F(TrainingMeasurement, FileIsValidAndReadsBackWithoutTheCheckpoint) {
  std::string published;
  const Measurement m = measure(request(), &published);
  EXPECT_EQ(schema_violation(published, "measurement.schema.json"), "");
  EXPECT_NE(published.find("\"training_run\""), std::string::npos);
  const std::string text = m.to_text();
  std::filesystem::remove_all(model_);
  const Measurement back = Measurement::read(dir_.file("training.json"));
  EXPECT_EQ(back.to_json(), published);
  EXPECT_EQ(back.to_text(), text);
  EXPECT_EQ(back.configuration.workload_options.text("train"), "lora");
  EXPECT_EQ(back.configuration.workload_options.text("lora-targets"), "q_proj,v_proj");
}

// packages --train --measurement: a fine-tuning run's trained tokens per second price a million
// trained tokens, on the GPU model it was measured on only. The test double's file is given
// LibTorch's name here (one is refused as a test double's otherwise, PackageFitTest): the
// pricing reads the file's own figures.
TEST_F(TrainingMeasurement, ItsRatePricesAMillionTrainedTokensOnItsGpuModel) {
  MeasureRequest r = request();
  std::string json;
  const Measurement m = measure(r, &json);
  ASSERT_TRUE(m.training_run() && m.training_run()->trained_tokens_per_second);
  const double rate = *m.training_run()->trained_tokens_per_second;
  const std::string test_double = std::string("\"") + kTestDoubleBackend + "\"";
  ASSERT_NE(json.find(test_double), std::string::npos);
  json.replace(json.find(test_double), test_double.size(), std::string("\"") + kLibTorchBackend + "\"");
  const std::string file = dir_.file("measured-as-libtorch.json");
  write_file(file, json);
  const std::string catalog = dir_.file("catalog.csv"), memory = dir_.file("gpu-memory.csv");
  write_file(catalog,
             "gpu,gpu_name,days,lot_price_cents,gpus_per_lot,snapshot_date,source,device_names\n"
             "fake,Fake GPU,7,100000,1,2026-12-07,illustrative test prices,Fake GPU 0\n"
             "other,Other GPU,7,100000,1,2026-12-07,illustrative test prices,Other GPU\n");
  write_file(memory,
             "gpu,compute_capability,memory_bytes,memory_source,outside_allocator_bytes,outside_allocator_source\n"
             "fake,9.0,100000000000,measured: test,0,measured: test\n"
             "other,9.0,100000000000,measured: test,0,measured: test\n");
  PackageFitRequest fit;
  r.output.clear();
  r.device.clear();
  fit.configuration = MeasureConfiguration::parse(r);
  fit.days = "7";
  fit.measurement_file = file;
  const PackageFitReport report =
      fit_packages(fit, PackageCalculator(Catalog::load(catalog)), load_gpu_memory(memory), memory);
  ASSERT_EQ(report.packages.size(), 2u);
  ASSERT_TRUE(report.packages[0].tokens_cost.has_value());
  EXPECT_TRUE(report.packages[0].tokens_cost->trained);
  EXPECT_EQ(report.packages[0].tokens_cost->measured_gpu, "Fake GPU 0");
  // $1,000 for 168 GPU-hours, over the tokens trained in an hour, per million tokens.
  char expected[64];
  std::snprintf(expected, sizeof expected, "%.4Lf", 1000.0L / 168 / (static_cast<long double>(rate) * 3600) * 1e6L);
  EXPECT_EQ(report.packages[0].tokens_cost->price.display_usd, expected);
  EXPECT_FALSE(report.packages[1].tokens_cost.has_value());  // not the GPU model measured
  const std::string out = report.to_json();
  EXPECT_EQ(schema_violation(out, "package-fit.schema.json"), "");
  EXPECT_NE(out.find("\"trained_tokens_per_second\""), std::string::npos);
  EXPECT_EQ(out.find("\"decode_tokens_per_second\""), std::string::npos);
  EXPECT_NE(report.to_text().find("Cost per million trained tokens, only on the GPU model the training rate of"),
            std::string::npos);
  // Another fine-tuning configuration's rate does not price this one.
  r.workload_options["lora-rank"] = "8";
  fit.configuration = MeasureConfiguration::parse(r);
  expect_usage_error(
      [&] { fit_packages(fit, PackageCalculator(Catalog::load(catalog)), load_gpu_memory(memory), memory); },
      "measurement", "has lora-rank 16, not 8");
}

TEST_F(TrainingMeasurement, OptionsThatMakeNoRunAreRefusedInOneLine) {
  MeasureRequest r = request();
  r.workload_options["lora-targets"] = "q_proj,lm_head";
  expect_usage_error([&] { MeasureConfiguration::parse(r); }, "lora-targets",
                     "'lm_head' is not a projection of a decoder layer");
  r = request();
  r.workload_options["train"] = "qlora";
  expect_usage_error([&] { MeasureConfiguration::parse(r); }, "train", "accepted: full, lora");
  r = request();
  r.workload_options = {{"lora-rank", "8"}};
  expect_usage_error([&] { MeasureConfiguration::parse(r); }, "lora-rank", "needs --train lora");
  r = request();  // a LoRA option with full fine-tuning, even at its default value
  r.workload_options = {{"train", "full"}, {"lora-alpha", "32"}};
  expect_usage_error([&] { MeasureConfiguration::parse(r); }, "lora-alpha", "needs --train lora");
  r = request();
  r.workload_options = {{"gradient-checkpointing", "1"}};
  expect_usage_error([&] { MeasureConfiguration::parse(r); }, "gradient-checkpointing", "needs --train");
  r = request();
  r.workload_options["gradient-checkpointing"] = "yes";
  expect_usage_error([&] { MeasureConfiguration::parse(r); }, "gradient-checkpointing", "is not on or off");
  r = request();
  r.workload_options["new-tokens"] = "4";
  expect_usage_error([&] { MeasureConfiguration::parse(r); }, "new-tokens", "needs --model without --train");
  r = request();
  r.model.reset();
  r.workload_options = {{"train", "full"}};
  expect_usage_error([&] { MeasureConfiguration::parse(r); }, "train", "needs --model");
  // Its rows are its steps: a warm-up or repeat count, even the default one, has no use.
  r = request();
  r.warmup = "1";
  expect_usage_error([&] { MeasureConfiguration::parse(r); }, "warmup", "leave --warmup out");
  r = request();
  r.repeats = "5";
  expect_usage_error([&] { MeasureConfiguration::parse(r); }, "repeats", "its rows are --steps training steps");
  EXPECT_TRUE(backend_->calls.empty());
}

}  // namespace
}  // namespace iteragpu::testing
