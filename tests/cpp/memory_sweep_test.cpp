// The sweep's search against memory models the tests know (peak = a × value + b, a device
// that runs out of memory), then whole sweeps through real workers on a fake GPU with a known
// memory size: the largest fitting value is found, the value above it is measured and does
// not fit, in O(log n) measurements.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <cmath>

#include "expect_error.hpp"
#include "fake_backend.hpp"
#include "iteragpu/error.hpp"
#include "iteragpu/memory_sweep.hpp"
#include "iteragpu/phase_measurer.hpp"
#include "process_runner.hpp"
#include "tiny_checkpoint.hpp"
#include "schema_check.hpp"

namespace iteragpu::testing {
namespace {

// peak(value) = per_value × value + fixed; the device itself holds `device_bytes`.
struct LinearMemory {
  std::uint64_t per_value = 1000;
  std::uint64_t fixed = 5000;
  std::uint64_t device_bytes = UINT64_MAX;
  int measured = 0;

  std::uint64_t peak(std::int64_t value) const { return per_value * static_cast<std::uint64_t>(value) + fixed; }
  SweepPoint measure(std::int64_t value, std::uint64_t budget) {
    ++measured;
    SweepPoint point;
    point.value = value;
    if (peak(value) > device_bytes) {
      point.outcome = "out of memory";
      point.error = "CUDA out of memory";
      return point;
    }
    point.peak_reserved_bytes = peak(value);
    point.fits = peak(value) <= budget;
    point.outcome = point.fits ? "fits" : "over budget";
    return point;
  }
};

SweepSearch search(LinearMemory& memory, std::int64_t start, std::uint64_t budget,
                   std::function<std::optional<std::uint64_t>(std::int64_t)> predict = {},
                   std::int64_t max_value = kMaxModelDimension) {
  SweepProbe probe;
  probe.measure = [&](std::int64_t value) { return memory.measure(value, budget); };
  probe.predict = std::move(predict);
  const SweepPoint first = memory.measure(start, budget);
  return search_largest_fitting(first, max_value, budget, probe);
}

// The true answer: the largest value whose peak is within the budget.
std::int64_t expected_largest(const LinearMemory& memory, std::uint64_t budget) {
  return static_cast<std::int64_t>((budget - memory.fixed) / memory.per_value);
}

TEST(SweepSearch, GrowsThenBisectsToTheBoundaryInLogarithmicallyManyPoints) {
  for (std::uint64_t budget : {6000ull, 1'000'000ull, 123'456'789ull, 9'999'999'999ull}) {
    SCOPED_TRACE(budget);
    LinearMemory memory;
    const SweepSearch found = search(memory, 1, budget);
    const std::int64_t answer = expected_largest(memory, budget);
    ASSERT_TRUE(found.largest_fitting);
    EXPECT_EQ(*found.largest_fitting, answer);
    ASSERT_TRUE(found.smallest_not_fitting);
    EXPECT_EQ(*found.smallest_not_fitting, answer + 1);  // the value above, measured
    const int bound = 2 * static_cast<int>(std::ceil(std::log2(static_cast<double>(answer) + 1))) + 3;
    EXPECT_LE(memory.measured, bound) << "answer " << answer;
    EXPECT_EQ(static_cast<int>(found.points.size()), memory.measured);
  }
}

TEST(SweepSearch, AnOutOfMemoryPointIsADataPointNotTheEnd) {
  LinearMemory memory;
  memory.device_bytes = 2'000'000;  // below the budget: the device says no first
  const SweepSearch found = search(memory, 3, 5'000'000);
  EXPECT_EQ(*found.largest_fitting, expected_largest(memory, memory.device_bytes));
  bool saw_out_of_memory = false;
  for (const SweepPoint& point : found.points) saw_out_of_memory |= point.outcome == "out of memory";
  EXPECT_TRUE(saw_out_of_memory);
}

TEST(SweepSearch, AStartThatDoesNotFitSearchesDownwards) {
  LinearMemory memory;
  const SweepSearch found = search(memory, 5000, 1'005'000);
  EXPECT_EQ(*found.largest_fitting, 1000);
  EXPECT_EQ(*found.smallest_not_fitting, 1001);
}

TEST(SweepSearch, NothingFitsOrEverythingFits) {
  LinearMemory memory;
  const SweepSearch none = search(memory, 8, 5500);  // even 1 needs 6000
  EXPECT_FALSE(none.largest_fitting);
  EXPECT_EQ(*none.smallest_not_fitting, 1);
  LinearMemory small;
  const SweepSearch all = search(small, 1, UINT64_MAX / 2, {}, 1000);
  EXPECT_EQ(*all.largest_fitting, 1000);
  EXPECT_FALSE(all.smallest_not_fitting);
}

TEST(SweepSearch, AnExactPredictorIsConfirmedByTwoMeasurements) {
  LinearMemory memory;
  const std::uint64_t budget = 77'777'777;
  const SweepSearch found = search(memory, 2, budget, [&](std::int64_t value) {
    return std::optional<std::uint64_t>(memory.peak(value));
  });
  EXPECT_EQ(*found.predicted_largest, expected_largest(memory, budget));
  EXPECT_EQ(*found.largest_fitting, expected_largest(memory, budget));
  EXPECT_EQ(memory.measured, 3);  // the start, the proposal, the value above it
}

TEST(SweepSearch, AWrongPredictorIsCorrectedByTheMeasurements) {
  for (double factor : {0.5, 0.9, 1.1, 2.0}) {
    SCOPED_TRACE(factor);
    LinearMemory memory;
    const std::uint64_t budget = 50'000'000;
    const SweepSearch found = search(memory, 1, budget, [&](std::int64_t value) {
      return std::optional<std::uint64_t>(static_cast<std::uint64_t>(memory.peak(value) * factor));
    });
    EXPECT_EQ(*found.largest_fitting, expected_largest(memory, budget));
    EXPECT_EQ(*found.smallest_not_fitting, expected_largest(memory, budget) + 1);
    EXPECT_LE(memory.measured, 2 * 26 + 3);
  }
}

// --- whole sweeps through workers on a fake GPU ----------------------------------------------

const std::string kFakePlugin = ITERAGPU_FAKE_BACKEND_PATH;
constexpr std::uint64_t kFakeGpuBytes = 256ull << 20;  // 256 MiB

class FakeGpuMemory {
 public:
  FakeGpuMemory() {
    setenv("ITERAGPU_FAKE_BACKEND", ("memory=" + std::to_string(kFakeGpuBytes)).c_str(), 1);
  }
  ~FakeGpuMemory() { unsetenv("ITERAGPU_FAKE_BACKEND"); }
};

SweepRequest batch_sweep(const std::string& budget, const std::string& output = "") {
  SweepRequest request;
  MeasureRequest start;
  start.device = "cuda:0";
  start.width = "1024";
  start.backend_path = kFakePlugin;
  request.start = MeasureConfiguration::parse(start);
  request.vary = "batch";
  request.budget = budget;
  request.output = output;
  return request;
}

// The peak reserved bytes of a configuration on the fake GPU, measured in this process.
std::uint64_t fake_peak_of(const MeasureConfiguration& configuration) {
  FakeBackend::Script script;
  script.memory_bytes = kFakeGpuBytes;
  std::uint64_t peak = 0;
  for (const PhaseRow& row : PhaseMeasurer(std::make_shared<FakeBackend>(script)).run(configuration).phases)
    peak = std::max(peak, row.end.peak_reserved_bytes);
  return peak;
}

std::uint64_t fake_peak(std::int64_t batch) {
  MeasureConfiguration configuration = batch_sweep("50%").start;
  configuration.batch = batch;
  return fake_peak_of(configuration);
}

TEST(MemorySweep, FindsTheLargestBatchUnderHalfTheFreeMemoryOfAFakeGpu) {
  TempDir dir;
  FakeGpuMemory memory;
  int reported = 0;
  const SweepResult result =
      MemorySweep(MeasurementRunner(), [&](const SweepPoint&, int) { ++reported; })
          .run(batch_sweep("50%", dir.file("sweep.json")));
  EXPECT_EQ(result.free_bytes, kFakeGpuBytes);  // nothing reserved when the runtime was asked
  EXPECT_EQ(result.budget_bytes, kFakeGpuBytes / 2);
  ASSERT_TRUE(result.largest_fitting);
  ASSERT_TRUE(result.smallest_not_fitting);
  EXPECT_EQ(*result.smallest_not_fitting, *result.largest_fitting + 1);
  // Checked independently: the boundary is where a measurement in this process puts it.
  EXPECT_LE(fake_peak(*result.largest_fitting), result.budget_bytes);
  EXPECT_GT(fake_peak(*result.smallest_not_fitting), result.budget_bytes);
  EXPECT_EQ(reported, result.measurements());
  EXPECT_LE(result.measurements(), 2 * static_cast<int>(std::ceil(std::log2(*result.largest_fitting))) + 4);
  EXPECT_EQ(schema_violation(read_file(dir.file("sweep.json")), "sweep.schema.json"), "");
  EXPECT_EQ(read_file(dir.file("sweep.json")), result.to_json());
  EXPECT_NE(result.to_text().find("Largest batch under the budget: " + std::to_string(*result.largest_fitting)),
            std::string::npos)
      << result.to_text();
}

TEST(MemorySweep, ABudgetBeyondTheGpuMeetsOutOfMemoryPoints) {
  FakeGpuMemory memory;
  const SweepResult result = MemorySweep(MeasurementRunner()).run(batch_sweep(std::to_string(kFakeGpuBytes * 4)));
  ASSERT_TRUE(result.largest_fitting);
  bool saw_out_of_memory = false;
  for (const SweepPoint& point : result.points) saw_out_of_memory |= point.outcome == "out of memory";
  EXPECT_TRUE(saw_out_of_memory);
  EXPECT_LE(fake_peak(*result.largest_fitting), kFakeGpuBytes);
  EXPECT_EQ(schema_violation(result.to_json(), "sweep.schema.json"), "");
}

// sweep --model: a checkpoint's context grows on the fake GPU, to the byte boundary.
SweepRequest context_sweep(const std::string& model, const std::string& budget) {
  SweepRequest request;
  MeasureRequest start;
  start.device = "cuda:0";
  start.model = model;
  start.context = "8";
  start.workload_options["new-tokens"] = "2";
  start.backend_path = kFakePlugin;
  request.start = MeasureConfiguration::parse(start);
  request.vary = "context";
  request.budget = budget;
  return request;
}

std::uint64_t fake_checkpoint_peak(const std::string& model, std::int64_t context) {
  MeasureConfiguration configuration = context_sweep(model, "1").start;
  configuration.context = context;
  return fake_peak_of(configuration);
}

TEST(MemorySweep, FindsTheLargestContextOfACheckpointUnderABudget) {
  TempDir dir;
  FakeGpuMemory memory;
  const std::string model = dir.file("tiny");
  TinyCheckpoint checkpoint;  // the fake GPU's boundary lies beyond LlamaConfig's default 2,048 positions
  checkpoint.extra["max_position_embeddings"] = "131072";
  checkpoint.write(model);
  const std::uint64_t budget = fake_checkpoint_peak(model, 300);
  const SweepResult result = MemorySweep(MeasurementRunner()).run(context_sweep(model, std::to_string(budget)));
  ASSERT_TRUE(result.largest_fitting);
  ASSERT_TRUE(result.smallest_not_fitting) << result.to_text();
  EXPECT_GE(*result.largest_fitting, 300);
  EXPECT_EQ(*result.smallest_not_fitting, *result.largest_fitting + 1);
  EXPECT_LE(fake_checkpoint_peak(model, *result.largest_fitting), budget);
  EXPECT_GT(fake_checkpoint_peak(model, *result.smallest_not_fitting), budget);
  // Each point carries the predictor's figure for its configuration (the fake GPU's
  // counters are scripted, so they are not expected to equal it).
  for (const SweepPoint& point : result.points) EXPECT_TRUE(point.predicted_peak_reserved_bytes) << point.value;
  EXPECT_EQ(schema_violation(result.to_json(), "sweep.schema.json"), "");
  // A checkpoint has no width to grow; the synthetic MLP no new tokens.
  try {
    SweepRequest request = context_sweep(model, "1");
    request.vary = "width";
    MemorySweep(MeasurementRunner()).run(request);
    ADD_FAILURE() << "a checkpoint's width was swept";
  } catch (const UsageError& error) {
    EXPECT_NE(std::string(error.what()).find("expected batch, context or new-tokens"), std::string::npos)
        << error.what();
  }
}

// sweep --model --train: a fine-tuning step's largest batch (LoRA, gradient checkpointing), each
// point a fine-tuning run in its own worker; the file names the fine-tuning options.
TEST(MemorySweep, FindsTheLargestBatchOfAFineTuningStepUnderABudget) {
  TempDir dir;
  FakeGpuMemory memory;
  const std::string model = dir.file("tiny");
  TinyCheckpoint().write(model);
  auto start_at = [&](std::int64_t batch, const std::string& budget) {
    SweepRequest request;
    MeasureRequest start;
    start.device = "cuda:0";
    start.model = model;
    start.context = "64";
    start.batch = std::to_string(batch);
    start.workload_options = {{"train", "lora"}, {"gradient-checkpointing", "1"}, {"steps", "2"}};
    start.backend_path = kFakePlugin;
    request.start = MeasureConfiguration::parse(start);
    request.vary = "batch";
    request.budget = budget;
    return request;
  };
  const std::uint64_t budget = fake_peak_of(start_at(200, "1").start);
  ASSERT_LT(fake_peak_of(start_at(1, "1").start), budget);
  const SweepResult result = MemorySweep(MeasurementRunner()).run(start_at(1, std::to_string(budget)));
  ASSERT_TRUE(result.largest_fitting) << result.to_text();
  ASSERT_TRUE(result.smallest_not_fitting) << result.to_text();
  EXPECT_GE(*result.largest_fitting, 200);
  EXPECT_EQ(*result.smallest_not_fitting, *result.largest_fitting + 1);
  EXPECT_LE(fake_peak_of(start_at(*result.largest_fitting, "1").start), budget);
  EXPECT_GT(fake_peak_of(start_at(*result.smallest_not_fitting, "1").start), budget);
  const std::string json = result.to_json();
  EXPECT_EQ(schema_violation(json, "sweep.schema.json"), "");
  EXPECT_NE(json.find("\"train\": \"lora\""), std::string::npos) << json.substr(0, 600);
  EXPECT_NE(json.find("\"gradient_checkpointing\": true"), std::string::npos) << json.substr(0, 600);
}

// A budget the checkpoint never reaches: the search stops at its max_position_embeddings,
// never measures beyond it, and says why the next value is refused.
TEST(MemorySweep, StopsAtTheCheckpointsPositionLimit) {
  TempDir dir;
  FakeGpuMemory memory;
  const std::string model = dir.file("tiny");
  TinyCheckpoint checkpoint;
  checkpoint.extra["max_position_embeddings"] = "64";
  checkpoint.write(model);
  for (const char* vary : {"context", "new-tokens"}) {
    SweepRequest request = context_sweep(model, std::to_string(std::uint64_t{1} << 40));
    request.vary = vary;
    const SweepResult result = MemorySweep(MeasurementRunner()).run(request);
    const std::int64_t limit = std::string(vary) == "context" ? 64 - 2 : 64 - 8;  // start: context 8, 2 new tokens
    EXPECT_EQ(result.largest_accepted, limit) << vary;
    ASSERT_TRUE(result.largest_fitting) << vary;
    EXPECT_EQ(*result.largest_fitting, limit) << vary;
    EXPECT_FALSE(result.smallest_not_fitting) << vary;
    for (const SweepPoint& point : result.points) {
      EXPECT_LE(point.value, limit) << vary;
      EXPECT_EQ(point.outcome, "fits") << vary;
    }
    EXPECT_NE(result.beyond_largest_accepted.find("= 65 positions exceed the checkpoint's max_position_embeddings (64"),
              std::string::npos)
        << result.beyond_largest_accepted;
    EXPECT_NE(result.to_text().find("the largest accepted: " + std::to_string(limit + 1) + " is refused"),
              std::string::npos)
        << result.to_text();
    EXPECT_EQ(schema_violation(result.to_json(), "sweep.schema.json"), "");
  }
}

TEST(MemorySweep, BadRequestsAreRefusedBeforeAWorkerStarts) {
  RunnerOptions options;
  options.worker_path = "/nonexistent";  // any start would fail differently
  const MemorySweep sweep{MeasurementRunner(options)};
  const std::vector<std::pair<std::function<void(SweepRequest&)>, std::string>> cases = {
      {[](SweepRequest& r) { r.vary = "depth"; }, "vary"},
      {[](SweepRequest& r) { r.vary = ""; }, "vary"},
      {[](SweepRequest& r) { r.vary = "new-tokens"; }, "vary"},
      {[](SweepRequest& r) { r.budget = "0%"; }, "budget"},
      {[](SweepRequest& r) { r.budget = "150%"; }, "budget"},
      {[](SweepRequest& r) { r.budget = "-5"; }, "budget"},
      {[](SweepRequest& r) { r.budget = "lots"; }, "budget"},
      {[](SweepRequest& r) { r.start.device = "all"; }, "device"},
      {[](SweepRequest& r) { r.start.batch = 0; }, "batch"},
  };
  for (const auto& [change, field] : cases) {
    SweepRequest request = batch_sweep("50%");
    change(request);
    try {
      sweep.run(request);
      ADD_FAILURE() << "accepted a bad " << field;
    } catch (const UsageError& error) {
      EXPECT_EQ(error.field(), field) << error.what();
    }
  }
}

}  // namespace
}  // namespace iteragpu::testing
