// `iteragpu measure` end to end on a real GPU, through the LibTorch backend plugin (ctest
// label `gpu`). Every test skips, saying why, when `iteragpu environment` reports no usable
// GPU, so the suite runs everywhere and proves something only where a GPU is present.
//
// The exact byte checks rely on the caching allocator's documented rounding: every block is a
// multiple of 512 bytes, and each tensor is its own block.

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <cstdint>
#include <string>
#include <vector>

#include "process_runner.hpp"
#include "schema_check.hpp"

namespace iteragpu::testing {
namespace {

constexpr std::uint64_t kAllocatorBlockBytes = 512;

std::uint64_t allocator_block(std::uint64_t bytes) {
  return (bytes + kAllocatorBlockBytes - 1) / kAllocatorBlockBytes * kAllocatorBlockBytes;
}

// Why the GPU tests cannot run here, or "" when cuda:0 is usable. Asked once per process.
const std::string& no_gpu_reason() {
  static const std::string reason = [] {
    const ProcessResult result = run_cli({"environment", "--device", "cuda:0", "--format", "json"});
    if (result.exit_code != 0)
      return "`iteragpu environment` failed (exit " + std::to_string(result.exit_code) + "): " + result.err;
    rapidjson::Document report;
    if (report.Parse(result.out.c_str()).HasParseError() || !report.IsObject())
      return std::string("`iteragpu environment --format json` printed no JSON object");
    const auto& backend = report["backend"];
    if (!backend["available"].GetBool())
      return "no LibTorch backend: " +
             std::string(backend["error"].IsString() ? backend["error"].GetString() : "unknown reason");
    if (!report["libtorch"]["gpu_runtime_available"].GetBool())
      return "LibTorch " + std::string(report["libtorch"]["version"].GetString()) +
             " reports no GPU runtime";
    if (!report["selected_device"]["present"].GetBool()) return std::string("cuda:0 is not present");
    return std::string();
  }();
  return reason;
}

struct Shape {
  std::int64_t batch, context, width, hidden;  // hidden = 4 × width (the CLI's default)
};

// The caching allocator's bytes for Linear(width→hidden) and Linear(hidden→width): four
// tensors, each rounded up to a whole block.
std::uint64_t parameter_allocation(const Shape& shape, std::uint64_t dtype_bytes) {
  const std::uint64_t w = static_cast<std::uint64_t>(shape.width);
  const std::uint64_t h = static_cast<std::uint64_t>(shape.hidden);
  return allocator_block(h * w * dtype_bytes) + allocator_block(h * dtype_bytes) +
         allocator_block(w * h * dtype_bytes) + allocator_block(w * dtype_bytes);
}

std::uint64_t activation_allocation(const Shape& shape, std::int64_t features, std::uint64_t dtype_bytes) {
  return allocator_block(static_cast<std::uint64_t>(shape.batch * shape.context * features) * dtype_bytes);
}

std::uint64_t counter(const rapidjson::Value& row, const char* name, const char* which) {
  return row[name][which].GetUint64();
}

std::uint64_t growth(const rapidjson::Value& row, const char* name) {
  return counter(row, name, "end") - counter(row, name, "baseline");
}

class GpuMeasure : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!no_gpu_reason().empty()) GTEST_SKIP() << "no GPU: " << no_gpu_reason();
  }

  // Runs `iteragpu measure` on cuda:0 with warmup 1 and repeats 2, checks the exit status,
  // the file and its schema, and returns the parsed result.
  rapidjson::Document measure(const Shape& shape, const std::string& dtype) {
    const std::string output = directory_.file("measure-" + dtype + "-" + std::to_string(shape.width) + ".json");
    const ProcessResult result = run_cli(
        {"measure", "--device", "cuda:0", "--batch", std::to_string(shape.batch), "--context",
         std::to_string(shape.context), "--width", std::to_string(shape.width), "--dtype", dtype,
         "--warmup", "1", "--repeats", "2", "--output", output});
    EXPECT_EQ(result.exit_code, 0) << result.err;
    rapidjson::Document document;
    if (result.exit_code != 0 || !path_exists(output)) {
      ADD_FAILURE() << "no result file " << output;
      return document;
    }
    const std::string json = read_file(output);
    EXPECT_EQ(schema_violation(json, "measurement.schema.json"), "");
    document.Parse(json.c_str());
    EXPECT_FALSE(document.HasParseError());
    return document;
  }

  // Everything the measurement of `shape` in `dtype` must show, phase by phase.
  void expect_exact_phases(const rapidjson::Document& result, const Shape& shape,
                           const std::string& dtype, std::uint64_t dtype_bytes) {
    ASSERT_TRUE(result.IsObject());
    EXPECT_EQ(std::string(result["configuration"]["dtype"].GetString()), dtype);
    EXPECT_EQ(result["configuration"]["hidden"].GetInt64(), shape.hidden);
    EXPECT_EQ(result["synthetic_model"]["dtype_bytes"].GetUint64(), dtype_bytes);

    const auto& phases = result["phases"];
    ASSERT_TRUE(phases.IsArray());
    // model_load, inputs, cold_forward, warmup (1 forward), warm_forward × 2.
    const std::vector<std::string> names = {"model_load", "inputs", "cold_forward",
                                            "warmup", "warm_forward", "warm_forward"};
    const std::vector<int> forwards = {0, 0, 1, 1, 1, 1};
    ASSERT_EQ(phases.Size(), names.size());
    for (rapidjson::SizeType i = 0; i < phases.Size(); ++i) {
      const auto& row = phases[i];
      SCOPED_TRACE("phase row " + std::to_string(i) + " (" + names[i] + ")");
      EXPECT_EQ(std::string(row["phase"].GetString()), names[i]);
      EXPECT_EQ(row["forwards"].GetInt(), forwards[i]);
      if (names[i] == "warm_forward") {
        EXPECT_EQ(row["repeat"].GetInt(), i == 4 ? 1 : 2);
      } else {
        EXPECT_TRUE(row["repeat"].IsNull());
      }
      // Allocated is part of reserved; the peaks bound the end values (and the baselines:
      // they are reset to the current values when the phase starts).
      for (const char* which : {"baseline", "end"})
        EXPECT_LE(counter(row, "allocated_bytes", which), counter(row, "reserved_bytes", which)) << which;
      EXPECT_LE(counter(row, "allocated_bytes", "end"), row["peak_allocated_bytes"].GetUint64());
      EXPECT_LE(counter(row, "reserved_bytes", "end"), row["peak_reserved_bytes"].GetUint64());
      EXPECT_LE(counter(row, "allocated_bytes", "baseline"), row["peak_allocated_bytes"].GetUint64());
      EXPECT_LE(counter(row, "reserved_bytes", "baseline"), row["peak_reserved_bytes"].GetUint64());
      EXPECT_LE(row["peak_allocated_bytes"].GetUint64(), row["peak_reserved_bytes"].GetUint64());
      EXPECT_GT(row["host_seconds"].GetDouble(), 0.0);
      ASSERT_TRUE(row["gpu_event_seconds"].IsNumber()) << "the LibTorch backend times every phase";
      EXPECT_GE(row["gpu_event_seconds"].GetDouble(), 0.0);
      if (forwards[i] > 0) EXPECT_GT(row["gpu_event_seconds"].GetDouble(), 0.0);
    }

    // Nothing of this process is on the GPU before the model; then exactly its four tensors.
    const auto& model_load = phases[0];
    EXPECT_EQ(counter(model_load, "allocated_bytes", "baseline"), 0u);
    EXPECT_EQ(growth(model_load, "allocated_bytes"), parameter_allocation(shape, dtype_bytes));
    EXPECT_EQ(result["synthetic_model"]["parameter_bytes"].GetUint64(),
              static_cast<std::uint64_t>(2 * shape.width * shape.hidden + shape.hidden + shape.width) *
                  dtype_bytes);
    // Then exactly the input tensor.
    EXPECT_EQ(growth(phases[1], "allocated_bytes"), activation_allocation(shape, shape.width, dtype_bytes));
    EXPECT_EQ(result["synthetic_model"]["input_bytes"].GetUint64(),
              static_cast<std::uint64_t>(shape.batch * shape.context * shape.width) * dtype_bytes);

    // A warm forward keeps exactly its output alive at the end. Its peak is the hidden
    // activation and the GELU output together (GELU reads one and writes the other); the
    // pre-activation is gone before the second layer writes the output, so nothing else
    // adds to it (no workspace either: the cuBLAS workspace came with cold_forward).
    const std::uint64_t hidden_block = activation_allocation(shape, shape.hidden, dtype_bytes);
    const std::uint64_t output_block = activation_allocation(shape, shape.width, dtype_bytes);
    ASSERT_GE(hidden_block, output_block);  // so the GELU step is the largest
    for (rapidjson::SizeType i = 4; i < phases.Size(); ++i) {
      const auto& row = phases[i];
      SCOPED_TRACE("warm_forward row " + std::to_string(i));
      EXPECT_EQ(growth(row, "allocated_bytes"), output_block);
      EXPECT_EQ(row["peak_allocated_bytes"].GetUint64() - counter(row, "allocated_bytes", "baseline"),
                2 * hidden_block);
    }
    // The first forward also keeps its output, plus what LibTorch sets up once (the cuBLAS
    // workspace), which stays for the warm forwards: their baseline is the cold end minus
    // the released output.
    EXPECT_GE(growth(phases[2], "allocated_bytes"), output_block);
    EXPECT_EQ(counter(phases[4], "allocated_bytes", "baseline"),
              counter(phases[2], "allocated_bytes", "end") - output_block);

    // Every counter of every row was predicted exactly before the GPU was touched, with the
    // workspace sizes LibTorch itself reported.
    const auto& prediction = result["prediction"];
    ASSERT_TRUE(prediction.IsObject());
    EXPECT_EQ(std::string(prediction["workspace_source"].GetString()).rfind("reported by LibTorch", 0), 0u);
    EXPECT_EQ(prediction["exact_counters"].GetInt(), prediction["counters"].GetInt());
    for (rapidjson::SizeType i = 0; i < phases.Size(); ++i) {
      const auto& difference = phases[i]["difference"];
      SCOPED_TRACE("prediction of phase row " + std::to_string(i));
      ASSERT_TRUE(difference.IsObject());
      for (const char* name : {"allocated_bytes", "reserved_bytes"})
        for (const char* which : {"baseline", "end"}) EXPECT_EQ(difference[name][which].GetInt64(), 0) << name << " " << which;
      EXPECT_EQ(difference["peak_allocated_bytes"].GetInt64(), 0);
      EXPECT_EQ(difference["peak_reserved_bytes"].GetInt64(), 0);
    }
  }

  TempDir directory_;
};

