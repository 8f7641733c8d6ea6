// The measurement runner in-process, with real worker processes (iteragpu-measure-worker)
// loading the fake plugin: one GPU, several, one failing, cancelled, a progress callback that
// throws, a worker that cannot start or says nothing, and the worker's errors thrown again
// as the same classes.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <stdexcept>

#include "expect_error.hpp"
#include "iteragpu/error.hpp"
#include "iteragpu/measurement_runner.hpp"
#include "process_runner.hpp"

namespace iteragpu::testing {
namespace {

const std::string kFakePlugin = ITERAGPU_FAKE_BACKEND_PATH;

// The workers inherit this process's environment: that is how the fake plugin is scripted.
class FakeScript {
 public:
  explicit FakeScript(const std::string& script) { setenv("ITERAGPU_FAKE_BACKEND", script.c_str(), 1); }
  ~FakeScript() { unsetenv("ITERAGPU_FAKE_BACKEND"); }
};

MeasureRequest fake_request(const std::string& device, const std::string& output = "") {
  MeasureRequest request;
  request.device = device;
  request.output = output;
  request.backend_path = kFakePlugin;
  return request;
}

TEST(MeasurementRunner, OneGpuInAWorkerGivesTheMeasurementItPublished) {
  TempDir dir;
  std::vector<std::string> rows;
  RunnerOptions options;
  options.progress = [&](const std::string& device, const PhaseRow& row, int done, int total) {
    rows.push_back(device + " " + row.phase + " " + std::to_string(done) + "/" + std::to_string(total));
  };
  const Measurement m = MeasurementRunner(options).measure(MeasureConfiguration::parse(fake_request("cuda:0", dir.file("m.json"))));
  ASSERT_EQ(m.phases.size(), 6u);
  EXPECT_EQ(m.environment.selected_device, "cuda:0");
  EXPECT_EQ(read_file(dir.file("m.json")), m.to_json());  // the worker's file, byte for byte
  EXPECT_EQ(rows, (std::vector<std::string>{"cuda:0 model_load 1/6", "cuda:0 inputs 2/6", "cuda:0 cold_forward 3/6",
                                            "cuda:0 warmup 4/6", "cuda:0 warm_forward 5/6",
                                            "cuda:0 warm_forward 6/6"}));
}

TEST(MeasurementRunner, WithoutAnOutputNothingIsWritten) {
  TempDir dir;
  const Measurement m = MeasurementRunner().measure(MeasureConfiguration::parse(fake_request("cuda:0")));
  EXPECT_EQ(m.phases.size(), 6u);
  EXPECT_TRUE(list_directory(dir.path()).empty());
}

TEST(MeasurementRunner, SeveralGpusOneWorkerEachAndOneFailingDoesNotStopTheOthers) {
  TempDir dir;
  FakeScript script("gpus=3;fail_device=1:forward:2:oom");
  const MeasurementSummary summary = MeasurementRunner().measure_devices(MeasureConfiguration::parse(fake_request("all", dir.file("m.json"))));
  ASSERT_EQ(summary.devices.size(), 3u);
  EXPECT_TRUE(summary.devices[0].ok());
  EXPECT_FALSE(summary.devices[1].ok());
  EXPECT_EQ(summary.devices[1].exit_code, 3);
  EXPECT_NE(summary.devices[1].error.find("injected oom in forward on cuda:1"), std::string::npos)
      << summary.devices[1].error;
  EXPECT_TRUE(summary.devices[2].ok());
  EXPECT_EQ(summary.devices[2].figures->gpu_name, "Fake GPU 2");
  EXPECT_EQ(summary.exit_code(), 3);
  EXPECT_EQ(read_file(dir.file("m.json")), summary.to_json());
  EXPECT_EQ(read_file(dir.file("m-cuda2.json")), summary.devices[2].measurement->to_json());
  EXPECT_FALSE(path_exists(dir.file("m-cuda1.json")));
}

TEST(MeasurementRunner, TheWorkersErrorsComeBackAsTheSameClasses) {
  FakeScript script("gpus=1;fail=forward:1:oom");
  EXPECT_NE(message_of<OutOfMemory>([&] { MeasurementRunner().measure(MeasureConfiguration::parse(fake_request("cuda:0"))); })
                .find("injected oom in forward"),
            std::string::npos);
  EXPECT_NE(message_of<DeviceUnavailable>([&] { MeasurementRunner().measure(MeasureConfiguration::parse(fake_request("cuda:3"))); })
                .find("cuda:3"),
            std::string::npos);
  // Refused before a worker starts.
  MeasureRequest bad = fake_request("cuda:0");
  bad.hidden = "0";
  try {
    MeasurementRunner().measure(MeasureConfiguration::parse(bad));
    ADD_FAILURE() << "accepted hidden 0";
  } catch (const UsageError& error) {
    EXPECT_EQ(error.field(), "hidden");
  }
}

TEST(MeasurementRunner, CancellingStopsTheWorkersBetweenPhasesWritingNothing) {
  TempDir dir;
  FakeScript script("gpus=2");
  int rows = 0;
  RunnerOptions options;
  options.progress = [&](const std::string&, const PhaseRow&, int, int) { ++rows; };
  options.cancel = [&] { return rows > 0; };
  EXPECT_THROW(MeasurementRunner(options).measure(MeasureConfiguration::parse(fake_request("cuda:0", dir.file("m.json")))), Interrupted);
  EXPECT_TRUE(list_directory(dir.path()).empty());

  rows = 0;
  const MeasurementSummary summary =
      MeasurementRunner(options).measure_devices(MeasureConfiguration::parse(fake_request("all", dir.file("s.json"))));
  EXPECT_TRUE(summary.interrupted);
  EXPECT_EQ(summary.exit_code(), 130);
  for (const DeviceOutcome& outcome : summary.devices) EXPECT_FALSE(outcome.ok());
  EXPECT_EQ(list_directory(dir.path()), std::vector<std::string>{"s.json"});  // the summary only
}

TEST(MeasurementRunner, AProgressCallbackThatThrowsStopsTheWorkAndIsRethrown) {
  TempDir dir;
  RunnerOptions options;
  options.progress = [](const std::string&, const PhaseRow& row, int, int) {
    if (row.phase == "warm_forward") throw std::runtime_error("display failed");
  };
  try {
    MeasurementRunner(options).measure(MeasureConfiguration::parse(fake_request("cuda:0", dir.file("m.json"))));
    ADD_FAILURE() << "no exception";
  } catch (const std::runtime_error& error) {
    EXPECT_STREQ(error.what(), "display failed");
  }
  EXPECT_TRUE(list_directory(dir.path()).empty());  // stopped before the result was published
}

TEST(MeasurementRunner, AWorkerThatCannotStartOrSaysNothingIsAnError) {
  RunnerOptions missing;
  missing.worker_path = "/nonexistent/iteragpu-measure-worker";
  EXPECT_NE(message_of<Error>([&] { MeasurementRunner(missing).measure(MeasureConfiguration::parse(fake_request("cuda:0"))); })
                .find("cannot start the measurement worker /nonexistent/iteragpu-measure-worker"),
            std::string::npos);
  RunnerOptions silent;
  silent.worker_path = "/bin/true";
  EXPECT_NE(message_of<Error>([&] { MeasurementRunner(silent).measure(MeasureConfiguration::parse(fake_request("cuda:0"))); })
                .find("the measurement worker for cuda:0 exited with code 0 without a result"),
            std::string::npos);
  RunnerOptions chatter;
  chatter.worker_path = "/bin/echo";  // prints a line that is not a record
  EXPECT_NE(message_of<Error>([&] { MeasurementRunner(chatter).measure(MeasureConfiguration::parse(fake_request("cuda:0"))); })
                .find("without a result"),
            std::string::npos);
}

}  // namespace
}  // namespace iteragpu::testing
