// A checkpoint measured in process: PhaseMeasurer with the FakeBackend test double opened on
// a tiny Llama checkpoint the test writes (tests/support/tiny_checkpoint.hpp). The rows of the
// decoder workload in the protocol's order, the run report (tokens, logits hash, rates from
// the warm rows), the measurement file (schema, round trip, read back without the checkpoint
// folder, edited rows refused), the configuration the checkpoint resolves, and the refusals
// (a sliding window too short, a prediction of a checkpoint).
#include <gtest/gtest.h>
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "expect_error.hpp"
#include "fake_backend.hpp"
#include "iteragpu/error.hpp"
#include "iteragpu/measurement.hpp"
#include "iteragpu/memory_predictor.hpp"
#include "iteragpu/phase_measurer.hpp"
#include "process_runner.hpp"
#include "schema_check.hpp"
#include "tiny_checkpoint.hpp"

namespace iteragpu::testing {
namespace {

// SHA-256 of FakeBackend::kLastLogitsBytes, "fake logits of the cold sequence's last step"
// (printf '%s' ... | sha256sum).
constexpr const char* kScriptedLogitsSha256 = "45cae5d3bc714d230a9d11467702bf438e30c1fa50b55c996cf047fd82b51776";

double median_of(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const std::size_t middle = values.size() / 2;
  return values.size() % 2 ? values[middle] : (values[middle - 1] + values[middle]) / 2;
}

// What a row is, without its figures: "warm decode 3 (repeat 2)".
std::string row_name(const PhaseRow& row) {
  std::string name = row.sequence.empty() ? row.phase : row.sequence + " " + row.phase;
  if (row.step) name += " " + std::to_string(*row.step);
  return name + " (repeat " + std::to_string(row.repeat) + ", " + std::to_string(row.forwards) + " forwards)";
}

std::string serialized(const rapidjson::Document& document) {
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
  document.Accept(writer);
  return buffer.GetString();
}

class DecoderMeasurement : public ::testing::Test {
 protected:
  void SetUp() override { checkpoint_.write(model_); }

  // model = the tiny checkpoint, new tokens 3, warmup 1, repeats 2; dtype the checkpoint's.
  MeasureRequest request() const {
    MeasureRequest r;
    r.device = "cuda:0";
    r.batch = "1";
    r.context = "8";
    r.warmup = "1";
    r.repeats = "2";
    r.model = model_;
    r.workload_options["new-tokens"] = "3";
    r.output = dir_.file("decoder.json");
    return r;
  }

  Measurement measure(std::string* json = nullptr) {
    return PhaseMeasurer(backend_).measure(MeasureConfiguration::parse(request()), {}, json);
  }

