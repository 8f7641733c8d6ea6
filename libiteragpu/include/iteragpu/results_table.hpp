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
  int line = 0;  // line in the table file (0 for a row not read from a file)

  // Read from the measurement file when it is verified (add, or load with verification):
  std::string measured_device;  // the runtime's name of the GPU measured ("NVIDIA H200")
  // Empty, or why measured_device is not a device the catalog's `gpu` covers.
  std::string gpu_mismatch;
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

  // Validates `request` (the measurement must be a real one, from the LibTorch backend, on a
  // GPU the catalog's `gpu` covers unless gpu_mismatch_ok), then appends the row to the table at `path` under an exclusive
  // lock, writing a complete new table and renaming it into place. Creates the table
  // (header only, then the row) when `path` does not exist. Returns the row added.
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

enum class ReportSort { kTable, kCost, kDate, kGpu };

struct ResultCost {
  ResultRow row;
  Quote quote;  // package price; quote.unit_cost is null when nothing was accepted
};

struct ResultsReport {
  std::string table_path;
  std::string catalog_path;
  std::vector<ResultCost> rows;

  std::string to_json() const;  // schema "iteragpu.results-report"
  std::string to_text() const;
  std::string to_csv() const;
};

// Cost per accepted result for every row, priced through `calculator`. kCost puts rows
// without a unit cost last; `descending` reverses the order of the others.
ResultsReport report_results(const ResultsTable& table, const PackageCalculator& calculator,
                             ReportSort sort = ReportSort::kTable, bool descending = false);
// "table", "cost", "date", "gpu"; throws UsageError naming "sort".
ReportSort parse_report_sort(const std::string& text);

}  // namespace iteragpu
