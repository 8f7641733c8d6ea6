// Measurement::from_json / read: every measurement the fake backend produces and every real
// H200 file in examples/results reads back into the values that wrote it (to_json() again
// gives the same text), and anything that is not a whole measurement is one line naming the
// file. A streamed phase row round-trips too.
#include <gtest/gtest.h>

#include <filesystem>

#include "expect_error.hpp"
#include "fake_backend.hpp"
#include "iteragpu/error.hpp"
#include "iteragpu/phase_measurer.hpp"
#include "protocol/phase_row_json.hpp"
#include "process_runner.hpp"
#include "schema_check.hpp"

namespace iteragpu::testing {
namespace {

Measurement measured(FakeBackend::Script script = {}, MeasureRequest request = {}) {
  return PhaseMeasurer(std::make_shared<FakeBackend>(std::move(script))).run(MeasureConfiguration::parse(request));
}

void expect_round_trip(const Measurement& m) {
  const std::string json = m.to_json();
  const Measurement back = Measurement::from_json(json, "x.json");
  EXPECT_EQ(back.to_json(), json);
  EXPECT_EQ(back.to_text(), m.to_text());
}

TEST(MeasurementReader, RoundTripWithPredictionAndGpuTimer) {
  const Measurement m = measured();
  ASSERT_TRUE(m.prediction.has_value());
  ASSERT_TRUE(m.phases.back().gpu_event_seconds.has_value());
  ASSERT_TRUE(m.timing.gpu_event_seconds.has_value());
  expect_round_trip(m);

  const Measurement back = Measurement::from_json(m.to_json(), "x.json");
  EXPECT_EQ(back.configuration.device, "cuda:0");
  EXPECT_EQ(back.configuration.hidden, 256);
  EXPECT_EQ(back.model.parameter_bytes, m.model.parameter_bytes);
  ASSERT_EQ(back.phases.size(), 6u);
  for (std::size_t i = 0; i < back.phases.size(); ++i) {
    EXPECT_EQ(back.phases[i].host_seconds, m.phases[i].host_seconds);  // the same double
    EXPECT_EQ(back.phases[i].end.peak_reserved_bytes, m.phases[i].end.peak_reserved_bytes);
  }
  EXPECT_EQ(back.exact_predicted_counters(), m.exact_predicted_counters());
  EXPECT_EQ(back.prediction->target.gpu_name, "Fake GPU 0");
  EXPECT_EQ(back.timing.host_seconds.median, m.timing.host_seconds.median);
  EXPECT_EQ(back.environment.stack->gpus.at(0).compute_capability_major, 9);
}

// A member named twice is refused by the one JSON entry point, wherever it is: two readers
// of such a file (this one keeps the first, Python's json the last) would disagree.
TEST(MeasurementReader, RefusesAMemberNamedTwiceNamingItsPath) {
  const std::string json = measured().to_json();
  const auto with_duplicate = [&json](const std::string& member, const std::string& again) {
    std::string text = json;
    const std::size_t at = text.find(member);
    EXPECT_NE(at, std::string::npos) << member;
    text.insert(at, again);
    return text;
  };
  const std::string configuration = message_of<NotAMeasurement>(
      [&] { Measurement::from_json(with_duplicate("\"batch\": 1", "\"batch\": 999, "), "x.json"); });
  EXPECT_NE(configuration.find("x.json: not an iteragpu measurement (ambiguous JSON: the member "
                               "'/configuration/batch' is named twice in its object"),
            std::string::npos)
      << configuration;
  // In an array element, with a name that needs JSON Pointer escapes.
  const std::string row = message_of<NotAMeasurement>([&] {
    Measurement::from_json(with_duplicate("\"phase\": \"inputs\"", "\"a/b~c\": 1, \"a/b~c\": 2, "), "x.json");
  });
  EXPECT_NE(row.find("'/phases/1/a~1b~0c' is named twice"), std::string::npos) << row;
  EXPECT_NO_THROW(Measurement::from_json(json, "x.json"));
}

TEST(MeasurementReader, RoundTripWithoutGpuTimerOrPrediction) {
  FakeBackend::Script script;
  script.has_gpu_timer = false;
  Measurement m = measured(script);
  ASSERT_FALSE(m.timing.gpu_event_seconds.has_value());
  expect_round_trip(m);
  m.prediction.reset();
  expect_round_trip(m);
  EXPECT_FALSE(Measurement::from_json(m.to_json(), "x.json").prediction.has_value());
}

TEST(MeasurementReader, RoundTripOtherShapesDtypesAndDevices) {
  FakeBackend::Script script;
  script.gpu_count = 3;
  MeasureRequest request;
  request.device = "cuda:2";
  request.dtype = "bfloat16";
  request.hidden = "100";
  request.warmup = "0";
  request.repeats = "7";
  request.seed = "18446744073709551615";  // the largest seed survives as an integer
  const Measurement m = measured(script, request);
  expect_round_trip(m);
  const Measurement back = Measurement::from_json(m.to_json(), "x.json");
  EXPECT_EQ(back.configuration.seed, 18446744073709551615ULL);
  EXPECT_EQ(back.model.dtype_bytes, 2);
  EXPECT_EQ(back.phases.size(), 10u);  // no warmup row
  EXPECT_EQ(back.environment.selected_index, 2);
}

TEST(MeasurementReader, ReadsAFileThroughTheInputMechanism) {
  TempDir dir;
  MeasureRequest request;
  request.output = dir.file("m.json");
  const Measurement m = PhaseMeasurer(std::make_shared<FakeBackend>()).measure(MeasureConfiguration::parse(request));
  EXPECT_EQ(Measurement::read(request.output).to_json(), read_file(request.output));
  // A directory or a missing path is refused by the input mechanism, naming the path.
  EXPECT_EQ(message_of<DataFileError>([&] { Measurement::read(dir.path()); }).rfind(dir.path() + ": ", 0), 0u);
  const std::string missing = dir.file("none.json");
  EXPECT_EQ(message_of<DataFileError>([&] { Measurement::read(missing); }).rfind(missing + ": ", 0), 0u);
}

// Every real measurement recorded on the H200. Files written since the timing summary and
// the prediction exist read back to their exact text; the older one gets its timing summary
// computed from its warm rows and is then stable.
TEST(MeasurementReader, EveryRealH200FileReadsBack) {
  int files = 0, exact = 0;
  for (const auto& entry : std::filesystem::directory_iterator(ITERAGPU_SOURCE_DIR "/examples/results")) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("mesures", 0) != 0 || entry.path().extension() != ".json") continue;
    const std::string text = read_file(entry.path().string());
    if (text.find("\"schema\": \"iteragpu.measurement\"") == std::string::npos) continue;  // a summary
    ++files;
    const Measurement m = Measurement::read(entry.path().string());
    EXPECT_EQ(m.environment.stack->gpus.at(0).name, "NVIDIA H200") << name;
    const std::string again = m.to_json();
    EXPECT_EQ(schema_violation(again, "measurement.schema.json"), "") << name;
    EXPECT_EQ(Measurement::from_json(again, name).to_json(), again) << name;
    if (text.find("\"timing\"") != std::string::npos) {
      EXPECT_EQ(again, text) << name;
      ++exact;
    } else {
      EXPECT_EQ(m.timing.warm_repeats, m.configuration.repeats) << name;
      EXPECT_GT(m.timing.host_seconds.median, 0) << name;
    }
  }
  EXPECT_GE(files, 5);
  EXPECT_GE(exact, 4);
}

