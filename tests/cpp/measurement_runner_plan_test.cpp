// The runner's several-GPU plan and summary against the FakeBackend test double: device
// lists, derived result paths, every check made before a process starts, the figures of a
// measurement, the summary's exit-code rule, JSON (against its schema) and text.
#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <functional>

#include "expect_error.hpp"
#include "fake_backend.hpp"
#include "iteragpu/error.hpp"
#include "iteragpu/measurement_runner.hpp"
#include "iteragpu/phase_measurer.hpp"
#include "process_runner.hpp"
#include "schema_check.hpp"

namespace iteragpu::testing {
namespace {

std::shared_ptr<FakeBackend> fake_with_gpus(int count, std::vector<FakeBackend::InjectedFailure> failures = {}) {
  FakeBackend::Script script;
  script.gpu_count = count;
  script.failures = std::move(failures);
  return std::make_shared<FakeBackend>(std::move(script));
}

MeasureRequest request_for(const std::string& devices, const std::string& summary) {
  MeasureRequest request;
  request.device = devices;
  request.output = summary;
  return request;
}

std::vector<DeviceTarget> plan(const MeasureRequest& request, const std::shared_ptr<Backend>& backend) {
  return plan_device_targets(MeasureConfiguration::parse(request), backend);
}

TEST(SeveralDevices, AllOrACommaNameSeveralDevices) {
  EXPECT_TRUE(names_several_devices("all"));
  EXPECT_TRUE(names_several_devices("cuda:0,cuda:1"));
  EXPECT_TRUE(names_several_devices("cuda:0,"));
  EXPECT_FALSE(names_several_devices("cuda:0"));
  EXPECT_FALSE(names_several_devices("ALL"));
  EXPECT_FALSE(names_several_devices(""));
}

TEST(SeveralDevices, ResultPathsSitBesideTheSummary) {
  EXPECT_EQ(per_device_result_path("runs/mesures.json", 1), "runs/mesures-cuda1.json");
  EXPECT_EQ(per_device_result_path("m.json", 0), "m-cuda0.json");
  EXPECT_EQ(per_device_result_path("/tmp/a.b.json", 7), "/tmp/a.b-cuda7.json");
  EXPECT_EQ(per_device_result_path("summary", 2), "summary-cuda2.json");
  EXPECT_EQ(per_device_result_path("runs.v2/summary", 3), "runs.v2/summary-cuda3.json");
  EXPECT_EQ(per_device_result_path("runs/.json", 0), "runs/.json-cuda0.json");
}

TEST(SeveralDevicesPlan, AllIsEveryVisibleGpuAndAListKeepsItsOrder) {
  TempDir dir;
  const auto backend = fake_with_gpus(3);
  const std::vector<DeviceTarget> all = plan(request_for("all", dir.file("m.json")), backend);
  ASSERT_EQ(all.size(), 3u);
  for (int index = 0; index < 3; ++index) {
    EXPECT_EQ(all[index].device, "cuda:" + std::to_string(index));
    EXPECT_EQ(all[index].index, index);
    EXPECT_EQ(all[index].result_file, dir.file("m-cuda" + std::to_string(index) + ".json"));
  }
  const std::vector<DeviceTarget> listed =
      plan(request_for("cuda:2,cuda:0", dir.file("m.json")), backend);
  ASSERT_EQ(listed.size(), 2u);
  EXPECT_EQ(listed[0].device, "cuda:2");
  EXPECT_EQ(listed[1].result_file, dir.file("m-cuda0.json"));
  // The plan only asked what the stack is, with no device selected, and wrote nothing.
  EXPECT_EQ(backend->calls, (std::vector<std::string>{"describe", "describe"}));
  EXPECT_EQ(backend->reserved(), 0u);
  EXPECT_TRUE(list_directory(dir.path()).empty());
}

TEST(SeveralDevicesPlan, MalformedListsAreRefusedBeforeTheBackendIsAsked) {
  TempDir dir;
  for (const std::string devices : {"cuda:1,cuda:1", "cuda:0,,cuda:1", "cuda:0,", "all,cuda:0",
                                    "cuda:0,all", "cuda:0,cuda", "cuda:0,cuda:128", "cuda:0;cuda:1"}) {
    SCOPED_TRACE(devices);
    const auto backend = fake_with_gpus(3);
    try {
      plan(request_for(devices, dir.file("m.json")), backend);
      ADD_FAILURE() << "accepted";
    } catch (const UsageError& e) {
      EXPECT_EQ(e.field(), "device");
    }
    EXPECT_TRUE(backend->calls.empty());
  }
  MeasureRequest bad_width = request_for("all", dir.file("m.json"));
  bad_width.width = "0";
  const auto backend = fake_with_gpus(3);
  EXPECT_NE(message_of<UsageError>([&] { plan(bad_width, backend); }).find("--width"),
            std::string::npos);
  EXPECT_TRUE(backend->calls.empty());
}

TEST(SeveralDevicesPlan, NoGpuAMissingDeviceOrAnUnusableStackIsRefused) {
  TempDir dir;
  EXPECT_NE(message_of<DeviceUnavailable>([&] {
              plan(request_for("all", dir.file("m.json")), fake_with_gpus(0));
            }).find("no GPU available"),
            std::string::npos);
  EXPECT_NE(message_of<DeviceUnavailable>([&] {
              plan(request_for("cuda:1,cuda:3", dir.file("m.json")), fake_with_gpus(2));
            }).find("cuda:3 does not exist; this process sees 2 GPUs: cuda:0 to cuda:1"),
            std::string::npos);
  EXPECT_NE(message_of<BackendUnavailable>([&] {
              plan(request_for("all", dir.file("m.json")),
                                  fake_with_gpus(2, {{"describe", 1, BackendStatus::Code::kFailed, "broken"}}));
            }).find("could not describe the stack: broken"),
            std::string::npos);
  EXPECT_TRUE(list_directory(dir.path()).empty());
}

TEST(SeveralDevicesPlan, AnyExistingTargetRefusesTheWholeRun) {
  TempDir dir;
  write_file(dir.file("m.json"), "x");
  const auto backend = fake_with_gpus(2);
  EXPECT_NE(message_of<OutputExists>([&] { plan(request_for("all", dir.file("m.json")), backend); })
                .find(dir.file("m.json") + " already exists"),
            std::string::npos);
  EXPECT_TRUE(backend->calls.empty());  // refused before the backend was asked

  TempDir other;
  write_file(other.file("m-cuda1.json"), "x");
  EXPECT_NE(message_of<OutputExists>([&] {
              plan(request_for("all", other.file("m.json")), fake_with_gpus(2));
            }).find(other.file("m-cuda1.json") + " already exists"),
            std::string::npos);
  // A device that is not measured may keep its old file.
  EXPECT_EQ(plan(request_for("cuda:0", other.file("m.json")), fake_with_gpus(2)).size(), 1u);
}

// --- the figures of a measurement --------------------------------------------------------

Measurement measured_on(const std::string& device, int gpus, int repeats, const std::string& output) {
  MeasureRequest request;
  request.device = device;
  request.repeats = std::to_string(repeats);
  request.output = output;
  return PhaseMeasurer(fake_with_gpus(gpus)).measure(MeasureConfiguration::parse(request));
}

TEST(DeviceResultFigures, AreThoseOfTheFile) {
  TempDir dir;
  const std::string file = dir.file("m-cuda1.json");
  const Measurement m = measured_on("cuda:1", 2, 3, file);
  const DeviceResultFigures figures = DeviceResultFigures::of(m, "cuda:1", file);
  EXPECT_EQ(figures.gpu_name, "Fake GPU 1");
  EXPECT_EQ(figures.model_load_allocated_bytes,
            static_cast<std::int64_t>(m.phases[0].end.allocated_bytes - m.phases[0].baseline.allocated_bytes));
  std::uint64_t peak = 0;
  std::vector<double> warm;
  for (const PhaseRow& row : m.phases) {
    peak = std::max(peak, row.end.peak_allocated_bytes);
    if (row.phase == "warm_forward") warm.push_back(row.host_seconds);
  }
  EXPECT_EQ(figures.peak_allocated_bytes_max, peak);
  ASSERT_EQ(warm.size(), 3u);
  std::sort(warm.begin(), warm.end());
  EXPECT_DOUBLE_EQ(figures.warm_forward_host_seconds_median, warm[1]);
}

TEST(DeviceResultFigures, MedianOfAnEvenCountIsTheMeanOfTheMiddleTwo) {
  TempDir dir;
  const std::string file = dir.file("m.json");
  const Measurement m = measured_on("cuda:0", 1, 2, file);
  EXPECT_DOUBLE_EQ(DeviceResultFigures::of(m, "cuda:0", file).warm_forward_host_seconds_median,
                   (m.phases[4].host_seconds + m.phases[5].host_seconds) / 2);
}

TEST(DeviceResultFigures, AMeasurementOfAnotherDeviceIsRefused) {
  TempDir dir;
  const std::string file = dir.file("m.json");
  const Measurement m = measured_on("cuda:1", 2, 2, file);
  EXPECT_NE(message_of<DataFileError>([&] { DeviceResultFigures::of(m, "cuda:0", file); })
                .find(file + ": measured cuda:1 (configured cuda:1), not cuda:0"),
            std::string::npos);
}

// --- the summary ---------------------------------------------------------------------------

DeviceOutcome succeeded(const std::string& device) {
  DeviceOutcome outcome;
  outcome.device = device;
  outcome.result_file = "m-" + device.substr(0, 4) + device.substr(5) + ".json";
  outcome.figures = DeviceResultFigures{"Fake GPU", 0.000125, 132352, 1200000};
  return outcome;
}

DeviceOutcome failed(const std::string& device, int exit_code, const std::string& error) {
  DeviceOutcome outcome;
  outcome.device = device;
  outcome.exit_code = exit_code;
  outcome.error = error;
  return outcome;
}

MeasurementSummary summary_of(std::vector<DeviceOutcome> devices, bool interrupted = false) {
  MeasurementSummary summary;
  summary.configuration.device = "all";
  summary.configuration.output = "m.json";
  summary.devices = std::move(devices);
  summary.interrupted = interrupted;
  return summary;
}

TEST(MeasurementSummary, ExitCodeIsZeroOnlyWhenComplete) {
  EXPECT_EQ(summary_of({succeeded("cuda:0"), succeeded("cuda:1")}).exit_code(), 0);
  EXPECT_TRUE(summary_of({succeeded("cuda:0"), succeeded("cuda:1")}).complete());
  // The first failure in device order, whatever came first in time.
  EXPECT_EQ(summary_of({succeeded("cuda:0"), failed("cuda:1", 3, "oom"), failed("cuda:2", 2, "x")}).exit_code(), 3);
  EXPECT_EQ(summary_of({failed("cuda:2", 2, "x"), failed("cuda:1", 3, "oom")}).exit_code(), 2);
  // Interrupted wins.
  EXPECT_EQ(summary_of({failed("cuda:0", 3, "oom"), failed("cuda:1", 130, "interrupted")}, true).exit_code(), 130);
  EXPECT_FALSE(summary_of({succeeded("cuda:0")}, true).complete());
  // A process that said success but whose result was not read back: an internal error.
  DeviceOutcome unreadable = failed("cuda:1", 0, "the result could not be read back: x");
  EXPECT_FALSE(unreadable.ok());
  EXPECT_EQ(summary_of({succeeded("cuda:0"), unreadable}).exit_code(), 1);
}

TEST(MeasurementSummary, JsonFollowsItsSchemaInEveryCase) {
  DeviceOutcome unreadable = failed("cuda:3", 0, "the result could not be read back: x");
  unreadable.result_file = "m-cuda3.json";
  const std::vector<MeasurementSummary> summaries = {
      summary_of({succeeded("cuda:0"), succeeded("cuda:1")}),
      summary_of({succeeded("cuda:0"), failed("cuda:1", 3, "out of GPU memory during phase warmup")}),
      summary_of({failed("cuda:0", 130, "interrupted after phase inputs; nothing was written")}, true),
      summary_of({succeeded("cuda:0"), unreadable}),
  };
  for (const MeasurementSummary& summary : summaries) {
    const std::string json = summary.to_json();
    EXPECT_EQ(schema_violation(json, "measurement-summary.schema.json"), "") << json;
  }
  rapidjson::Document doc;
  doc.Parse(summaries[1].to_json().c_str());
  EXPECT_FALSE(doc["complete"].GetBool());
  EXPECT_EQ(doc["exit_code"].GetInt(), 3);
  EXPECT_STREQ(doc["devices"][1]["status"].GetString(), "failed");
  EXPECT_TRUE(doc["devices"][1]["result_file"].IsNull());
  EXPECT_STREQ(doc["devices"][1]["error"].GetString(), "out of GPU memory during phase warmup");
  EXPECT_EQ(doc["devices"][0]["figures"]["peak_allocated_bytes_max"].GetUint64(), 1200000u);
  EXPECT_STREQ(doc["configuration"]["dtype"].GetString(), "float32");
  EXPECT_EQ(doc["configuration"]["hidden"].GetInt(), 256);  // 4 × width, resolved

  // The schema holds the summary to its word: a complete run has only successes.
  std::string lying = summaries[1].to_json();
  lying.replace(lying.find("\"complete\": false"), 17, "\"complete\": true");
  lying.replace(lying.find("\"exit_code\": 3"), 14, "\"exit_code\": 0");
  EXPECT_NE(schema_violation(lying, "measurement-summary.schema.json"), "");
}

TEST(MeasurementSummary, TextListsEveryDeviceAndTheErrors) {
  const std::string text =
      summary_of({succeeded("cuda:0"), failed("cuda:1", 3, "out of GPU memory during phase warmup")}).to_text();
  EXPECT_NE(text.find("Measurement of 2 GPUs at the same time"), std::string::npos) << text;
  EXPECT_NE(text.find("cuda:0   ok"), std::string::npos) << text;
  EXPECT_NE(text.find("cuda:1   failed"), std::string::npos) << text;
  EXPECT_NE(text.find("132352"), std::string::npos) << text;
  EXPECT_NE(text.find("warm fwd host ms"), std::string::npos) << text;
  EXPECT_NE(text.find(" 0.125 "), std::string::npos) << text;  // 0.000125 s, in milliseconds
  EXPECT_NE(text.find("  cuda:1: out of GPU memory during phase warmup"), std::string::npos) << text;
  EXPECT_NE(text.find("Complete: no: 1 of 2 devices failed"), std::string::npos) << text;
}

TEST(MeasurementSummary, IsPublishedOnceAndNeverOverwritten) {
  TempDir dir;
  MeasurementSummary summary = summary_of({succeeded("cuda:0")});
  summary.configuration.output = dir.file("m.json");
  summary.publish();
  EXPECT_EQ(read_file(dir.file("m.json")), summary.to_json());
  EXPECT_THROW(summary.publish(), OutputExists);
  EXPECT_EQ(list_directory(dir.path()), std::vector<std::string>{"m.json"});
}

}  // namespace
}  // namespace iteragpu::testing
