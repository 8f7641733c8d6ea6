#pragma once
// The raw-results table (data/resultats-bruts.csv, SPEC §5): one row per real run, tied to
// its measurement file by SHA-256 and to a catalog package, with the quality protocol's
// fields (data/protocole-qualite.md). Rows are added under a lock and the table is replaced
// atomically, so concurrent adds lose nothing and a crash never leaves a mixed table.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "iteragpu/package_calculator.hpp"

namespace iteragpu {

struct Measurement;

// What a checkpoint run's measurement says of its generation speed (the decoder workload).
struct MeasuredDecodeRate {
  std::string architecture;  // "LlamaForCausalLM"
  std::string dtype;         // the run's
  std::int64_t batch = 0;
  std::int64_t context = 0;  // prompt positions
  int new_tokens = 0;
  // Generated tokens per second on the one GPU measured: the batch over the warm decode
  // steps' host median, the double the measurement file holds (finite, > 0).
  double decode_tokens_per_second = 0;
};

// The tokens per second a checkpoint measurement records: generated tokens (the decoder) or
// trained tokens (a fine-tuning step); none for the synthetic MLP or a rate that is not a
// positive number (none measured).
std::optional<double> measured_tokens_per_second(const Measurement& measurement);

// The decode rate a checkpoint measurement records; none for the synthetic MLP, a fine-tuning
// step or a rate that is not a positive number (none measured).
std::optional<MeasuredDecodeRate> measured_decode_rate(const Measurement& measurement);

struct ResultRow {
  std::string date;                // YYYY-MM-DD of the run
  std::string measurement_file;    // as written; relative paths are from the table's folder
  std::string measurement_sha256;  // 64 lower-case hex digits
  std::string gpu;                 // catalog key
  int days = 0;
  std::int64_t lots = 0;
  std::string work_unit;
  std::int64_t units_attempted = 0;
  std::int64_t units_accepted_distinct = 0;  // ≤ units_attempted
  std::string quality_metric;
  std::string acceptance_threshold;  // fixed before the trial; never empty
  std::string observed_value;
  std::string notes;
  int line = 0;  // line in the table file (for a row add_result returns: the line it was written at)

  // Read from the measurement file when it is verified (add, or load with verification):
  std::string measured_device;  // the runtime's name of the GPU measured ("NVIDIA H200")
  // Empty, or why measured_device is not a device the catalog's `gpu` covers.
  std::string gpu_mismatch;
  // A checkpoint run with a decode rate (verified measurements only); none for the synthetic MLP.
  std::optional<MeasuredDecodeRate> decode_rate;
};

// What a user supplies to add a row; every field is text, validated by add_result().
struct ResultRowRequest {
  std::string measurement_file;  // must exist; its SHA-256 is recorded
  std::string gpu;
  std::string days;
  std::string lots = "1";
  std::string work_unit;
  std::string attempted;
  std::string accepted;
  std::string metric;
  std::string threshold;
  std::string observed;
  std::string date;  // empty = today (UTC)
  std::string notes;
  // Record a measurement whose GPU is not one the catalog's `gpu` covers (a rented model
  // the catalog names differently); refused otherwise.
  bool gpu_mismatch_ok = false;
};

// One problem of a data file, as the error message "file:line: reason" gives it, in parts.
struct DataFileProblem {
  std::string file;  // empty when the error names no single file
  int line = 0;      // 0: the file as a whole
  std::string reason;
  std::string message;  // the whole error line: "file:line: reason"
};

class ResultsTable {
 public:
  // The header every table has, in order.
  static const std::vector<std::string>& columns();

  // Reads and validates a table: header, dates, integers, accepted ≤ attempted, filled
  // threshold, packages present in `catalog`, and (when `verify_measurements`) that each
  // measurement file exists, still has the recorded SHA-256 and was not made by a test
  // double. Throws DataFileError "file:line: reason" at the first problem.
  static ResultsTable load(const std::string& path, const Catalog& catalog,
                           bool verify_measurements = true);
  // The same reading (measurements verified), but a row's problem is appended to `problems`
  // and the next row read, so that every problem of the table is found at once; the table
  // returned holds the valid rows. A problem of the file as a whole (unreadable, not CSV, the
  // header) still ends the reading: it is thrown, as load throws it.
  static ResultsTable load_listing_problems(const std::string& path, const Catalog& catalog,
                                            std::vector<DataFileProblem>& problems);

  // Validates `request` (the measurement must be a real one, from the LibTorch backend, on a
  // GPU the catalog's `gpu` covers unless gpu_mismatch_ok), then appends the row to the table at `path` under an exclusive
  // lock, writing a complete new table and renaming it into place. Creates the table
  // (header only, then the row) when `path` does not exist. Returns the row added, its
  // `line` the line of the table it was written at.
  static ResultRow add_result(const std::string& path, const ResultRowRequest& request,
                              const Catalog& catalog);