// --- what is not a whole measurement -------------------------------------------------------

std::string refusal(const std::string& text) {
  const std::string message = message_of<DataFileError>([&] { Measurement::from_json(text, "m.json"); });
  EXPECT_EQ(message.rfind("m.json: ", 0), 0u) << message;
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  return message;
}

std::string replaced(std::string text, const std::string& from, const std::string& to) {
  const auto at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

#define EXPECT_CONTAINS(text, part) EXPECT_NE((text).find(part), std::string::npos) << (text)

TEST(MeasurementReader, RefusesWhatIsNotAWholeMeasurement) {
  const std::string json = measured().to_json();
  EXPECT_CONTAINS(refusal(json.substr(0, json.size() / 2)), "not valid JSON");
  EXPECT_CONTAINS(refusal(""), "not valid JSON");
  EXPECT_CONTAINS(refusal("[1, 2]"), "no \"schema\" member");
  EXPECT_CONTAINS(refusal(replaced(json, "\"iteragpu.measurement\"", "\"iteragpu.measurement-summary\"")),
                  "'iteragpu.measurement-summary', not \"iteragpu.measurement\"");
  EXPECT_CONTAINS(refusal(replaced(json, "\"phases\"", "\"rows\"")), "invalid at /");
  EXPECT_CONTAINS(refusal(replaced(json, "\"peak_reserved_bytes\"", "\"cache_bytes\"")), "invalid at /phases/0");
  // A number RapidJSON's validator cannot hash is refused before it validates (fuzzer finding).
  EXPECT_CONTAINS(refusal(replaced(json, "\"schema_version\": 1,", "\"schema_version\": 1e30,")),
                  "invalid at /schema_version (a number beyond the 64-bit integer range)");
  // The environment section is checked against the environment report's own schema.
  EXPECT_CONTAINS(refusal(replaced(json, "\"libc\"", "\"c_library\"")), "environment invalid at /system");
}

TEST(MeasurementReader, RefusesAModelOrRowsThatDoNotFollowFromTheConfiguration) {
  const Measurement m = measured();
  const std::string json = m.to_json();
  const std::string count = "\"parameter_count\": " + std::to_string(m.model.parameter_count);
  EXPECT_CONTAINS(refusal(replaced(json, count, "\"parameter_count\": 7")),
                  "at /synthetic_model/parameter_count: is 7 but the configuration gives 33088");
  EXPECT_CONTAINS(refusal(replaced(json, "\"repeats\": 2", "\"repeats\": 3")),
                  "at /phases: has 6 rows but the configuration gives 7");
  EXPECT_CONTAINS(refusal(replaced(json, "\"phase\": \"model_load\"", "\"phase\": \"inputs\"")),
                  "at /phases/0: is inputs");
  EXPECT_CONTAINS(refusal(replaced(json, "\"device\": \"cuda:0\",\n    \"batch\"", "\"device\": \"cuda:1\",\n    \"batch\"")),
                  "at /configuration/device: cuda:1 is not the environment's selected device cuda:0");
  const std::string exact = "\"exact_counters\": " + std::to_string(m.exact_predicted_counters());
  EXPECT_CONTAINS(refusal(replaced(json, exact, "\"exact_counters\": 0")), "at /prediction/exact_counters");
}

// --- a phase row on its own ----------------------------------------------------------------

TEST(PhaseRowJson, OneLineThatReadsBackToTheSameRow) {
  const Measurement m = measured();
  for (const PhaseRow& row : m.phases) {
    const std::string line = phase_row_to_json(row);
    EXPECT_EQ(line.find('\n'), line.size() - 1) << line;
    EXPECT_EQ(line.rfind("{\"schema\": \"iteragpu.phase-row\",\"schema_version\": 1,\"phase\": ", 0), 0u) << line;
    const PhaseRow back = phase_row_from_json(line);
    EXPECT_EQ(phase_row_to_json(back), line);
    EXPECT_EQ(back.host_seconds, row.host_seconds);
    EXPECT_EQ(back.gpu_event_seconds, row.gpu_event_seconds);
    EXPECT_EQ(back.end.peak_allocated_bytes, row.end.peak_allocated_bytes);
    EXPECT_EQ(back.baseline.reserved_bytes, row.baseline.reserved_bytes);
  }
}

TEST(PhaseRowJson, RefusesAnythingElseInOneLine) {
  const std::string line = phase_row_to_json(measured().phases.back());
  const auto refused = [](const std::string& text) {
    const std::string message = message_of<DataFileError>([&] { phase_row_from_json(text); });
    EXPECT_EQ(message.rfind("phase row: ", 0), 0u) << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
    return message;
  };
  EXPECT_CONTAINS(refused(line.substr(0, 40)), "not valid JSON");
  EXPECT_CONTAINS(refused(replaced(line, "iteragpu.phase-row", "iteragpu.measurement")), "at /schema");
  EXPECT_CONTAINS(refused(replaced(line, "\"warm_forward\"", "\"warm\"")), "at /phase: 'warm' is not a phase");
  EXPECT_CONTAINS(refused(replaced(line, "\"repeat\": 2", "\"repeat\": null")), "at /repeat: missing for a warm_forward row");
  EXPECT_CONTAINS(refused(replaced(line, "\"peak_reserved_bytes\"", "\"peak\"")), "at /peak_reserved_bytes: missing");
  EXPECT_CONTAINS(refused(replaced(line, "\"allocated_bytes\": {\"baseline\": ", "\"allocated_bytes\": {\"baseline\": -")),
                  "at /allocated_bytes/baseline: not an integer from 0");
}

}  // namespace
}  // namespace iteragpu::testing