  TempDir dir_;
  std::string model_ = dir_.file("tiny-llama");
  TinyCheckpoint checkpoint_;
  std::shared_ptr<FakeBackend> backend_ = std::make_shared<FakeBackend>();
};

// --- the rows and the run report ----------------------------------------------------------

TEST_F(DecoderMeasurement, RowsFollowTheDecoderProtocol) {
  const Measurement m = measure();
  EXPECT_TRUE(backend_->contract_breaches.empty()) << backend_->contract_breaches.front();
  std::vector<std::string> expected = {"weights_load (repeat 0, 0 forwards)", "inputs (repeat 0, 0 forwards)"};
  auto sequence = [&](const std::string& kind, int repeat) {
    expected.push_back(kind + " prefill 0 (repeat " + std::to_string(repeat) + ", 1 forwards)");
    for (int step = 1; step <= 3; ++step)
      expected.push_back(kind + " decode " + std::to_string(step) + " (repeat " + std::to_string(repeat) +
                         ", 1 forwards)");
  };
  sequence("cold", 0);
  sequence("warmup", 1);
  sequence("warm", 1);
  sequence("warm", 2);
  ASSERT_EQ(m.phases.size(), 2u + 4 * 4);
  std::vector<std::string> names;
  for (const PhaseRow& row : m.phases) names.push_back(row_name(row));
  EXPECT_EQ(names, expected);
  EXPECT_FALSE(m.phases[0].step.has_value());  // weights_load and inputs have no sequence
  EXPECT_EQ(m.phases[1].sequence, "");

  // Each sequence a prefill then one forward per new token; a fresh cache before each prefill
  // after the cold one; the report asked for once the session is closed.
  EXPECT_EQ(backend_->forwards(), 16);
  EXPECT_EQ(std::count(backend_->calls.begin(), backend_->calls.end(), "release_output"), 3);
  ASSERT_GE(backend_->calls.size(), 2u);
  EXPECT_EQ(backend_->calls[backend_->calls.size() - 2], "close");
  EXPECT_EQ(backend_->calls.back(), "run_report");
  EXPECT_EQ(backend_->spec().kind, "decoder");
  EXPECT_EQ(backend_->decoder_payload()->new_tokens, 3);
  EXPECT_EQ(backend_->spec().dtype, "bfloat16");
  EXPECT_EQ(backend_->decoder_payload()->tensors.size(), 1 + 2 * 9 + 2u);
  EXPECT_EQ(m.timing.warm_repeats, 6);  // the warm sequences' decode steps
  // The checkpoint is predicted before the GPU is touched, one predicted row per measured row.
  ASSERT_TRUE(m.prediction.has_value());
  ASSERT_EQ(m.prediction->phases.size(), m.phases.size());
  for (std::size_t index = 0; index < m.phases.size(); ++index) {
    EXPECT_EQ(m.prediction->phases[index].phase, m.phases[index].phase) << index;
    EXPECT_EQ(m.prediction->phases[index].sequence, m.phases[index].sequence) << index;
    EXPECT_EQ(m.prediction->phases[index].step, m.phases[index].step) << index;
  }
}

TEST_F(DecoderMeasurement, CountersGrowPerDecodeStepAndDropBeforeEachPrefill) {
  const Measurement m = measure();
  const auto& rows = m.phases;
  for (std::size_t i = 2; i < rows.size(); ++i) {
    SCOPED_TRACE(row_name(rows[i]));
    EXPECT_GT(rows[i].end.allocated_bytes, rows[i].baseline.allocated_bytes);  // a step's cache stays
    EXPECT_GE(rows[i].end.peak_allocated_bytes, rows[i].end.allocated_bytes);
    if (rows[i].phase == "decode") EXPECT_EQ(rows[i].baseline.allocated_bytes, rows[i - 1].end.allocated_bytes);
  }
  // The previous sequence's cache is freed before every prefill but the cold one: the warm
  // and warm-up prefills start from the same allocation, below the previous decode's end.
  const PhaseRow& warmup_prefill = rows[6];
  const PhaseRow& warm_prefill = rows[14];
  ASSERT_EQ(warmup_prefill.phase, "prefill");
  ASSERT_EQ(warm_prefill.phase, "prefill");
  EXPECT_EQ(warm_prefill.baseline.allocated_bytes, warmup_prefill.baseline.allocated_bytes);
  EXPECT_LT(warmup_prefill.baseline.allocated_bytes, rows[5].end.allocated_bytes);
  EXPECT_EQ(rows[13].end.allocated_bytes, rows[17].end.allocated_bytes);  // same sequence, same bytes
  EXPECT_GT(rows[0].end.allocated_bytes, rows[0].baseline.allocated_bytes);  // the weights
  // After close only the workspace is held; the cache (reserved) stays.
  EXPECT_EQ(backend_->allocated(), FakeBackend::workspace_bytes(0));
  EXPECT_EQ(backend_->cache_bytes(), 0u);
}

TEST_F(DecoderMeasurement, RunReportWithTokensLogitsHashAndWarmRates) {
  // Cold and warm-up forwards are slow (20 ms), warm ones 1 to 8 ms: rates taken from any
  // row but the warm ones' would differ from those computed here.
  auto forward_count = std::make_shared<int>(0);
  FakeBackend::Script script;
  script.on_call = [forward_count](const std::string& call) {
    if (call != "forward") return;
    const int n = ++*forward_count;
    std::this_thread::sleep_for(std::chrono::milliseconds(n <= 8 ? 20 : n - 8));
  };
  backend_ = std::make_shared<FakeBackend>(script);
  const Measurement m = measure();
  ASSERT_NE(m.decoder_run(), nullptr);
  const DecoderRun& run = *m.decoder_run();
  EXPECT_EQ(run.attention_backend, "test-double");
  EXPECT_EQ(run.first_sequence_tokens, (std::vector<std::int64_t>{1, 2, 3, 4}));  // the cold sequence's
  EXPECT_EQ(run.last_logits_sha256, kScriptedLogitsSha256);
  ASSERT_TRUE(run.device_used_bytes.has_value());
  EXPECT_EQ(*run.device_used_bytes, backend_->reserved() + FakeBackend::kDeviceContextBytes);

  std::vector<double> warm_prefill, warm_decode;
  for (const PhaseRow& row : m.phases)
    if (row.sequence == "warm") (row.phase == "prefill" ? warm_prefill : warm_decode).push_back(row.host_seconds);
  ASSERT_EQ(warm_prefill.size(), 2u);
  ASSERT_EQ(warm_decode.size(), 6u);
  ASSERT_TRUE(run.time_to_first_token_seconds && run.prefill_tokens_per_second && run.decode_tokens_per_second);
  EXPECT_DOUBLE_EQ(*run.time_to_first_token_seconds, median_of(warm_prefill));
  EXPECT_DOUBLE_EQ(*run.prefill_tokens_per_second, 1.0 * 8 / median_of(warm_prefill));  // batch × context
  EXPECT_DOUBLE_EQ(*run.decode_tokens_per_second, 1.0 / median_of(warm_decode));        // batch
  EXPECT_LT(median_of(warm_decode), 0.019);  // none of the slow rows is among them
  EXPECT_DOUBLE_EQ(m.timing.host_seconds.median, median_of(warm_decode));
}

TEST_F(DecoderMeasurement, NoRunReportIsAFailedMeasurementAndNoFile) {
  FakeBackend::Script script;
  script.failures.push_back({"run_report", 1, BackendStatus::Code::kFailed, "no report here"});
  backend_ = std::make_shared<FakeBackend>(script);
  const std::string message = message_of<MeasurementFailed>([&] { measure(); });
  EXPECT_NE(message.find("no report here"), std::string::npos) << message;
  EXPECT_FALSE(path_exists(dir_.file("decoder.json")));
}

// --- the measurement file ---------------------------------------------------------------

TEST_F(DecoderMeasurement, FileIsValidAndRoundTrips) {
  std::string published;
  const Measurement m = measure(&published);
  EXPECT_EQ(read_file(dir_.file("decoder.json")), published);
  const std::string json = m.to_json();
  EXPECT_EQ(json, published);
  EXPECT_EQ(schema_violation(json, "measurement.schema.json"), "");
  const Measurement back = Measurement::from_json(json, "decoder.json");
  EXPECT_EQ(back.to_json(), json);
  EXPECT_EQ(back.to_text(), m.to_text());
  ASSERT_TRUE(back.checkpoint.has_value());
  EXPECT_EQ(back.checkpoint->architecture.architecture, "LlamaForCausalLM");
  EXPECT_EQ(back.checkpoint->parameter_count, static_cast<std::int64_t>(checkpoint_.parameter_count()));
  ASSERT_NE(back.decoder_run(), nullptr);
  EXPECT_EQ(back.decoder_run()->last_logits_sha256, kScriptedLogitsSha256);
  EXPECT_EQ(back.decoder_run()->first_sequence_tokens, m.decoder_run()->first_sequence_tokens);
  EXPECT_EQ(back.configuration.model, model_);
  EXPECT_EQ(back.configuration.workload_options.whole_number("new-tokens"), 3);
}

TEST_F(DecoderMeasurement, ReadBackWithoutTheCheckpointFolder) {
  const Measurement m = measure();
  const std::string text = m.to_text();
  std::filesystem::remove_all(model_);
  ASSERT_FALSE(path_exists(model_));
  const Measurement back = Measurement::read(dir_.file("decoder.json"));
  EXPECT_EQ(back.to_json(), m.to_json());
  const std::string back_text = back.to_text();
  EXPECT_EQ(back_text, text);
  EXPECT_NE(back_text.find("LlamaForCausalLM (2 layers, hidden 64, 4 query / 2 KV heads of 16, MLP 128, vocabulary 256)"),
            std::string::npos)
      << back_text;
  EXPECT_NE(back_text.find("cold prefill"), std::string::npos) << back_text;
  EXPECT_NE(back_text.find("warm decode 3"), std::string::npos) << back_text;
  EXPECT_NE(back_text.find(kScriptedLogitsSha256), std::string::npos) << back_text;
}

TEST_F(DecoderMeasurement, ReaderRefusesEditedPhases) {
  std::string json;
  measure(&json);
  const auto refusal = [](const rapidjson::Document& edited) {
    try {
      Measurement::from_json(serialized(edited), "edited.json");
    } catch (const NotAMeasurement& error) {
      EXPECT_EQ(std::string(error.what()).find('\n'), std::string::npos) << error.what();
      return std::string(error.what());
    } catch (const std::exception& error) {
      ADD_FAILURE() << "not NotAMeasurement: " << error.what();
      return std::string();
    }
    ADD_FAILURE() << "an edited file was accepted";
    return std::string();
  };
  {
    rapidjson::Document document;
    document.Parse(json.c_str());
    ASSERT_FALSE(document.HasParseError());
    rapidjson::Value& phases = document["phases"];
    ASSERT_EQ(std::string(phases[4]["phase"].GetString()), "decode");
    phases.Erase(phases.Begin() + 4);  // the cold sequence's decode step 2
    const std::string message = refusal(document);
    EXPECT_EQ(message.rfind("edited.json: ", 0), 0u) << message;
    EXPECT_NE(message.find("phases"), std::string::npos) << message;
  }
  {
    rapidjson::Document document;
    document.Parse(json.c_str());
    rapidjson::Value& row = document["phases"][15];  // the first warm sequence's decode step 1
    ASSERT_EQ(row["step"].GetInt(), 1);
    row["step"].SetInt(2);
    const std::string message = refusal(document);
    EXPECT_NE(message.find("phases/15"), std::string::npos) << message;
  }
  {
    rapidjson::Document document;
    document.Parse(json.c_str());
    rapidjson::Value& row = document["phases"][3];  // the cold sequence's decode step 1
    row["sequence"].SetString("warm");
    row["repeat"].SetInt(1);
    const std::string message = refusal(document);
    EXPECT_NE(message.find("phases/3"), std::string::npos) << message;
  }
}

// --- the configuration a checkpoint resolves ----------------------------------------------

TEST_F(DecoderMeasurement, ConfigurationTakesTheCheckpointsSizesAndDtype) {
  MeasureRequest r = request();
  const MeasureConfiguration resolved = MeasureConfiguration::parse(r);
  EXPECT_EQ(resolved.dtype, "bfloat16");  // left empty: the checkpoint's
  EXPECT_EQ(resolved.width, 64);          // hidden_size
  EXPECT_EQ(resolved.hidden, 128);        // intermediate_size
  EXPECT_FALSE(resolved.hidden_is_default);
  EXPECT_EQ(resolved.model, model_);
  EXPECT_EQ(resolved.workload_options.whole_number("new-tokens"), 3);
  EXPECT_EQ(resolved.checked().dtype, "bfloat16");

  r.dtype = "float16";
  const MeasureConfiguration explicit_dtype = MeasureConfiguration::parse(r);
  EXPECT_EQ(explicit_dtype.dtype, "float16");  // given: kept
  EXPECT_EQ(explicit_dtype.width, 64);

  // The measurement then opens the backend with that dtype and records it.
  r.output = dir_.file("float16.json");
  const Measurement m = PhaseMeasurer(backend_).measure(MeasureConfiguration::parse(r));
  EXPECT_EQ(backend_->spec().dtype, "float16");
  EXPECT_EQ(m.configuration.dtype, "float16");
  EXPECT_NE(m.to_json().find("\"checkpoint_dtype\": \"bfloat16\""), std::string::npos);
}

TEST_F(DecoderMeasurement, NewTokensOutOfRangeNamesTheOption) {
  MeasureRequest r = request();
  r.workload_options["new-tokens"] = "0";
  try {
    MeasureConfiguration::parse(r);
    ADD_FAILURE() << "new tokens 0 accepted";
  } catch (const UsageError& error) {
    EXPECT_EQ(error.field(), "new-tokens") << error.what();
  }
}

// --- refusals ------------------------------------------------------------------------------

TEST_F(DecoderMeasurement, ShortSlidingWindowIsRefusedBeforeTheBackend) {
  TinyCheckpoint mistral;
  mistral.architecture = "MistralForCausalLM";
  mistral.model_type = "mistral";
  mistral.extra["sliding_window"] = "8";
  const std::string folder = dir_.file("tiny-mistral");
  mistral.write(folder);

  MeasureConfiguration configuration;
  configuration.device = "cuda:0";
  configuration.batch = 1;
  configuration.context = 8;
  configuration.dtype = "";
  configuration.model = folder;
  configuration.workload_options.set("new-tokens", 2);
  configuration.output = dir_.file("mistral.json");
  try {
    PhaseMeasurer(backend_).measure(configuration);
    ADD_FAILURE() << "a sliding window of 8 accepted for 8 + 2 positions";
  } catch (const UsageError& error) {
    EXPECT_EQ(error.field(), "model") << error.what();
    EXPECT_NE(error.reason().find("sliding_window 8"), std::string::npos) << error.what();
    EXPECT_EQ(std::string(error.what()).find('\n'), std::string::npos) << error.what();
  }
  EXPECT_TRUE(backend_->calls.empty()) << backend_->calls.front();  // never described nor opened
  EXPECT_FALSE(path_exists(dir_.file("mistral.json")));

  // The same refusal from the parser; a window longer than the positions is accepted.
  MeasureRequest r = request();
  r.model = folder;
  r.context = "8";
  r.workload_options["new-tokens"] = "2";
  EXPECT_NE(message_of<UsageError>([&] { MeasureConfiguration::parse(r); }).find("sliding_window"),
            std::string::npos);
  r.context = "4";
  r.workload_options["new-tokens"] = "3";
  EXPECT_EQ(MeasureConfiguration::parse(r).context, 4);
}

TEST_F(DecoderMeasurement, PositionsBeyondMaxPositionEmbeddingsAreRefused) {
  TinyCheckpoint checkpoint;
  checkpoint.extra["max_position_embeddings"] = "10";
  const std::string folder = dir_.file("tiny-10-positions");
  checkpoint.write(folder);
  MeasureRequest r = request();
  r.model = folder;
  r.context = "8";
  r.workload_options["new-tokens"] = "2";
  EXPECT_EQ(MeasureConfiguration::parse(r).context, 8);  // 10 positions: the limit itself
  r.workload_options["new-tokens"] = "3";
  try {
    MeasureConfiguration::parse(r);
    ADD_FAILURE() << "8 + 3 positions accepted with max_position_embeddings 10";
  } catch (const UsageError& error) {
    EXPECT_EQ(error.field(), "context") << error.what();
    EXPECT_NE(error.reason().find("context 8 + new tokens 3 = 11 positions exceed the checkpoint's "
                                  "max_position_embeddings (10, "),
              std::string::npos)
        << error.what();
    EXPECT_NE(error.reason().find("expected at most 10 positions"), std::string::npos) << error.what();
  }
}

TEST_F(DecoderMeasurement, PredictionOfACheckpointHasItsRowsAndItsCacheGrowth) {
  const MemoryPrediction prediction =
      MemoryPredictor::predict(MeasureConfiguration::parse(request()), PredictionTarget::from_table(9, 0));
  ASSERT_EQ(prediction.phases.size(), 2u + 4 * 4);  // weights_load, inputs, 4 sequences of prefill + 3 steps
  EXPECT_EQ(prediction.phases[0].phase, "weights_load");
  const PhasePrediction& prefill = prediction.phases[2];
  EXPECT_EQ(prefill.phase, "prefill");
  EXPECT_EQ(prefill.sequence, "cold");
  // Each decode step leaves the cache one position longer: keys and values of every layer.
  const PhasePrediction& first = prediction.phases[3];
  const PhasePrediction& second = prediction.phases[4];
  EXPECT_EQ(first.step, 1);
  EXPECT_GE(second.end.allocated_bytes, first.end.allocated_bytes);
  EXPECT_GT(prefill.end.peak_allocated_bytes, prefill.end.allocated_bytes);  // the forward's temporaries
  EXPECT_GT(prediction.parameter_bytes, 0u);
  EXPECT_EQ(prediction.input_bytes, 1u * 8 * 8);  // batch × context token ids, int64
}

// Outside compute capability 9.0 the attention backend is not the one checked: from the first
// prefill the peaks and reserved counters are lower bounds, the allocated baselines and ends
// exact; before it, every counter exact. On 9.0 none is unchecked.
TEST_F(DecoderMeasurement, PredictionMarksTheCountersTheAttentionCaveatLeavesUnchecked) {
  const MeasureConfiguration configuration = MeasureConfiguration::parse(request());
  for (const PhasePrediction& row : MemoryPredictor::predict(configuration, PredictionTarget::from_table(9, 0)).phases)
    EXPECT_TRUE(row.uncertain_counters.empty()) << row.phase;

  const MemoryPrediction ampere = MemoryPredictor::predict(configuration, PredictionTarget::from_table(8, 0));
  ASSERT_EQ(ampere.caveats.size(), 1u);
  const std::vector<std::string> none, first = {"reserved_bytes.end", "peak_allocated_bytes", "peak_reserved_bytes"},
                                       later = {"reserved_bytes.baseline", "reserved_bytes.end",
                                                "peak_allocated_bytes", "peak_reserved_bytes"};
  for (std::size_t i = 0; i < ampere.phases.size(); ++i) {
    const PhasePrediction& row = ampere.phases[i];
    EXPECT_EQ(row.uncertain_counters, i < 2 ? none : i == 2 ? first : later) << i << " " << row.phase;
    EXPECT_EQ(row.lower_bound, i >= 2) << i;
  }
  const std::string text = ampere.to_text();
  EXPECT_NE(text.find(">=" + std::to_string(ampere.phases[2].end.peak_reserved_bytes)), std::string::npos) << text;
  EXPECT_NE(text.find(">= marks a counter a caveat below leaves unchecked, that can only be higher."),
            std::string::npos);
  EXPECT_EQ(schema_violation(ampere.to_json(), "prediction.schema.json"), "");

  // Another LibTorch than the rules' reaches every counter of every row, either way.
  PredictionTarget other_torch = PredictionTarget::from_table(9, 0);
  other_torch.torch_version = "2.10.0+cu128";
  const MemoryPrediction other = MemoryPredictor::predict(configuration, other_torch);
  ASSERT_EQ(other.caveats.size(), 1u);
  EXPECT_NE(other.caveats[0].find("LibTorch 2.10.0+cu128"), std::string::npos) << other.caveats[0];
  for (const PhasePrediction& row : other.phases) {
    EXPECT_EQ(row.uncertain_counters.size(), 6u) << row.phase;
    EXPECT_FALSE(row.lower_bound);
  }
  // With both, the rows the attention caveat reaches are no longer lower bounds.
  other_torch.compute_capability_major = 8;
  EXPECT_FALSE(MemoryPredictor::predict(configuration, other_torch).phases[2].lower_bound);
}

// --- the fake backend's MLP is unchanged by a checkpoint run on the same object -------------

TEST_F(DecoderMeasurement, TheSameBackendThenMeasuresTheSyntheticMlp) {
  measure();
  MeasureRequest mlp;
  mlp.output = dir_.file("mlp.json");
  const Measurement m = PhaseMeasurer(backend_).measure(MeasureConfiguration::parse(mlp));
  EXPECT_TRUE(backend_->contract_breaches.empty());
  EXPECT_EQ(m.decoder_run(), nullptr);
  EXPECT_FALSE(m.checkpoint.has_value());
  EXPECT_EQ(m.phases.size(), 5u + 1);  // model_load, inputs, cold_forward, warmup, warm_forward × 2
  std::string report;
  EXPECT_EQ(backend_->run_report(report).code, BackendStatus::Code::kUnsupported);
}

}  // namespace
}  // namespace iteragpu::testing