  const std::string& path() const { return path_; }
  const std::vector<ResultRow>& rows() const { return rows_; }
  // "line 3: measured on NVIDIA H200, which h100-sxm does not cover (...)" for every row
  // whose measurement's GPU is not its package's model (added with gpu_mismatch_ok).
  std::vector<std::string> gpu_mismatches() const;

 private:
  std::string path_;
  std::vector<ResultRow> rows_;
};

// What `iteragpu results add` reports: the row added to the table, as stored.
struct ResultAdded {
  std::string table_path;  // as given
  ResultRow row;           // from add_result: its line, fields, SHA-256, GPU measured

  std::string to_json() const;  // schema "iteragpu.results-add"
  std::string to_text() const;  // "added to TABLE: DATE, GPU 7 days x 2, 3/10 accepted, ..."
};


// What `iteragpu results check` reports: the table read and validated as ResultsTable::load
// does (measurements verified), or its problems: every row's, or the one problem of the file
// as a whole that stopped the reading.
struct ResultsCheck {
  std::string table_path;
  std::string catalog_path;
  std::optional<ResultsTable> table;  // set exactly when problems is empty
  std::vector<DataFileProblem> problems;

  bool ok() const { return problems.empty(); }
  std::string to_json() const;  // schema "iteragpu.results-check"
  // The valid table's report, and the rows measured on another GPU than their package's; or,
  // with several problems, their list; empty for one problem (the command's error line).
  std::string to_text() const;
};

// Checks the table at `path` against `catalog`: every DataFileError of the table, its CSV
// or its measurements becomes the check's problem; any other error is thrown.
ResultsCheck check_results_table(const std::string& path, const Catalog& catalog);

enum class ReportSort { kTable, kCost, kDate, kGpu };

// The price of a million tokens at a rate measured on one GPU (generated or trained tokens
// per second): the package's price per GPU-hour over the tokens that GPU handles in an hour,
//   price per GPU-hour / (tokens/s × 3600) × 10^6,
// an exact fraction of cents; the rate's double taken as its shortest decimal text.
struct MillionTokensPrice {
  ExactDecimal tokens_per_second;  // the fewest digits that read back as the same double
  std::int64_t gpu_hours = 0;      // what the package price buys: total GPUs × days × 24
  ExactDecimal numerator_cents;    // reduced fraction: exact price in cents,
  ExactDecimal denominator;        //   = numerator_cents / denominator
  std::optional<ExactDecimal> exact_usd;  // set when the fraction has a finite decimal form
  std::string display_usd;         // rounded to 4 decimal places, halves away from zero
};
MillionTokensPrice million_tokens_price(double tokens_per_second, const Quote& quote);

// The cost per million generated tokens of a checkpoint run: the package's price per
// GPU-hour over the tokens one GPU generates in an hour at the measured decode rate,
//   price per GPU-hour / (decode tokens/s × 3600) × 10^6,
// an exact fraction of cents. Holds for the measured GPU, batch and context, with the GPU
// decoding all the hours paid for.
struct GeneratedTokensCost {
  std::string measured_gpu;  // the GPU the rate was measured on ("NVIDIA H200")
  MeasuredDecodeRate rate;
  MillionTokensPrice price;  // its tokens_per_second the decode rate, "228.80291828970158"
  static const char* method();   // how it is computed, the rate turned exact, the rounding
};

// The cost per million generated tokens at `rate`, measured on `measured_gpu`, for the
// package `quote` prices.
GeneratedTokensCost generated_tokens_cost(const std::string& measured_gpu, const MeasuredDecodeRate& rate,
                                          const Quote& quote);

struct ResultCost {
  ResultRow row;
  Quote quote;  // package price; quote.unit_cost is null when nothing was accepted
  // A checkpoint run with a decode rate, its measurement read (the GPU named); null otherwise.
  std::optional<GeneratedTokensCost> generated_tokens_cost;
};

struct ResultsReport {
  std::string table_path;
  std::string catalog_path;
  std::vector<ResultCost> rows;

  std::string to_json() const;  // schema "iteragpu.results-report"
  std::string to_text() const;
  std::string to_csv() const;
};

// Cost per accepted result for every row, priced through `calculator`, and the cost per
// million generated tokens of every checkpoint run with a decode rate. kCost puts rows
// without a unit cost last; `descending` reverses the order of the others.
ResultsReport report_results(const ResultsTable& table, const PackageCalculator& calculator,
                             ReportSort sort = ReportSort::kTable, bool descending = false);
// "table", "cost", "date", "gpu"; throws UsageError naming "sort".
ReportSort parse_report_sort(const std::string& text);

}  // namespace iteragpu