// The seed's small command: batch 1, context 16, width 64, float32, warmup 1, repeats 2.
TEST_F(GpuMeasure, SeedSmallCommandGivesSixPhasesWithExactParameterAndInputBytes) {
  const Shape shape{1, 16, 64, 256};
  const rapidjson::Document result = measure(shape, "float32");
  expect_exact_phases(result, shape, "float32", 4);
}

// Sizes that are not multiples of 512 bytes, so the allocator's rounding shows: the bias of
// the second layer is 60 floats (240 bytes) and takes a 512-byte block.
TEST_F(GpuMeasure, OddSizesShowTheAllocatorRoundingPerTensor) {
  const Shape shape{3, 5, 60, 240};
  ASSERT_NE(parameter_allocation(shape, 4), (2u * 60 * 240 + 240 + 60) * 4);
  const rapidjson::Document result = measure(shape, "float32");
  expect_exact_phases(result, shape, "float32", 4);
}

class GpuMeasureHalfPrecision : public GpuMeasure,
                                public ::testing::WithParamInterface<std::string> {};

TEST_P(GpuMeasureHalfPrecision, RunsAndKeepsTwoBytesPerValue) {
  const Shape shape{3, 5, 60, 240};
  const rapidjson::Document result = measure(shape, GetParam());
  expect_exact_phases(result, shape, GetParam(), 2);
}

