// PhaseMeasurer against the FakeBackend test double: the SPEC §3 protocol call by call, the
// rows, the counters' bookkeeping, failures mapped to errors, and the output-file rules.
#include <gtest/gtest.h>
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "expect_error.hpp"
#include "fake_backend.hpp"
#include "iteragpu/error.hpp"
#include "iteragpu/phase_measurer.hpp"
#include "process_runner.hpp"
#include "schema_check.hpp"

namespace iteragpu::testing {
namespace {

using Code = BackendStatus::Code;
using Calls = std::vector<std::string>;

MeasureRequest seed_example() {  // the SPEC's first command
  MeasureRequest request;
  request.device = "cuda:0";
  request.batch = "1";
  request.context = "16";
  request.width = "64";
  request.dtype = "float32";
  request.warmup = "1";
  request.repeats = "2";
  return request;
}

const Calls kPhaseOpening = {"synchronize", "read_counters", "reset_peaks", "start_gpu_timer"};
const Calls kPhaseClosing = {"stop_gpu_timer", "synchronize", "read_counters", "gpu_timer_seconds"};

Calls phase_calls(const Calls& work, bool release_first = false) {
  Calls calls;
  if (release_first) calls.push_back("release_output");
  calls.insert(calls.end(), kPhaseOpening.begin(), kPhaseOpening.end());
  calls.insert(calls.end(), work.begin(), work.end());
  calls.insert(calls.end(), kPhaseClosing.begin(), kPhaseClosing.end());
  return calls;
}

Calls concatenated(std::initializer_list<Calls> parts) {
  Calls all;
  for (const auto& part : parts) all.insert(all.end(), part.begin(), part.end());
  return all;
}

std::shared_ptr<FakeBackend> fake(FakeBackend::Script script = {}) {
  return std::make_shared<FakeBackend>(std::move(script));
}

// --- the synthetic model -------------------------------------------------------------------

TEST(SyntheticModel, SizesOfTheSeedExample) {
  const SyntheticModel model = SyntheticModel::from(MeasureConfiguration::parse(seed_example()));
  EXPECT_EQ(model.hidden, 256);  // 4 × width
  EXPECT_EQ(model.parameter_count, 64 * 256 + 256 + 256 * 64 + 64);
  EXPECT_EQ(model.dtype_bytes, 4);
  EXPECT_EQ(model.parameter_bytes, 33088 * 4);
  EXPECT_EQ(model.input_bytes, 1 * 16 * 64 * 4);
}

TEST(SyntheticModel, ExplicitHiddenAndHalfPrecision) {
  MeasureRequest request = seed_example();
  request.hidden = "100";
  request.dtype = "bfloat16";
  const SyntheticModel model = SyntheticModel::from(MeasureConfiguration::parse(request));
  EXPECT_EQ(model.hidden, 100);
  EXPECT_EQ(model.parameter_count, 64 * 100 + 100 + 100 * 64 + 64);
  EXPECT_EQ(model.parameter_bytes, model.parameter_count * 2);
  request.dtype = "float16";
  EXPECT_EQ(SyntheticModel::from(MeasureConfiguration::parse(request)).dtype_bytes, 2);
}

TEST(SyntheticModel, RefusesBadValuesNamingTheField) {
  struct Case {
    std::function<void(MeasureRequest&)> change;
    std::string field;
  };
  const std::vector<Case> cases = {
      {[](MeasureRequest& r) { r.batch = "0"; }, "batch"},
      {[](MeasureRequest& r) { r.context = "-1"; }, "context"},
      {[](MeasureRequest& r) { r.width = "0"; }, "width"},
      {[](MeasureRequest& r) { r.hidden = "-5"; }, "hidden"},
      {[](MeasureRequest& r) { r.warmup = "-1"; }, "warmup"},
      {[](MeasureRequest& r) { r.repeats = "0"; }, "repeats"},
      {[](MeasureRequest& r) { r.dtype = "float64"; }, "dtype"},
      {[](MeasureRequest& r) { r.dtype = "FLOAT32"; }, "dtype"},
      {[](MeasureRequest& r) { r.width = std::to_string((std::int64_t{1} << 24) + 1); }, "width"},
      {[](MeasureRequest& r) { r.width = std::to_string(std::int64_t{1} << 23); }, "width"},  // 4 × width too big
      {[](MeasureRequest& r) { r.repeats = "1000000"; }, "repeats"},
      // Text as a user writes it, parsed once by the core for the CLI, Python and workers.
      {[](MeasureRequest& r) { r.batch = "1.5"; }, "batch"},
      {[](MeasureRequest& r) { r.context = "1e3"; }, "context"},
      {[](MeasureRequest& r) { r.width = " 64"; }, "width"},
      {[](MeasureRequest& r) { r.width = "0x40"; }, "width"},
      {[](MeasureRequest& r) { r.hidden = "0"; }, "hidden"},
      {[](MeasureRequest& r) { r.seed = "-1"; }, "seed"},
      {[](MeasureRequest& r) { r.warmup = ""; }, "warmup"},
      {[](MeasureRequest& r) { r.repeats = std::string(2000, '9'); }, "repeats"},
  };
  for (const auto& c : cases) {
    MeasureRequest request = seed_example();
    c.change(request);
    try {
      SyntheticModel::from(MeasureConfiguration::parse(request));
      ADD_FAILURE() << "accepted a bad " << c.field;
    } catch (const UsageError& e) {
      EXPECT_EQ(e.field(), c.field) << e.what();
      EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos);
    }
  }
}

TEST(MeasureConfiguration, ParsesTextOnceAndResolvesHidden) {
  MeasureRequest request = seed_example();
  request.width = "+128";
  const MeasureConfiguration configuration = MeasureConfiguration::parse(request);
  EXPECT_EQ(configuration.width, 128);
  EXPECT_EQ(configuration.hidden, 512);  // left out: 4 × width
  EXPECT_TRUE(configuration.hidden_is_default);
  // Checking a checked configuration changes nothing; a hidden size given stays given.
  const MeasureConfiguration again = configuration.checked();
  EXPECT_EQ(again.hidden, 512);
  EXPECT_TRUE(again.hidden_is_default);
  request.hidden = "512";
  EXPECT_FALSE(MeasureConfiguration::parse(request).hidden_is_default);
}

TEST(MeasureConfiguration, CheckedRefusesWhatParseRefuses) {
  MeasureConfiguration configuration = MeasureConfiguration::parse(seed_example());
  const auto refused_field = [](const MeasureConfiguration& c) {
    try {
      c.checked();
    } catch (const UsageError& error) {
      return error.field();
    }
    return std::string("(accepted)");
  };
  configuration.batch = 0;
  EXPECT_EQ(refused_field(configuration), "batch");
  configuration.batch = 1;
  configuration.dtype = "int8";
  EXPECT_EQ(refused_field(configuration), "dtype");
}

TEST(SyntheticModel, HugeProductsAreRefusedNotOverflowed) {
  MeasureRequest request = seed_example();
  request.batch = request.context = std::to_string(std::int64_t{1} << 24);
  request.width = request.batch;
  request.hidden = "1";
  const std::string message = message_of<UsageError>([&] { SyntheticModel::from(MeasureConfiguration::parse(request)); });
  EXPECT_NE(message.find("input"), std::string::npos) << message;
}

// --- the protocol --------------------------------------------------------------------------

TEST(PhaseMeasurer, SixRowsForWarmupOneRepeatsTwo) {
  auto backend = fake();
  const Measurement m = PhaseMeasurer(backend).run(MeasureConfiguration::parse(seed_example()));
  ASSERT_EQ(m.phases.size(), 6u);
  const std::vector<std::tuple<std::string, int, int>> expected = {
      {"model_load", 0, 0}, {"inputs", 0, 0},       {"cold_forward", 0, 1},
      {"warmup", 0, 1},     {"warm_forward", 1, 1}, {"warm_forward", 2, 1}};
  for (std::size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(m.phases[i].phase, std::get<0>(expected[i]));
    EXPECT_EQ(m.phases[i].repeat, std::get<1>(expected[i]));
    EXPECT_EQ(m.phases[i].forwards, std::get<2>(expected[i]));
  }
  EXPECT_TRUE(backend->contract_breaches.empty()) << backend->contract_breaches.front();
}

TEST(PhaseMeasurer, ExactCallOrder) {
  auto backend = fake();
  PhaseMeasurer(backend).run(MeasureConfiguration::parse(seed_example()));
  const Calls expected = concatenated({
      {"describe", "open"},
      phase_calls({"load_model"}),
      phase_calls({"create_inputs"}),
      phase_calls({"forward"}),                      // cold_forward: the first forward
      phase_calls({"forward"}, true),                // warmup: cold output released first
      phase_calls({"forward"}, true),                // warm_forward 1
      phase_calls({"forward"}, true),                // warm_forward 2
      {"close"},
  });
  EXPECT_EQ(backend->calls, expected);
}

TEST(PhaseMeasurer, WarmupForwardsShareOneRowAndReleaseBetween) {
  auto backend = fake();
  MeasureRequest request = seed_example();
  request.warmup = "3";
  request.repeats = "1";
  const Measurement m = PhaseMeasurer(backend).run(MeasureConfiguration::parse(request));
  ASSERT_EQ(m.phases.size(), 5u);
  EXPECT_EQ(m.phases[3].phase, "warmup");
  EXPECT_EQ(m.phases[3].forwards, 3);
  const Calls expected = concatenated({
      {"describe", "open"},
      phase_calls({"load_model"}),
      phase_calls({"create_inputs"}),
      phase_calls({"forward"}),
      phase_calls({"forward", "release_output", "forward", "release_output", "forward"}, true),
      phase_calls({"forward"}, true),
      {"close"},
  });
  EXPECT_EQ(backend->calls, expected);
  EXPECT_EQ(backend->forwards(), 5);
}

TEST(PhaseMeasurer, NoWarmupMeansNoWarmupRow) {
  auto backend = fake();
  MeasureRequest request = seed_example();
  request.warmup = "0";
  const Measurement m = PhaseMeasurer(backend).run(MeasureConfiguration::parse(request));
  ASSERT_EQ(m.phases.size(), 5u);
  EXPECT_EQ(m.phases[2].phase, "cold_forward");
  EXPECT_EQ(m.phases[3].phase, "warm_forward");
  EXPECT_EQ(m.phases[3].repeat, 1);
  EXPECT_TRUE(backend->contract_breaches.empty());
}

TEST(PhaseMeasurer, CountersFollowTheWorkAndOutputsAreAliveAtPhaseEnd) {
  auto backend = fake();
  const Measurement m = PhaseMeasurer(backend).run(MeasureConfiguration::parse(seed_example()));
  const auto& spec = backend->mlp();
  const std::uint64_t model_bytes = backend->tensor_bytes(spec.hidden * spec.width) * 2 +
                                    backend->tensor_bytes(spec.hidden) + backend->tensor_bytes(spec.width);
  const std::uint64_t input_bytes = backend->tensor_bytes(spec.batch * spec.context * spec.width);
  const std::uint64_t hidden_bytes = backend->tensor_bytes(spec.batch * spec.context * spec.hidden);
  const std::uint64_t output_bytes = backend->output_bytes();

  const PhaseRow& load = m.phases[0];
  EXPECT_EQ(load.baseline.allocated_bytes, 0u);
  EXPECT_EQ(load.end.allocated_bytes, model_bytes);
  EXPECT_EQ(load.end.peak_allocated_bytes, model_bytes);
  EXPECT_EQ(m.phases[1].end.allocated_bytes, model_bytes + input_bytes);

  const PhaseRow& cold = m.phases[2];
  const std::uint64_t resident = model_bytes + input_bytes;
  EXPECT_EQ(cold.baseline.allocated_bytes, resident);
  EXPECT_EQ(cold.end.allocated_bytes, resident + FakeBackend::kWorkspaceBytes + output_bytes);
  for (std::size_t i = 3; i < m.phases.size(); ++i) {
    const PhaseRow& row = m.phases[i];
    SCOPED_TRACE(row.phase + " " + std::to_string(row.repeat));
    // The previous output was released before the baseline; this one is alive at the end.
    EXPECT_EQ(row.baseline.allocated_bytes, resident + FakeBackend::kWorkspaceBytes);
    EXPECT_EQ(row.end.allocated_bytes, row.baseline.allocated_bytes + output_bytes);
    // Peaks were reset at the phase's start: the two hidden intermediates, not older maxima.
    EXPECT_EQ(row.end.peak_allocated_bytes, row.baseline.allocated_bytes + 2 * hidden_bytes);
    EXPECT_GE(row.end.reserved_bytes, row.end.allocated_bytes);
    EXPECT_GE(row.end.peak_reserved_bytes, row.end.peak_allocated_bytes);
    ASSERT_TRUE(row.gpu_event_seconds.has_value());
    EXPECT_EQ(*row.gpu_event_seconds, FakeBackend::kGpuEventSeconds);
  }
  // close() freed the model, inputs and output; the cache (reserved) was kept.
  EXPECT_FALSE(backend->output_alive());
  EXPECT_EQ(backend->allocated(), FakeBackend::kWorkspaceBytes);
  EXPECT_GT(backend->reserved(), 0u);
}

TEST(PhaseMeasurer, HostTimeCoversTheWorkAndTheFinalSynchronizeOnly) {
  using namespace std::chrono_literals;
  int synchronizations = 0;
  FakeBackend::Script script;
  // cold_forward is the third phase: its synchronizations are the 5th and the 6th.
  script.on_call = [&](const std::string& call) {
    if (call == "synchronize" && ++synchronizations == 5) std::this_thread::sleep_for(300ms);
    if (call == "synchronize" && synchronizations == 12) std::this_thread::sleep_for(60ms);
    if (call == "forward" && synchronizations == 7) std::this_thread::sleep_for(60ms);
  };
  const Measurement m = PhaseMeasurer(fake(script)).run(MeasureConfiguration::parse(seed_example()));
  EXPECT_LT(m.phases[2].host_seconds, 0.3);   // the opening synchronize is not timed
  EXPECT_GE(m.phases[3].host_seconds, 0.06);  // warmup: the work is timed
  EXPECT_GE(m.phases[5].host_seconds, 0.06);  // warm_forward 2: its final synchronize is timed
}

TEST(PhaseMeasurer, NoGpuTimerMeansNoGpuEventFigure) {
  FakeBackend::Script script;
  script.has_gpu_timer = false;
  const Measurement m = PhaseMeasurer(fake(script)).run(MeasureConfiguration::parse(seed_example()));
  for (const auto& row : m.phases) EXPECT_FALSE(row.gpu_event_seconds.has_value());
  EXPECT_EQ(schema_violation(m.to_json(), "measurement.schema.json"), "");
}

TEST(PhaseMeasurer, ProgressIsReportedAfterEachRow) {
  std::vector<std::pair<std::string, int>> seen;
  PhaseMeasurer(fake()).run(MeasureConfiguration::parse(seed_example()), [&](const PhaseRow& row, int done, int total) {
    EXPECT_EQ(total, 6);
    seen.emplace_back(row.phase, done);
  });
  ASSERT_EQ(seen.size(), 6u);
  EXPECT_EQ(seen.front(), std::make_pair(std::string("model_load"), 1));
  EXPECT_EQ(seen.back(), std::make_pair(std::string("warm_forward"), 6));
}

// --- failures ------------------------------------------------------------------------------

struct OomCase {
  std::string call;
  int occurrence;
  std::string phase;
};
// How gtest shows the parameter (--gtest_list_tests, failures): words, not a byte dump.
void PrintTo(const OomCase& c, std::ostream* out) {
  *out << "out of memory at " << c.call << " call " << c.occurrence << " (phase " << c.phase << ")";
}

class OutOfMemoryInPhase : public ::testing::TestWithParam<OomCase> {};

TEST_P(OutOfMemoryInPhase, NamesPhaseAndConfigurationAndLeavesNoFile) {
  const OomCase& c = GetParam();
  FakeBackend::Script script;
  script.failures.push_back({c.call, c.occurrence, Code::kOutOfMemory, "CUDA out of memory"});
  auto backend = fake(script);
  TempDir dir;
  MeasureRequest request = seed_example();
  request.output = dir.file("result.json");
  const std::string message =
      message_of<OutOfMemory>([&] { PhaseMeasurer(backend).measure(MeasureConfiguration::parse(request)); });
  EXPECT_NE(message.find("phase " + c.phase + " "), std::string::npos) << message;
  EXPECT_NE(message.find("cuda:0, batch 1, context 16, width 64, hidden 256, dtype float32"),
            std::string::npos) << message;
  EXPECT_NE(message.find("CUDA out of memory"), std::string::npos) << message;
  EXPECT_TRUE(list_directory(dir.path()).empty());
  EXPECT_EQ(backend->calls.back(), "close");
  EXPECT_EQ(OutOfMemory("x").exit_code(), ExitCode::kMeasurementFailed);
}

INSTANTIATE_TEST_SUITE_P(EveryPhase, OutOfMemoryInPhase,
                         ::testing::Values(OomCase{"load_model", 1, "model_load"},
                                           OomCase{"create_inputs", 1, "inputs"},
                                           OomCase{"forward", 1, "cold_forward"},
                                           OomCase{"forward", 2, "warmup"},
                                           OomCase{"forward", 4, "warm_forward"}),
                         [](const ::testing::TestParamInfo<OomCase>& info) {
                           return info.param.phase;
                         });

TEST(PhaseMeasurer, BackendFailureNamesThePhase) {
  FakeBackend::Script script;
  script.failures.push_back({"synchronize", 4, Code::kFailed, "device lost"});  // inputs' end
  const std::string message =
      message_of<MeasurementFailed>([&] { PhaseMeasurer(fake(script)).run(MeasureConfiguration::parse(seed_example())); });
  EXPECT_NE(message.find("phase inputs"), std::string::npos) << message;
  EXPECT_NE(message.find("device lost"), std::string::npos) << message;
}

TEST(PhaseMeasurer, NoGpuIsDeviceUnavailableBeforeOpening) {
  FakeBackend::Script script;
  script.gpu_count = 0;
  auto backend = fake(script);
  const std::string message =
      message_of<DeviceUnavailable>([&] { PhaseMeasurer(backend).run(MeasureConfiguration::parse(seed_example())); });
  EXPECT_NE(message.find("no GPU available"), std::string::npos) << message;
  EXPECT_EQ(backend->calls, Calls{"describe"});  // nothing opened, no CPU fallback
}

TEST(PhaseMeasurer, MissingDeviceIndexIsDeviceUnavailable) {
  FakeBackend::Script script;
  script.gpu_count = 2;
  MeasureRequest request = seed_example();
  request.device = "cuda:2";
  const std::string message =
      message_of<DeviceUnavailable>([&] { PhaseMeasurer(fake(script)).run(MeasureConfiguration::parse(request)); });
  EXPECT_NE(message.find("cuda:2 does not exist"), std::string::npos) << message;
  EXPECT_NE(message.find("2 GPUs: cuda:0 to cuda:1"), std::string::npos) << message;
}

TEST(PhaseMeasurer, DeviceThatVanishesAtOpenIsDeviceUnavailable) {
  FakeBackend::Script script;
  script.failures.push_back({"open", 1, Code::kDeviceUnavailable, "device busy"});
  auto backend = fake(script);
  const std::string message =
      message_of<DeviceUnavailable>([&] { PhaseMeasurer(backend).run(MeasureConfiguration::parse(seed_example())); });
  EXPECT_NE(message.find("device busy"), std::string::npos) << message;
  EXPECT_EQ(backend->calls.back(), "close");
}

TEST(PhaseMeasurer, UnsupportedDtypeNamesDtypeAndDevice) {
  FakeBackend::Script script;
  script.unsupported_dtypes = {"bfloat16"};
  MeasureRequest request = seed_example();
  request.dtype = "bfloat16";
  try {
    PhaseMeasurer(fake(script)).run(MeasureConfiguration::parse(request));
    ADD_FAILURE() << "no exception";
  } catch (const UsageError& e) {
    EXPECT_EQ(e.field(), "dtype");
    EXPECT_NE(std::string(e.what()).find("bfloat16 is not supported on cuda:0"), std::string::npos)
        << e.what();
  }
}

TEST(PhaseMeasurer, InterruptStopsBetweenPhasesAndLeavesNoFile) {
  FakeBackend::Script script;
  script.on_call = [](const std::string& call) {
    if (call == "forward") PhaseMeasurer::request_interrupt();
  };
  auto backend = fake(script);
  TempDir dir;
  MeasureRequest request = seed_example();
  request.output = dir.file("result.json");
  const std::string message = message_of<Interrupted>([&] { PhaseMeasurer(backend).measure(MeasureConfiguration::parse(request)); });
  EXPECT_NE(message.find("after phase cold_forward"), std::string::npos) << message;
  EXPECT_EQ(backend->forwards(), 1);  // stopped before the warmup
  EXPECT_EQ(backend->calls.back(), "close");
  EXPECT_TRUE(list_directory(dir.path()).empty());
  // The request does not outlive its measurement.
  EXPECT_EQ(PhaseMeasurer(fake()).run(MeasureConfiguration::parse(seed_example())).phases.size(), 6u);
}

// --- the output file -----------------------------------------------------------------------

TEST(PhaseMeasurer, ExistingOutputIsRefusedBeforeAnyBackendCall) {
  auto backend = fake();
  TempDir dir;
  MeasureRequest request = seed_example();
  request.output = dir.file("result.json");
  write_file(request.output, "earlier result\n");
  const std::string message = message_of<OutputExists>([&] { PhaseMeasurer(backend).measure(MeasureConfiguration::parse(request)); });
  EXPECT_NE(message.find("already exists"), std::string::npos) << message;
  EXPECT_TRUE(backend->calls.empty());
  EXPECT_EQ(read_file(request.output), "earlier result\n");
}

TEST(PhaseMeasurer, DanglingSymlinkIsRefusedToo) {
  auto backend = fake();
  TempDir dir;
  MeasureRequest request = seed_example();
  request.output = dir.file("link.json");
  ASSERT_EQ(symlink(dir.file("nowhere.json").c_str(), request.output.c_str()), 0);
  message_of<OutputExists>([&] { PhaseMeasurer(backend).measure(MeasureConfiguration::parse(request)); });
  EXPECT_TRUE(backend->calls.empty());
  EXPECT_FALSE(path_exists(dir.file("nowhere.json")));
}

TEST(PhaseMeasurer, UnusableOutputDirectoryOrEmptyPathIsRefusedBeforeAnyBackendCall) {
  auto backend = fake();
  TempDir dir;
  MeasureRequest request = seed_example();
  request.output = dir.file("missing/result.json");
  message_of<ResourceUnavailable>([&] { PhaseMeasurer(backend).measure(MeasureConfiguration::parse(request)); });
  request.output = "";
  message_of<UsageError>([&] { PhaseMeasurer(backend).measure(MeasureConfiguration::parse(request)); });
  request.output = dir.file("result.json");
  request.batch = "0";  // bad values too are refused before the backend is touched
  message_of<UsageError>([&] { PhaseMeasurer(backend).measure(MeasureConfiguration::parse(request)); });
  EXPECT_TRUE(backend->calls.empty());
}

TEST(PhaseMeasurer, OutputThatAppearsDuringTheMeasurementIsNotOverwritten) {
  TempDir dir;
  const std::string output = dir.file("result.json");
  FakeBackend::Script script;
  script.on_call = [&](const std::string& call) {
    if (call == "create_inputs") write_file(output, "someone else's file\n");
  };
  MeasureRequest request = seed_example();
  request.output = output;
  message_of<OutputExists>([&] { PhaseMeasurer(fake(script)).measure(MeasureConfiguration::parse(request)); });
  EXPECT_EQ(read_file(output), "someone else's file\n");
  EXPECT_EQ(list_directory(dir.path()), std::vector<std::string>{"result.json"});  // no temp file
}

TEST(PhaseMeasurer, PublishesExactlyTheJsonAndNothingElse) {
  TempDir dir;
  MeasureRequest request = seed_example();
  request.output = dir.file("mesures-petit-essai.json");
  const Measurement m = PhaseMeasurer(fake()).measure(MeasureConfiguration::parse(request));
  EXPECT_EQ(read_file(request.output), m.to_json());
  EXPECT_EQ(list_directory(dir.path()), std::vector<std::string>{"mesures-petit-essai.json"});
}

// --- the JSON ------------------------------------------------------------------------------

TEST(MeasurementJson, ValidatesAndKeepsCountersSeparate) {
  FakeBackend::Script script;
  script.gpu_count = 2;
  MeasureRequest request = seed_example();
  request.device = "cuda:1";
  const Measurement m = PhaseMeasurer(fake(script)).run(MeasureConfiguration::parse(request));
  const std::string json = m.to_json();
  ASSERT_EQ(schema_violation(json, "measurement.schema.json"), "") << json;

  rapidjson::Document doc;
  doc.Parse(json.c_str());
  // The embedded environment is a whole environment report.
  rapidjson::StringBuffer environment;
  rapidjson::Writer<rapidjson::StringBuffer> writer(environment);
  doc["environment"].Accept(writer);
  EXPECT_EQ(schema_violation(environment.GetString(), "environment.schema.json"), "");
  EXPECT_STREQ(doc["environment"]["selected_device"]["device"].GetString(), "cuda:1");

  EXPECT_EQ(doc["configuration"]["hidden"].GetInt64(), 256);
  EXPECT_EQ(doc["configuration"]["seed"].GetUint64(), 20260924u);
  const auto& model = doc["synthetic_model"];
  EXPECT_EQ(model["parameter_count"].GetInt64(), 33088);
  EXPECT_EQ(model["parameter_bytes"].GetInt64(), 132352);
  EXPECT_EQ(model["layers"][0]["weight_shape"][0].GetInt(), 256);
  EXPECT_EQ(model["layers"][0]["weight_shape"][1].GetInt(), 64);
  EXPECT_EQ(model["layers"][2]["weight_shape"][0].GetInt(), 64);
  EXPECT_STREQ(model["layers"][1]["type"].GetString(), "GELU");
  EXPECT_EQ(model["input_shape"].Size(), 3u);

  const auto& phases = doc["phases"];
  ASSERT_EQ(phases.Size(), 6u);
  for (rapidjson::SizeType i = 0; i < phases.Size(); ++i) {
    const PhaseRow& row = m.phases[i];
    const auto& p = phases[i];
    EXPECT_EQ(p["phase"].GetString(), row.phase);
    EXPECT_EQ(p["allocated_bytes"]["baseline"].GetUint64(), row.baseline.allocated_bytes);
    EXPECT_EQ(p["allocated_bytes"]["end"].GetUint64(), row.end.allocated_bytes);
    EXPECT_EQ(p["reserved_bytes"]["baseline"].GetUint64(), row.baseline.reserved_bytes);
    EXPECT_EQ(p["reserved_bytes"]["end"].GetUint64(), row.end.reserved_bytes);
    EXPECT_EQ(p["peak_allocated_bytes"].GetUint64(), row.end.peak_allocated_bytes);
    EXPECT_EQ(p["peak_reserved_bytes"].GetUint64(), row.end.peak_reserved_bytes);
    EXPECT_EQ(p["host_seconds"].GetDouble(), row.host_seconds);
  }
  EXPECT_TRUE(phases[0]["repeat"].IsNull());
  EXPECT_EQ(phases[5]["repeat"].GetInt(), 2);
  std::string notes;
  for (const auto& note : doc["notes"].GetArray()) notes += std::string(note.GetString()) + "\n";
  EXPECT_NE(notes.find("never add them"), std::string::npos);
  EXPECT_NE(notes.find("never subtract"), std::string::npos);
  EXPECT_NE(notes.find("GPU event time, not host time"), std::string::npos);
}

TEST(MeasurementJson, SchemaRejectsASummedOrMissingCounter) {
  const std::string json = PhaseMeasurer(fake()).run(MeasureConfiguration::parse(seed_example())).to_json();
  std::string without_peak = json;
  const auto at = without_peak.find("\"peak_reserved_bytes\"");
  without_peak.replace(at, std::string("\"peak_reserved_bytes\"").size(), "\"cache_bytes\"");
  EXPECT_NE(schema_violation(without_peak, "measurement.schema.json"), "");
}

TEST(MeasurementText, ATableWithEveryRow) {
  const Measurement m = PhaseMeasurer(fake()).run(MeasureConfiguration::parse(seed_example()));
  const std::string text = m.to_text();
  for (const char* phase : {"model_load", "inputs", "cold_forward", "warmup", "warm_forward"})
    EXPECT_NE(text.find(phase), std::string::npos) << phase;
  EXPECT_NE(text.find("Fake GPU 0"), std::string::npos);
  EXPECT_NE(text.find("peak alloc"), std::string::npos);
  EXPECT_NE(text.find(std::to_string(m.phases[5].end.allocated_bytes)), std::string::npos);
}

}  // namespace
}  // namespace iteragpu::testing
