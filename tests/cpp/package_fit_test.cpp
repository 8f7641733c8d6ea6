// packages --model: the fit of a checkpoint on each GPU model, at the byte boundary, and the
// refusals of a GPU memory table and of a measurement that is not of the checkpoint.

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "expect_error.hpp"
#include "iteragpu/error.hpp"
#include "iteragpu/memory_predictor.hpp"
#include "iteragpu/package_fit.hpp"
#include "process_runner.hpp"
#include "schema_check.hpp"
#include "tiny_checkpoint.hpp"

namespace iteragpu {
namespace {

using testing::TempDir;
using testing::TinyCheckpoint;
using testing::write_file;

// "1,234,567": the test's own grouping, to check the report's.
std::string grouped(std::uint64_t n) {
  std::string digits = std::to_string(n);
  for (std::size_t i = digits.size(); i > 3; i -= 3) digits.insert(i - 3, 1, ',');
  return digits;
}

// "12.34 GiB" (MiB below 1 GiB), computed here independently of the library; no figure the
// tests check falls on a rounding tie.
std::string size_text(double bytes) {
  char text[32];
  const bool gib = std::abs(bytes) >= 1024.0 * 1024.0 * 1024.0;
  std::snprintf(text, sizeof text, gib ? "%.2f GiB" : "%.2f MiB", bytes / (gib ? 1073741824.0 : 1048576.0));
  return text;
}

class PackageFitTest : public ::testing::Test {
 protected:
  void SetUp() override {
    model_ = dir_.file("tiny");
    TinyCheckpoint().write(model_);
    catalog_ = dir_.file("catalog.csv");
    write_file(catalog_,
               "gpu,gpu_name,days,lot_price_cents,gpus_per_lot,snapshot_date,source,device_names\n"
               "exact,Exact GPU,7,10000,1,2026-12-02,illustrative test prices,Exact GPU\n"
               "short,Short GPU,7,10000,1,2026-12-02,illustrative test prices,Short GPU\n"
               "nominal,Nominal GPU,7,10000,1,2026-12-02,illustrative test prices,Nominal GPU\n"
               "amd,AMD GPU,7,10000,1,2026-12-02,illustrative test prices,AMD GPU\n");
  }

  // The checkpoint at batch 2, context 8: generating 3 tokens unless the workload's options
  // say otherwise (a fine-tuning step).
  PackageFitRequest request(const std::map<std::string, std::string>& workload_options = {{"new-tokens", "3"}}) const {
    PackageFitRequest r;
    MeasureRequest m;
    m.device = "";
    m.model = model_;
    m.batch = "2";
    m.context = "8";
    m.workload_options = workload_options;
    r.configuration = MeasureConfiguration::parse(m);
    return r;
  }

  // The predicted peak reserved of the request on compute capability 9.0.
  std::uint64_t peak(const std::optional<PackageFitRequest>& fitted = std::nullopt) const {
    std::uint64_t peak = 0;
    for (const PhasePrediction& row :
         MemoryPredictor::predict((fitted ? *fitted : request()).configuration, PredictionTarget::from_table(9, 0)).phases)
      peak = std::max(peak, row.end.peak_reserved_bytes);
    return peak;
  }

  PackageFitReport fit(const std::string& table, const std::optional<PackageFitRequest>& fitted = std::nullopt) const {
    const std::string path = dir_.file("gpu-memory.csv");
    write_file(path, table);
    return fit_packages(fitted ? *fitted : request(), PackageCalculator(Catalog::load(catalog_)), load_gpu_memory(path),
                        path);
  }

  static std::string header() {
    return "gpu,compute_capability,memory_bytes,memory_source,outside_allocator_bytes,outside_allocator_source\n";
  }