INSTANTIATE_TEST_SUITE_P(Dtypes, GpuMeasureHalfPrecision, ::testing::Values("float16", "bfloat16"),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

// What the backend's describe() reports on a real GPU: the build's CUDA version, every device
// with its properties, and the selected device's free/total memory from the runtime.
TEST_F(GpuMeasure, EnvironmentDescribesTheGpuStack) {
  const ProcessResult result = run_cli({"environment", "--device", "cuda:0", "--format", "json"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(schema_violation(result.out, "environment.schema.json"), "");
  rapidjson::Document report;
  ASSERT_FALSE(report.Parse(result.out.c_str()).HasParseError());
  const auto& libtorch = report["libtorch"];
  EXPECT_TRUE(libtorch["cuda_build_version"].IsString() || libtorch["hip_build_version"].IsString());
  const auto& gpus = report["gpus"];
  ASSERT_TRUE(gpus.IsArray());
  ASSERT_GE(gpus.Size(), 1u);
  for (rapidjson::SizeType i = 0; i < gpus.Size(); ++i) {
    const auto& gpu = gpus[i];
    EXPECT_EQ(gpu["index"].GetUint(), i);
    EXPECT_GT(std::string(gpu["name"].GetString()).size(), 0u);
    EXPECT_GT(gpu["total_memory_bytes"].GetUint64(), 0u);
    EXPECT_GT(gpu["multiprocessors"].GetInt(), 0);
    EXPECT_NE(std::string(gpu["compute_capability"].GetString()), "0.0");
  }
  const auto& selected = report["selected_device"];
  ASSERT_TRUE(selected["runtime_free_bytes"].IsUint64());
  ASSERT_TRUE(selected["runtime_total_bytes"].IsUint64());
  EXPECT_GT(selected["runtime_free_bytes"].GetUint64(), 0u);
  EXPECT_LE(selected["runtime_free_bytes"].GetUint64(), selected["runtime_total_bytes"].GetUint64());
  // The runtime's total leaves out what the driver keeps, so it is at most the device's.
  EXPECT_LE(selected["runtime_total_bytes"].GetUint64(), gpus[0]["total_memory_bytes"].GetUint64());
}

// A small model whose hidden activation cannot fit: [32768, 1, 16777216] float32 is 2 TiB.
// The caching allocator's out-of-memory error must come back as exit 3 naming the phase,
// with no result file.
TEST_F(GpuMeasure, OutOfMemoryExitsThreeNamingThePhaseAndWritesNothing) {
  const std::string output = directory_.file("never.json");
  const ProcessResult result =
      run_cli({"measure", "--device", "cuda:0", "--batch", "32768", "--context", "1", "--width",
               "1", "--hidden", "16777216", "--dtype", "float32", "--warmup", "0", "--repeats",
               "1", "--output", output});
  EXPECT_EQ(result.exit_code, 3) << result.err;
  EXPECT_FALSE(path_exists(output));
  EXPECT_TRUE(list_directory(directory_.path()).empty());
  EXPECT_NE(result.err.find("cold_forward"), std::string::npos) << result.err;
  EXPECT_NE(result.err.find("memory"), std::string::npos) << result.err;
}

TEST_F(GpuMeasure, DeviceIndexThatDoesNotExistExitsTwoAndWritesNothing) {
  const std::string output = directory_.file("never.json");
  const ProcessResult result =
      run_cli({"measure", "--device", "cuda:99", "--batch", "1", "--context", "16", "--width",
               "64", "--dtype", "float32", "--warmup", "1", "--repeats", "2", "--output", output});
  EXPECT_EQ(result.exit_code, 2) << result.err;
  EXPECT_FALSE(path_exists(output));
  EXPECT_TRUE(list_directory(directory_.path()).empty());
  EXPECT_NE(result.err.find("cuda:99"), std::string::npos) << result.err;
  EXPECT_EQ(result.err.find('\n'), result.err.size() - 1) << "one line: " << result.err;
}

}  // namespace
}  // namespace iteragpu::testing
