// MeasurementComparison on fake-backend measurements (float32 against bfloat16, the same run
// twice, another LibTorch, no warmup) and on the real H200 files: the rows hold the
// measurements' own figures, ratios are to the first, the findings say what differs, and
// the four renderings carry the same rows (JSON valid against its schema, integers as
// integers). Checkpoint measurements (the tiny checkpoint under the fake backend, and a real
// H200 Llama 8B run) are described from the checkpoint and their decoder rows and rates; a
// synthetic-MLP measurement beside a checkpoint one is refused.
#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <algorithm>

#include "expect_error.hpp"
#include "fake_backend.hpp"
#include "iteragpu/error.hpp"
#include "iteragpu/measurement_comparison.hpp"
#include "process_runner.hpp"
#include "schema_check.hpp"
#include "tiny_checkpoint.hpp"

namespace iteragpu::testing {
namespace {

#define EXPECT_CONTAINS(text, part) EXPECT_NE((text).find(part), std::string::npos) << (text)

Measurement measured(const std::string& dtype, int warmup = 1, const std::string& torch = "0.0.0+fake") {
  FakeBackend::Script script;
  script.torch_version = torch;
  MeasureRequest request;
  request.dtype = dtype;
  request.warmup = std::to_string(warmup);
  request.repeats = "3";
  return PhaseMeasurer(std::make_shared<FakeBackend>(script)).run(MeasureConfiguration::parse(request));
}

const ComparisonRow& row(const MeasurementComparison& c, const std::string& section, const std::string& name) {
  const ComparisonSection* found = c.section(section);
  if (!found || !found->row(name)) {
    ADD_FAILURE() << "no row " << section << "/" << name;
    static const ComparisonRow none;
    return none;
  }
  return *found->row(name);
}

std::uint64_t largest_peak_reserved(const Measurement& m, const std::string& phase) {
  std::uint64_t largest = 0;
  for (const PhaseRow& r : m.phases)
    if (r.phase == phase) largest = std::max(largest, r.end.peak_reserved_bytes);
  return largest;
}

TEST(MeasurementComparison, ExplainsFloat32AgainstBfloat16) {
  const Measurement f32 = measured("float32"), bf16 = measured("bfloat16");
  const MeasurementComparison c = MeasurementComparison::of({"f32.json", "bf16.json"}, {f32, bf16});

  const ComparisonRow& dtype = row(c, "configuration", "dtype");
  EXPECT_FALSE(dtype.same);
  EXPECT_EQ(dtype.values[0].text, "float32");
  EXPECT_EQ(dtype.values[1].text, "bfloat16");
  EXPECT_TRUE(dtype.ratios.empty());  // no ratio of names
  EXPECT_TRUE(row(c, "configuration", "width").same);

  const ComparisonRow& bytes = row(c, "model", "parameter_bytes");
  EXPECT_EQ(bytes.values[0].integer, static_cast<std::uint64_t>(f32.model.parameter_bytes));
  ASSERT_EQ(bytes.ratios.size(), 2u);
  EXPECT_EQ(*bytes.ratios[0], 1.0);
  EXPECT_EQ(*bytes.ratios[1], 0.5);

  // warm_forward's peak is the largest over its three repeats, the measurement's own figure.
  const ComparisonRow& warm = row(c, "peaks", "warm_forward.peak_reserved_bytes");
  EXPECT_EQ(warm.values[0].integer, largest_peak_reserved(f32, "warm_forward"));
  EXPECT_EQ(warm.values[1].integer, largest_peak_reserved(bf16, "warm_forward"));
  EXPECT_DOUBLE_EQ(*warm.ratios[1], static_cast<double>(warm.values[1].integer) / warm.values[0].integer);
  const ComparisonRow& model_load = row(c, "peaks", "model_load.peak_allocated_bytes");
  EXPECT_EQ(model_load.values[1].integer, bf16.phases[0].end.peak_allocated_bytes);

  const ComparisonRow& median = row(c, "times", "host.median");
  EXPECT_EQ(median.values[0].number, f32.timing.host_seconds.median);
  EXPECT_EQ(row(c, "times", "gpu_event.median").values[1].number, FakeBackend::kGpuEventSeconds);

  ASSERT_EQ(c.findings.size(), 1u);
  const std::string& finding = c.findings[0];
  EXPECT_CONTAINS(finding, "[2] against [1]: configuration differs in dtype (float32 → bfloat16)");
  EXPECT_CONTAINS(finding, "the same environment");
  EXPECT_CONTAINS(finding, "parameter bytes ×0.500");
  EXPECT_CONTAINS(finding, "largest peak allocated ×");
  EXPECT_CONTAINS(finding, "warm GPU event median ×1.000 (within the repeats' IQR)");
  // The fake's workspace does not shrink with the dtype, so neither do the peaks by half.
  EXPECT_CONTAINS(finding, "the peaks change less than the weights");
}

TEST(MeasurementComparison, TheSameRunTwiceIsRunToRunVariation) {
  const Measurement m = measured("float32");
  const MeasurementComparison c = MeasurementComparison::of({"a", "b"}, {m, m});
  EXPECT_CONTAINS(c.findings[0], "the same configuration; the same environment");
  EXPECT_CONTAINS(c.findings[0], "run-to-run variation");
  for (const ComparisonSection& section : c.sections)
    for (const ComparisonRow& r : section.rows) {
      EXPECT_TRUE(r.same) << r.name;
      for (const auto& ratio : r.ratios)
        if (ratio) EXPECT_EQ(*ratio, 1.0) << r.name;
    }
}

TEST(MeasurementComparison, NamesTheEnvironmentFieldsThatDiffer) {
  const MeasurementComparison c =
      MeasurementComparison::of({"a", "b"}, {measured("float32"), measured("float32", 1, "2.11.0+cu130")});
  EXPECT_FALSE(row(c, "environment", "libtorch").same);
  EXPECT_TRUE(row(c, "environment", "gpu").same);
  EXPECT_CONTAINS(c.findings[0], "environment differs in libtorch (0.0.0+fake → 2.11.0+cu130)");
  const std::string text = c.to_text();
  EXPECT_CONTAINS(text, "Environment fields that differ");
  EXPECT_CONTAINS(text, "The same in every measurement: GPU Fake GPU 0;");
}

TEST(MeasurementComparison, AMissingPhaseIsAbsentNotZero) {
  const MeasurementComparison c =
      MeasurementComparison::of({"a", "b"}, {measured("float32", 2), measured("float32", 0)});
  const ComparisonRow& warmup = row(c, "peaks", "warmup.peak_allocated_bytes");
  EXPECT_EQ(warmup.values[0].kind, ComparedValue::Kind::kInteger);
  EXPECT_EQ(warmup.values[1].kind, ComparedValue::Kind::kAbsent);
  EXPECT_FALSE(warmup.ratios[1].has_value());
  EXPECT_CONTAINS(c.to_csv(), "peaks,warmup.peak_allocated_bytes,warmup peak allocated,bytes,false,");
}

TEST(MeasurementComparison, NeedsTwoMeasurements) {
  const std::string message = message_of<UsageError>([] { MeasurementComparison::of({"a"}, {measured("float32")}); });
  EXPECT_CONTAINS(message, "at least two measurements, got 1");
  message_of<UsageError>([] { MeasurementComparison::of_files({}); });
  // A file that is not there is named before anything is compared.
  EXPECT_CONTAINS(message_of<DataFileError>([] { MeasurementComparison::of_files({"/nonexistent/a.json", "/nonexistent/b.json"}); }),
                  "/nonexistent/a.json: ");
}

TEST(MeasurementComparison, FourRenderingsOfTheSameRows) {
  const MeasurementComparison c = MeasurementComparison::of(
      {"f32.json", "bf16.json", "f16.json"}, {measured("float32"), measured("bfloat16"), measured("float16")});
  const std::string json = c.to_json();
  ASSERT_EQ(schema_violation(json, "comparison.schema.json"), "") << json;
  rapidjson::Document doc;
  doc.Parse(json.c_str());
  const auto& sections = doc["sections"];
  ASSERT_EQ(sections.Size(), 5u);
  const auto& model_rows = sections[1]["rows"];
  EXPECT_STREQ(model_rows[2]["name"].GetString(), "parameter_bytes");
  EXPECT_TRUE(model_rows[2]["values"][0].IsUint64());  // bytes are JSON integers
  EXPECT_EQ(model_rows[2]["values"][1].GetUint64(), static_cast<std::uint64_t>(c.measurements[1].model.parameter_bytes));
  EXPECT_EQ(model_rows[2]["ratios"][2].GetDouble(), 0.5);
  EXPECT_TRUE(sections[0]["rows"][5]["ratios"].IsNull());  // dtype
  EXPECT_EQ(doc["findings"].Size(), 2u);

  // CSV: a header and one line per row, every line with the header's field count.
  const std::string csv = c.to_csv();
  EXPECT_EQ(csv.rfind("section,name,label,unit,same,value_1,value_2,value_3,ratio_2,ratio_3\n", 0), 0u) << csv;
  EXPECT_CONTAINS(csv, "model,parameter_bytes,parameter bytes,bytes,false," +
                           std::to_string(c.measurements[0].model.parameter_bytes) + ",");
  std::size_t rows = 0;
  for (const ComparisonSection& section : c.sections) rows += section.rows.size();
  EXPECT_EQ(static_cast<std::size_t>(std::count(csv.begin(), csv.end(), '\n')), rows + 1);

  const std::string markdown = c.to_markdown();
  EXPECT_CONTAINS(markdown, "**Peak bytes per phase**\n\n|  | [1] | [2] | [3] | [2]/[1] | [3]/[1] |\n| --- | ---: |");
  EXPECT_CONTAINS(markdown, "- [3] against [1]: configuration differs in dtype (float32 → float16)");

  const std::string text = c.to_text();
  EXPECT_CONTAINS(text, "  [2] bf16.json: Fake GPU 0, bfloat16, batch 1, context 16, width 64 — TEST DOUBLE: "
                        "scripted figures from a stand-in backend, not measured on a GPU\n");
  EXPECT_CONTAINS(text, "≠ parameter bytes");
  EXPECT_CONTAINS(text, "×0.500");
  EXPECT_CONTAINS(text, "Timing warnings: [1] ");
}

// The real H200 pair: float32 against bfloat16 at batch 2, context 128, width 1024, measured
// one after the other on 2026-12-04. Weights halve; the peaks do not, because the cuBLAS and
// cuBLASLt workspaces (32 MiB and 1 MiB on Hopper) are part of them whatever the dtype.
TEST(MeasurementComparison, RealH200Float32AgainstBfloat16) {
  const std::string dir = ITERAGPU_SOURCE_DIR "/examples/results/";
  const MeasurementComparison c =
      MeasurementComparison::of_files({dir + "mesures-float32.json", dir + "mesures-bfloat16.json"});
  EXPECT_EQ(row(c, "model", "parameter_bytes").values[1].integer, 16787456u);
  EXPECT_EQ(*row(c, "model", "parameter_bytes").ratios[1], 0.5);
  const ComparisonRow& peak = row(c, "peaks", "all.peak_allocated_bytes");
  EXPECT_EQ(peak.values[0].integer, 77615104u);
  EXPECT_EQ(peak.values[1].integer, 56109056u);
  // Take the workspaces away and the rest of the peak halves exactly with the dtype.
  const std::uint64_t workspaces = 33554432u + 1048576u;
  EXPECT_EQ(peak.values[0].integer - workspaces, 2 * (peak.values[1].integer - workspaces));
  for (const ComparisonRow& r : c.section("environment")->rows) EXPECT_TRUE(r.same) << r.name;
  const std::string& finding = c.findings[0];
  EXPECT_CONTAINS(finding, "configuration differs in dtype (float32 → bfloat16); the same environment");
  EXPECT_CONTAINS(finding, "parameter bytes ×0.500, largest peak allocated ×0.723");
  EXPECT_CONTAINS(finding, "cuBLAS workspace (33,554,432 bytes) and the cuBLASLt one (1,048,576 bytes), the same whatever the dtype");
}

// The real H200 files: a float32 run at width 1024 against the seed's small one.
TEST(MeasurementComparison, RealH200Files) {
  const std::string dir = ITERAGPU_SOURCE_DIR "/examples/results/";
  const MeasurementComparison c =
      MeasurementComparison::of_files({dir + "mesures.json", dir + "mesures-petit-essai.json"});
  EXPECT_EQ(row(c, "environment", "gpu").values[0].text, "NVIDIA H200");
  EXPECT_TRUE(row(c, "environment", "gpu").same);
  EXPECT_EQ(row(c, "model", "parameter_bytes").values[0].integer, 33574912u);  // GPU-BUILD.md's figure
  EXPECT_CONTAINS(c.findings[0], "width (1,024 → 64)");
  EXPECT_EQ(schema_violation(c.to_json(), "comparison.schema.json"), "");
}

// --- checkpoint measurements ------------------------------------------------------------

// The tiny Llama checkpoint (2 layers, hidden 64) measured under the fake backend.
Measurement measured_checkpoint(const std::string& folder, const std::string& batch, const std::string& new_tokens) {
  MeasureRequest request;
  request.batch = batch;
  request.context = "8";
  request.warmup = "1";
  request.repeats = "2";
  request.model = folder;
  request.workload_options["new-tokens"] = new_tokens;
  return PhaseMeasurer(std::make_shared<FakeBackend>()).run(MeasureConfiguration::parse(request));
}

std::uint64_t largest_of(const Measurement& m, const std::string& phase, std::uint64_t AllocatorCounters::*counter) {
  std::uint64_t largest = 0;
  for (const PhaseRow& r : m.phases)
    if (r.phase == phase) largest = std::max(largest, r.end.*counter);
  return largest;
}

class CheckpointComparison : public ::testing::Test {
 protected:
  void SetUp() override { TinyCheckpoint().write(folder_); }
  TempDir dir_;
  std::string folder_ = dir_.file("tiny-llama");
};

TEST_F(CheckpointComparison, RowsComeFromTheCheckpointAndItsDecoderRows) {
  const Measurement a = measured_checkpoint(folder_, "1", "3"), b = measured_checkpoint(folder_, "2", "5");
  ASSERT_TRUE(a.checkpoint && b.checkpoint && a.decoder_run() && b.decoder_run());
  const MeasurementComparison c = MeasurementComparison::of({"a.json", "b.json"}, {a, b});
  EXPECT_TRUE(c.checkpoints);

  // The run's configuration: no synthetic width or hidden (zero for a checkpoint).
  EXPECT_EQ(c.section("configuration")->row("width"), nullptr);
  EXPECT_EQ(row(c, "configuration", "model").values[0].text, folder_);
  EXPECT_EQ(row(c, "configuration", "batch").values[1].integer, 2u);
  EXPECT_EQ(*row(c, "configuration", "batch").ratios[1], 2.0);
  EXPECT_EQ(row(c, "configuration", "context").values[0].integer, 8u);
  EXPECT_EQ(row(c, "configuration", "new_tokens").values[0].integer, 3u);
  EXPECT_EQ(row(c, "configuration", "new_tokens").values[1].integer, 5u);
  EXPECT_EQ(row(c, "configuration", "dtype").values[0].text, "bfloat16");

  // The model: what the file recorded of the checkpoint, never the unused synthetic sizes.
  EXPECT_EQ(c.section("model")->title, "Checkpoint");
  EXPECT_EQ(c.section("model")->row("input_bytes"), nullptr);
  EXPECT_EQ(row(c, "model", "architecture").values[0].text, "LlamaForCausalLM");
  EXPECT_EQ(row(c, "model", "layers").values[0].integer, 2u);
  EXPECT_EQ(row(c, "model", "hidden_size").values[1].integer, 64u);
  EXPECT_EQ(row(c, "model", "kv_heads").values[0].integer, 2u);
  EXPECT_EQ(row(c, "model", "checkpoint_dtype").values[0].text, "bfloat16");
  const ComparisonRow& bytes = row(c, "model", "parameter_bytes");
  EXPECT_EQ(bytes.values[0].integer, a.checkpoint->parameter_bytes);
  EXPECT_EQ(bytes.values[0].integer, 2 * TinyCheckpoint().parameter_count());  // bfloat16
  EXPECT_TRUE(bytes.same);
  EXPECT_EQ(row(c, "model", "parameter_count").values[0].integer, TinyCheckpoint().parameter_count());

  // Memory: the decoder's phases, each the largest over its rows, and what is held at the end.
  for (const char* phase : {"model_load", "cold_forward", "warm_forward"})
    EXPECT_EQ(c.section("peaks")->row(std::string(phase) + ".peak_allocated_bytes"), nullptr) << phase;
  EXPECT_EQ(row(c, "peaks", "weights_load.peak_allocated_bytes").values[0].integer,
            largest_of(a, "weights_load", &AllocatorCounters::peak_allocated_bytes));
  EXPECT_EQ(row(c, "peaks", "prefill.peak_reserved_bytes").values[1].integer,
            largest_of(b, "prefill", &AllocatorCounters::peak_reserved_bytes));
  EXPECT_EQ(row(c, "peaks", "decode.peak_allocated_bytes").values[1].integer,
            largest_of(b, "decode", &AllocatorCounters::peak_allocated_bytes));
  EXPECT_GT(row(c, "peaks", "decode.peak_allocated_bytes").values[1].integer, 0u);
  EXPECT_EQ(row(c, "peaks", "end.reserved_bytes").values[1].integer, b.phases.back().end.reserved_bytes);
  const ComparisonRow& used = row(c, "peaks", "device_used_bytes");
  ASSERT_TRUE(a.decoder_run()->device_used_bytes.has_value());
  EXPECT_EQ(used.values[0].integer, *a.decoder_run()->device_used_bytes);

  // Rates: the run reports' own figures, with ratios.
  const ComparisonRow& decode = row(c, "times", "decode_tokens_per_second");
  EXPECT_EQ(decode.unit, "tokens_per_second");
  EXPECT_EQ(decode.values[0].kind, ComparedValue::Kind::kRate);
  EXPECT_EQ(decode.values[0].number, *a.decoder_run()->decode_tokens_per_second);
  EXPECT_EQ(decode.values[1].number, *b.decoder_run()->decode_tokens_per_second);
  EXPECT_DOUBLE_EQ(*decode.ratios[1], *b.decoder_run()->decode_tokens_per_second / *a.decoder_run()->decode_tokens_per_second);
  EXPECT_EQ(row(c, "times", "prefill_tokens_per_second").values[1].number, *b.decoder_run()->prefill_tokens_per_second);
  EXPECT_EQ(row(c, "times", "time_to_first_token").values[0].number, *a.decoder_run()->time_to_first_token_seconds);
  EXPECT_EQ(row(c, "times", "warm_repeats").values[1].integer, 10u);  // 2 warm sequences × 5 steps

  ASSERT_EQ(c.findings.size(), 1u);
  EXPECT_CONTAINS(c.findings[0], "configuration differs in batch (1 → 2), new_tokens (3 → 5)");
  EXPECT_CONTAINS(c.findings[0], "parameter bytes ×1.000");
  EXPECT_CONTAINS(c.findings[0], "decode tokens/s ×");
  EXPECT_CONTAINS(c.findings[0], "warm decode step host median ×");

  const std::string text = c.to_text();
  EXPECT_CONTAINS(text, "  [2] b.json: Fake GPU 0, LlamaForCausalLM (2 layers, hidden 64), bfloat16, batch 2, "
                        "context 8, 5 new tokens — TEST DOUBLE");
  EXPECT_CONTAINS(text, "Checkpoint\n");
  EXPECT_CONTAINS(text, "prefill peak reserved (largest of the sequences)");
  EXPECT_CONTAINS(text, "Warm decode steps and rates");
  EXPECT_CONTAINS(text, " tokens/s");
  EXPECT_EQ(text.find("Synthetic model"), std::string::npos) << text;
  EXPECT_EQ(text.find("width"), std::string::npos) << text;

  const std::string json = c.to_json();
  ASSERT_EQ(schema_violation(json, "comparison.schema.json"), "") << json;
  rapidjson::Document doc;
  doc.Parse(json.c_str());
  EXPECT_STREQ(doc["measurements"][1]["dtype"].GetString(), "bfloat16");
  EXPECT_STREQ(doc["measurements"][1]["checkpoint"]["architecture"].GetString(), "LlamaForCausalLM");
  EXPECT_EQ(doc["measurements"][0]["checkpoint"]["directory"].GetString(), folder_);
  EXPECT_CONTAINS(c.to_csv(), "times,decode_tokens_per_second,decode (batch over a decode step),tokens_per_second,false,");
}

// A synthetic-MLP measurement beside a checkpoint one: one line naming which is which, in
// either order, whatever the other files.
TEST_F(CheckpointComparison, AnMlpBesideACheckpointIsRefused) {
  const Measurement mlp = measured("float32"), checkpoint = measured_checkpoint(folder_, "1", "3");
  const struct {
    std::vector<std::string> sources;
    std::vector<Measurement> measurements;
  } cases[] = {{{"mlp.json", "llama.json"}, {mlp, checkpoint}},
               {{"llama.json", "llama2.json", "mlp.json"}, {checkpoint, checkpoint, mlp}}};
  for (const auto& c : cases) {
    const std::string message = message_of<UsageError>([&c] { MeasurementComparison::of(c.sources, c.measurements); });
    EXPECT_CONTAINS(message, "cannot compare a synthetic-MLP measurement with a checkpoint measurement: "
                             "mlp.json measured the synthetic MLP, llama.json a checkpoint (LlamaForCausalLM)");
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  }
}

// The tiny checkpoint's fine-tuning steps under the fake backend.
Measurement measured_training(const std::string& folder, const std::string& method, bool gradient_checkpointing) {
  MeasureRequest request;
  request.batch = "2";
  request.context = "8";
  request.model = folder;
  request.workload_options["train"] = method;
  if (gradient_checkpointing) request.workload_options["gradient-checkpointing"] = "1";
  return PhaseMeasurer(std::make_shared<FakeBackend>()).run(MeasureConfiguration::parse(request));
}

// Fine-tuning measurements: their own phases (the largest forward, backward and optimizer
// peaks over the steps), no warm-up or repeats rows, the warm steps and the trained tokens/s.
TEST_F(CheckpointComparison, FineTuningRowsComeFromItsSteps) {
  const Measurement a = measured_training(folder_, "lora", false), b = measured_training(folder_, "lora", true);
  ASSERT_TRUE(a.training_run() && b.training_run());
  const MeasurementComparison c = MeasurementComparison::of({"a.json", "b.json"}, {a, b});
  EXPECT_TRUE(c.checkpoints && c.training);
  EXPECT_EQ(row(c, "peaks", "backward.peak_allocated_bytes").values[1].integer,
            largest_of(b, "backward", &AllocatorCounters::peak_allocated_bytes));
  EXPECT_EQ(row(c, "peaks", "optimizer.peak_reserved_bytes").values[0].integer,
            largest_of(a, "optimizer", &AllocatorCounters::peak_reserved_bytes));
  EXPECT_EQ(row(c, "peaks", "device_used_bytes").values[0].integer, *a.training_run()->device_used_bytes);
  EXPECT_EQ(row(c, "times", "trained_tokens_per_second").values[1].number, *b.training_run()->trained_tokens_per_second);
  EXPECT_EQ(row(c, "times", "warm_repeats").values[0].integer, 2u);  // steps 2 and 3
  EXPECT_EQ(row(c, "configuration", "gradient_checkpointing").values[1].text, "on");
  EXPECT_EQ(c.section("configuration")->row("warmup"), nullptr);
  ASSERT_EQ(c.findings.size(), 1u);
  EXPECT_CONTAINS(c.findings[0], "configuration differs in gradient_checkpointing (off → on)");
  EXPECT_CONTAINS(c.findings[0], "trained tokens/s ×");
  const std::string text = c.to_text();
  EXPECT_CONTAINS(text, "backward peak reserved (largest of the steps)");
  EXPECT_CONTAINS(text, "Warm training steps and rate");
  EXPECT_EQ(text.find("decode"), std::string::npos) << text;
  EXPECT_EQ(schema_violation(c.to_json(), "comparison.schema.json"), "");
}

// Generation beside fine-tuning of the same checkpoint: one line naming which is which.
TEST_F(CheckpointComparison, GenerationBesideFineTuningIsRefused) {
  const Measurement generation = measured_checkpoint(folder_, "1", "3"), training = measured_training(folder_, "full", false);
  const std::string message = message_of<UsageError>(
      [&] { MeasurementComparison::of({"gen.json", "train.json"}, {generation, training}); });
  EXPECT_CONTAINS(message, "cannot compare a measurement of the decoder workload with one of the training workload: "
                           "gen.json ran decoder, train.json training");
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;
}

// The real H200 run of a Llama 8B checkpoint (bfloat16, batch 4, context 4096, 16 new tokens,
// measured 2026-12-04), against itself: the file's own figures, every row the same.
TEST(MeasurementComparison, RealH200CheckpointRun) {
  const std::string file = ITERAGPU_SOURCE_DIR "/examples/results/llama-8b-bfloat16-h200.json";
  const MeasurementComparison c = MeasurementComparison::of_files({file, file});
  EXPECT_TRUE(c.checkpoints);
  EXPECT_EQ(row(c, "environment", "gpu").values[0].text, "NVIDIA H200");
  EXPECT_EQ(row(c, "model", "layers").values[0].integer, 32u);
  EXPECT_EQ(row(c, "model", "hidden_size").values[0].integer, 4096u);
  EXPECT_EQ(row(c, "model", "parameter_bytes").values[0].integer, 16060522496u);
  EXPECT_EQ(row(c, "configuration", "context").values[0].integer, 4096u);
  EXPECT_EQ(row(c, "peaks", "weights_load.peak_allocated_bytes").values[0].integer, 16060523520u);
  EXPECT_EQ(row(c, "peaks", "prefill.peak_allocated_bytes").values[0].integer, 20189979648u);
  EXPECT_EQ(row(c, "peaks", "decode.peak_allocated_bytes").values[0].integer, 18283908096u);
  EXPECT_EQ(row(c, "peaks", "device_used_bytes").values[0].integer, 21815427072u);
  EXPECT_EQ(row(c, "times", "decode_tokens_per_second").values[1].number, 228.80291828970158);
  EXPECT_EQ(row(c, "times", "time_to_first_token").values[0].number, 0.471624747);
  for (const ComparisonSection& section : c.sections)
    for (const ComparisonRow& r : section.rows) EXPECT_TRUE(r.same) << r.name;
  EXPECT_CONTAINS(c.findings[0], "the same configuration; the same environment");
  EXPECT_CONTAINS(c.findings[0], "decode tokens/s ×1.000");
  const std::string text = c.to_text();
  EXPECT_CONTAINS(text, ": NVIDIA H200, LlamaForCausalLM (32 layers, hidden 4096), bfloat16, batch 4, context 4096, 16 new tokens\n");
  EXPECT_CONTAINS(text, "228.8 tokens/s");
  EXPECT_CONTAINS(text, "34,739.5 tokens/s");
  EXPECT_EQ(text.find("TEST DOUBLE"), std::string::npos);
  EXPECT_EQ(schema_violation(c.to_json(), "comparison.schema.json"), "");
}

}  // namespace
}  // namespace iteragpu::testing