  TempDir dir_;
  std::string model_, catalog_;
};

TEST_F(PackageFitTest, AMeasuredGpuFitsToTheByteAndNotOneByteLess) {
  const std::uint64_t needed = peak() + 1000;  // 1,000 bytes outside the allocator
  const PackageFitReport report =
      fit(header() + "exact,9.0," + std::to_string(needed) + ",measured: test,1000,measured: test\n" +
          "short,9.0," + std::to_string(needed - 1) + ",measured: test,1000,measured: test\n" +
          "nominal,9.0," + std::to_string(needed) + ",nominal: test,1000,allowance: test\n" +
          "amd,," + std::to_string(needed) + ",nominal: test,0,not assessed: ROCm\n");
  ASSERT_EQ(report.packages.size(), 4u);
  const PackageFit& exact = report.packages[0];
  EXPECT_EQ(exact.verdict, PackageFit::Verdict::kFits) << exact.reason;
  EXPECT_EQ(exact.required_bytes, needed);
  EXPECT_EQ(exact.headroom_bytes, 0);
  const PackageFit& short_one = report.packages[1];
  EXPECT_EQ(short_one.verdict, PackageFit::Verdict::kDoesNotFit);
  EXPECT_EQ(short_one.headroom_bytes, -1);
  EXPECT_NE(short_one.reason.find("short by 1 bytes"), std::string::npos) << short_one.reason;
  EXPECT_EQ(report.packages[2].verdict, PackageFit::Verdict::kUncertain) << report.packages[2].reason;
  EXPECT_EQ(report.packages[3].verdict, PackageFit::Verdict::kNotAssessed);
  EXPECT_NE(report.to_text().find("splitting a model over several GPUs is not modelled"), std::string::npos);
  // The text: sizes in GiB or MiB in the table, the exact bytes under it.
  const std::string text = report.to_text();
  const std::string needed_text = grouped(needed) + " bytes (" + size_text(static_cast<double>(needed)) + ")";
  EXPECT_NE(text.find("exact: " + exact.reason + " (needed " + needed_text + " of " + needed_text + ")"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("short by 1 bytes (0.00 MiB)"), std::string::npos) << text;
  EXPECT_EQ(text.find("per 1M tokens"), std::string::npos) << text;  // no --days: no price columns
}

// With --days the table has one lot's price from the catalog, the GPUs of a lot, and the cost
// per million tokens ("-" without a measured decode rate); the prices are said illustrative.
TEST_F(PackageFitTest, TheTextTableHasThePriceAndTheCostColumnsWithDays) {
  PackageFitRequest priced = request();
  priced.days = "7";
  const std::string path = dir_.file("gpu-memory.csv");
  write_file(path, header() + "exact,9.0,85899345920,measured: test,1000,measured: test\n");
  const PackageFitReport report =
      fit_packages(priced, PackageCalculator(Catalog::load(catalog_)), load_gpu_memory(path), path);
  const std::string text = report.to_text();
  const std::size_t header_line = text.find("gpu  ");
  ASSERT_NE(header_line, std::string::npos) << text;
  const std::string header_text = text.substr(header_line, text.find('\n', header_line) - header_line);
  for (const char* column : {"memory", "needed", "headroom", "verdict", "7-day lot", "GPUs", "per 1M tokens"})
    EXPECT_NE(header_text.find(column), std::string::npos) << column << " in " << header_text;
  const std::size_t row = text.find("\nexact ");
  ASSERT_NE(row, std::string::npos) << text;
  const std::string row_text = text.substr(row + 1, text.find('\n', row + 1) - row - 1);
  const PackageFit& fit = report.packages.at(0);
  EXPECT_NE(row_text.find("80.00 GiB"), std::string::npos) << row_text;
  EXPECT_NE(row_text.find(size_text(static_cast<double>(fit.required_bytes))), std::string::npos) << row_text;
  EXPECT_NE(row_text.find(size_text(static_cast<double>(fit.headroom_bytes))), std::string::npos) << row_text;
  EXPECT_NE(row_text.find("$100.00"), std::string::npos) << row_text;
  EXPECT_EQ(row_text.substr(row_text.size() - 1), "-") << row_text;  // no decode rate measured
  EXPECT_LE(header_text.size(), 100u) << header_text;
  EXPECT_NE(text.find("illustrative (invented, not an offer)"), std::string::npos) << text;
}

// A nominal size is no total the runtime reports: whatever the headroom, never "fits"; past
// it (an upper bound of what the runtime reports), "does not fit".
TEST_F(PackageFitTest, ANominalSizeNeverFitsAndOnlyRulesOut) {
  const std::uint64_t needed = peak() + 1000;
  const PackageFitReport roomy = fit(header() + "nominal,9.0," + std::to_string(needed * 10) +
                                     ",nominal: test,1000,measured: test\n");
  EXPECT_EQ(roomy.packages[2].verdict, PackageFit::Verdict::kUncertain) << roomy.packages[2].reason;
  EXPECT_NE(roomy.packages[2].reason.find("nominal size"), std::string::npos) << roomy.packages[2].reason;
  const PackageFitReport tight = fit(header() + "nominal,9.0," + std::to_string(needed - 1) +
                                     ",nominal: test,1000,measured: test\n");
  EXPECT_EQ(tight.packages[2].verdict, PackageFit::Verdict::kDoesNotFit) << tight.packages[2].reason;
}

// A published runtime total moves with the driver, and an allowance is another GPU's figure:
// each asks for its margin before "fits".
TEST_F(PackageFitTest, APublishedTotalAndAnAllowanceFitOnlyWithTheirMargins) {
  const std::uint64_t needed = peak() + 1000;
  const std::uint64_t mib = 1 << 20;
  auto verdict = [&](std::uint64_t memory, const std::string& memory_source, const std::string& outside_source) {
    const PackageFitReport report = fit(header() + "exact,9.0," + std::to_string(memory) + "," + memory_source +
                                        ",1000," + outside_source + "\n");
    return report.packages[0].verdict;
  };
  EXPECT_EQ(verdict(needed + 256 * mib, "reported: test", "measured: test"), PackageFit::Verdict::kFits);
  EXPECT_EQ(verdict(needed + 256 * mib - 1, "reported: test", "measured: test"), PackageFit::Verdict::kUncertain);
  const std::uint64_t with_two_per_cent = (needed + 256 * mib) * 100 / 97;  // 3 % to spare
  EXPECT_EQ(verdict(with_two_per_cent, "reported: test", "allowance: test"), PackageFit::Verdict::kFits);
  EXPECT_EQ(verdict(needed + 1000, "measured: test", "allowance: test"), PackageFit::Verdict::kUncertain);
  EXPECT_EQ(verdict(needed, "measured: test", "measured: test"), PackageFit::Verdict::kFits);
}

// A fine-tuning step's peak carries the segment-layout caveat, whose effect the recorded cells
// bound (8 MiB): judged as exact with 1 GiB kept either way, "uncertain" within it.
TEST_F(PackageFitTest, ACaveatBoundedByTheRecordedCellsKeepsOneGibEitherWay) {
  const PackageFitRequest training = request({{"train", "lora"}});
  const std::uint64_t gib = std::uint64_t{1} << 30;
  const std::uint64_t outside = 2 * gib;  // so that the card can be 1 GiB short of the tiny step
  const std::uint64_t needed = peak(training) + outside;
  auto judged = [&](std::uint64_t memory) {
    return fit(header() + "exact,9.0," + std::to_string(memory) + ",measured: test," + std::to_string(outside) +
                   ",measured: test\n",
               training)
        .packages[0];
  };
  const PackageFit roomy = judged(needed + gib);
  EXPECT_EQ(roomy.verdict, PackageFit::Verdict::kFits) << roomy.reason;
  EXPECT_EQ(roomy.required_unchecked, "may differ");
  EXPECT_NE(roomy.reason.find("at most 8.00 MiB in the recorded cells"), std::string::npos) << roomy.reason;
  EXPECT_EQ(judged(needed + gib - 1).verdict, PackageFit::Verdict::kUncertain);
  EXPECT_EQ(judged(needed).verdict, PackageFit::Verdict::kUncertain);
  EXPECT_EQ(judged(needed - gib + 1).verdict, PackageFit::Verdict::kUncertain);
  const PackageFit short_by_more = judged(needed - gib);
  EXPECT_EQ(short_by_more.verdict, PackageFit::Verdict::kDoesNotFit) << short_by_more.reason;
  // Elsewhere than compute capability 9.0 the attention backend may differ, by nothing recorded.
  const PackageFit elsewhere =
      fit(header() + "exact,8.0," + std::to_string(needed * 10) + ",measured: test," + std::to_string(outside) +
              ",measured: test\n",
          training)
          .packages[0];
  EXPECT_EQ(elsewhere.verdict, PackageFit::Verdict::kUncertain) << elsewhere.reason;
}

// Outside compute capability 9.0 the needed bytes are a lower bound: never "fits".
TEST_F(PackageFitTest, ALowerBoundNeverFits) {
  const std::uint64_t memory = (peak() + 1000) * 10;
  const PackageFitReport report =
      fit(header() + "nominal,8.0," + std::to_string(memory) + ",measured: test,1000,measured: test\n");
  const PackageFit& nominal = report.packages[2];
  EXPECT_EQ(nominal.memory.gpu, "nominal");
  EXPECT_EQ(nominal.verdict, PackageFit::Verdict::kUncertain) << nominal.reason;
  EXPECT_NE(nominal.reason.find("a lower bound"), std::string::npos) << nominal.reason;
  // GPU models the table does not list are said to be missing, not judged.
  EXPECT_EQ(report.packages[0].verdict, PackageFit::Verdict::kNotAssessed);
  EXPECT_NE(report.packages[0].reason.find("no row for exact"), std::string::npos);
  ASSERT_FALSE(report.caveats.empty());  // compute capability 8.0: the attention backend may differ
  // ... so what it needs is a lower bound there, said in the table, the reason and the JSON.
  EXPECT_EQ(nominal.required_unchecked, "at least");
  EXPECT_NE(report.to_text().find(">="), std::string::npos) << report.to_text();
  EXPECT_NE(report.to_json().find("\"required_unchecked\": \"at least\""), std::string::npos);
  EXPECT_EQ(testing::schema_violation(report.to_json(), "package-fit.schema.json"), "");
  // A lower bound past the memory is still a sure "does not fit".
  const PackageFitReport short_report =
      fit(header() + "nominal,8.0,1000,measured: test,1000,measured: test\n");
  EXPECT_EQ(short_report.packages[2].verdict, PackageFit::Verdict::kDoesNotFit);
}

// On compute capability 9.0 nothing is left unchecked: the needed bytes are exact.
TEST_F(PackageFitTest, OnTheCheckedComputeCapabilityTheNeededBytesAreExact) {
  const PackageFitReport report =
      fit(header() + "exact,9.0," + std::to_string(peak() + 1000) + ",measured: test,1000,measured: test\n");
  EXPECT_EQ(report.packages[0].required_unchecked, "");
  EXPECT_EQ(report.to_text().find(">="), std::string::npos) << report.to_text();
  EXPECT_NE(report.to_json().find("\"required_unchecked\": null"), std::string::npos);
}

TEST_F(PackageFitTest, TheTableIsReadStrictly) {
  const std::string path = dir_.file("bad.csv");
  auto refusal = [&](const std::string& table) {
    write_file(path, table);
    return testing::message_of<DataFileError>([&] { load_gpu_memory(path); });
  };
  EXPECT_NE(refusal("gpu,memory_bytes\nh200,1\n").find(":1: header is not"), std::string::npos);
  EXPECT_NE(refusal(header() + "h200,9.0,12x,measured: a,0,measured: b\n").find(":2: memory_bytes"),
            std::string::npos);
  EXPECT_NE(refusal(header() + "h200,nine,1,measured: a,0,measured: b\n").find("compute_capability"),
            std::string::npos);
  EXPECT_NE(refusal(header() + "h200,9.0,1,,0,measured: b\n").find("source"), std::string::npos);
  EXPECT_NE(refusal(header() + "h200,9.0,1,vendor: 141 GB,0,measured: b\n").find("'reported:'"), std::string::npos);
  EXPECT_NE(refusal(header() + "h200,9.0,4611686018427387904,measured: a,0,measured: b\n").find("fewer than 2^62"),
            std::string::npos);
  EXPECT_NE(refusal(header() + "h200,9.0,1,measured: a,0,b\nh200,9.0,1,measured: a,0,b\n").find("listed twice"),
            std::string::npos);
}

TEST_F(PackageFitTest, PricesNeedADurationOfTheCatalogAndAMeasurementOfThisCheckpoint) {
  PackageFitRequest r = request();
  const std::string table = dir_.file("memory.csv");
  write_file(table, header() + "exact,9.0,100000000000,measured: a,0,measured: b\n");
  const PackageCalculator calculator(Catalog::load(catalog_));
  r.days = "5";
  EXPECT_NE(testing::message_of<UsageError>([&] { fit_packages(r, calculator, load_gpu_memory(table), table); })
                .find("expected 7"),
            std::string::npos);
  r.days = "7";
  const PackageFitReport priced = fit_packages(r, calculator, load_gpu_memory(table), table);
  ASSERT_TRUE(priced.packages[0].quote.has_value());
  EXPECT_EQ(priced.packages[0].quote->entry.lot_price_cents, 10000);
  EXPECT_FALSE(priced.packages[0].tokens_cost.has_value());  // no decode rate given
  // The H200 measurement of a Llama-3-8B-like checkpoint is not a measurement of this one.
  r.measurement_file = ITERAGPU_H200_CHECKPOINT_MEASUREMENT;
  const std::string message =
      testing::message_of<UsageError>([&] { fit_packages(r, calculator, load_gpu_memory(table), table); });
  EXPECT_NE(message.find("parameter count"), std::string::npos) << message;
  r.measurement_file = dir_.file("absent.json");
  EXPECT_NE(testing::message_of<UsageError>([&] { fit_packages(r, calculator, load_gpu_memory(table), table); })
                .find("not an iteragpu measurement"),
            std::string::npos);
  // A fine-tuning step is priced by a fine-tuning run's rate, never by a decode rate.
  PackageFitRequest training = request({{"train", "lora"}});
  training.days = "7";
  training.measurement_file = ITERAGPU_H200_CHECKPOINT_MEASUREMENT;
  const std::string decode_for_training =
      testing::message_of<UsageError>([&] { fit_packages(training, calculator, load_gpu_memory(table), table); });
  EXPECT_NE(decode_for_training.find("ran the decoder workload, not training"), std::string::npos)
      << decode_for_training;
  EXPECT_NE(decode_for_training.find("expected a measure --model --train run"), std::string::npos)
      << decode_for_training;
}

TEST_F(PackageFitTest, TheSyntheticMlpHasNoFit) {
  PackageFitRequest r;
  EXPECT_NE(testing::message_of<UsageError>([&] {
              fit_packages(r, PackageCalculator(Catalog::load(catalog_)), {}, "");
            }).find("checkpoint folder"),
            std::string::npos);
}

// A fit request of `model` at batch × context: one sequence (no warm-up), `new_tokens` if given.
PackageFitRequest one_sequence(const std::string& model, const std::string& batch, const std::string& context,
                               std::optional<std::string> new_tokens = std::nullopt) {
  MeasureRequest m;
  m.device = "";
  m.model = model;
  m.batch = batch;
  m.context = context;
  if (new_tokens) m.workload_options["new-tokens"] = *new_tokens;
  m.warmup = "0";
  m.repeats = "1";
  PackageFitRequest request;
  request.configuration = MeasureConfiguration::parse(m);
  return request;
}

// The shipped table, walked GPU by GPU on a Llama-3-8B-shaped checkpoint (bfloat16, batch 8,
// one new token): at the largest context a row calls "fits", what it needs is within what
// that card reports, and one position more is no longer "fits"; where a row never fits, no
// context judged says so. Every context judged on the way is checked the same way.
TEST(ShippedGpuMemoryTable, NoRowFitsARunThatNeedsMoreThanItsCardReports) {
  TempDir dir;
  const std::string model = dir.file("llama-3-8b-shape");
  TinyCheckpoint::llama_3_8b_shape().write(model, /*sparse=*/true);
  const PackageCalculator calculator(Catalog::load(Catalog::shipped_path()));
  const std::vector<GpuMemory> table = load_gpu_memory(shipped_gpu_memory_path());
  auto judged = [&](std::int64_t context) {
    const PackageFitReport report = fit_packages(one_sequence(model, "8", std::to_string(context), "1"), calculator,
                                                 table, shipped_gpu_memory_path());
    for (const PackageFit& fit : report.packages)
      if (fit.verdict == PackageFit::Verdict::kFits) {
        EXPECT_LE(fit.required_bytes, fit.memory.memory_bytes) << fit.memory.gpu << " at context " << context;
        EXPECT_TRUE(fit.memory.memory_is_runtime_total()) << fit.memory.gpu;
        EXPECT_EQ(fit.required_unchecked, "") << fit.memory.gpu;
      }
    return report;
  };
  auto verdict_of = [](const PackageFitReport& report, const std::string& gpu) {
    for (const PackageFit& fit : report.packages)
      if (fit.memory.gpu == gpu) return fit;
    ADD_FAILURE() << gpu << " is not judged";
    return PackageFit{};
  };
  constexpr std::int64_t kMaxContext = 131072 - 1;
  int walked = 0;
  for (const GpuMemory& gpu : table) {
    if (gpu.compute_capability.empty()) continue;  // not assessed (ROCm)
    // The largest context whose verdict is "fits", by bisection ("fits" shrinks as context grows).
    std::int64_t fits = 0, not_fits = kMaxContext + 1;
    while (not_fits - fits > 1) {
      const std::int64_t middle = fits + (not_fits - fits) / 2;
      (verdict_of(judged(middle), gpu.gpu).verdict == PackageFit::Verdict::kFits ? fits : not_fits) = middle;
    }
    ++walked;
    if (fits == 0) {  // never "fits": a nominal size, or needed bytes left unchecked there
      EXPECT_TRUE(!gpu.memory_is_runtime_total() || gpu.compute_capability != "9.0") << gpu.gpu;
      continue;
    }
    ASSERT_LE(not_fits, kMaxContext) << gpu.gpu << " fits the longest context: walk a larger checkpoint";
    const PackageFit last = verdict_of(judged(fits), gpu.gpu);
    const PackageFit next = verdict_of(judged(not_fits), gpu.gpu);
    EXPECT_LE(last.required_bytes, gpu.memory_bytes) << gpu.gpu;
    EXPECT_NE(next.verdict, PackageFit::Verdict::kFits) << gpu.gpu;
    EXPECT_GT(next.required_bytes, last.required_bytes) << gpu.gpu;
  }
  EXPECT_GE(walked, 10);
}

// The H100 80GB HBM3 at its boundary, as measured there (2026-12-05): batch 64 of a
// Llama-3-8B-shaped checkpoint held 3,514 positions (85,004,713,984 bytes in use of
// 85,017,493,504, after the allocator freed a cached 20 MiB segment) and ran out of memory at
// 3,515. The shipped table's row says the same, to the byte.
TEST(ShippedGpuMemoryTable, TheH100BoundaryAsMeasured) {
  TempDir dir;
  const std::string model = dir.file("llama-3-8b-shape");
  TinyCheckpoint::llama_3_8b_shape().write(model, /*sparse=*/true);
  const PackageCalculator calculator(Catalog::load(Catalog::shipped_path()));
  const std::vector<GpuMemory> table = load_gpu_memory(shipped_gpu_memory_path());
  auto h100_at = [&](const char* context) {
    for (const PackageFit& fit :
         fit_packages(one_sequence(model, "64", context), calculator, table, shipped_gpu_memory_path()).packages)
      if (fit.memory.gpu == "h100-sxm") return fit;
    ADD_FAILURE() << "no h100-sxm row";
    return PackageFit{};
  };
  const PackageFit held = h100_at("3514");
  EXPECT_EQ(held.verdict, PackageFit::Verdict::kFits) << held.reason;
  EXPECT_EQ(held.required_bytes, 85004713984u);  // the device memory in use measured at the end
  EXPECT_NE(held.reason.find("freed 20,971,520 bytes of cached segments"), std::string::npos) << held.reason;
  const PackageFit ran_out = h100_at("3515");
  EXPECT_EQ(ran_out.verdict, PackageFit::Verdict::kDoesNotFit) << ran_out.reason;
  EXPECT_NE(ran_out.reason.find("out of memory even after the allocator frees its cached segments"),
            std::string::npos)
      << ran_out.reason;
}

}  // namespace
}  // namespace iteragpu
