// What `iteragpu results add` and `results check` report, in text and JSON: the row added,
// and the table's validity with the problem found and the rows measured on another GPU.

#include <optional>

#include "iteragpu/error.hpp"
#include "iteragpu/printable_text.hpp"
#include "iteragpu/results_table.hpp"
#include "mechanics/csv_reader.hpp"
#include "mechanics/input_file.hpp"
#include "mechanics/json_output.hpp"

namespace iteragpu {

std::string ResultAdded::to_text() const {
  return "added to " + printable(table_path) + ": " + printable(row.date) + ", " + printable(row.gpu) + " " +
         std::to_string(row.days) + " days x " + std::to_string(row.lots) + ", " +
         std::to_string(row.units_accepted_distinct) + "/" + std::to_string(row.units_attempted) +
         " accepted, measurement " + printable(row.measurement_file) + " (sha256 " + row.measurement_sha256 + ")";
}

std::string ResultAdded::to_json() const {
  JsonWriter json("iteragpu.results-add", 1);
  json.key("table_path").value(table_path);
  json.key("line").value(row.line);
  // The row as stored, one member per column of the table, in its order; counts as integers.
  json.key("row").begin_object();
  json.key("date").value(row.date);
  json.key("measurement_file").value(row.measurement_file);
  json.key("measurement_sha256").value(row.measurement_sha256);
  json.key("gpu").value(row.gpu);
  json.key("days").value(row.days);
  json.key("lots").value(row.lots);
  json.key("work_unit").value(row.work_unit);
  json.key("units_attempted").value(row.units_attempted);
  json.key("units_accepted_distinct").value(row.units_accepted_distinct);
  json.key("quality_metric").value(row.quality_metric);
  json.key("acceptance_threshold").value(row.acceptance_threshold);
  json.key("observed_value").value(row.observed_value);
  json.key("notes").value(row.notes);
  json.end_object();
  json.key("measured_gpu").text_or_null(row.measured_device);
  // null, or why the GPU measured is not one the package covers (added with gpu-mismatch-ok).
  json.key("gpu_mismatch").text_or_null(row.gpu_mismatch);
  return json.finish();
}

ResultsCheck check_results_table(const std::string& path, const Catalog& catalog) {
  ResultsCheck check;
  check.table_path = path;
  check.catalog_path = catalog.path();
  DataFileProblem problem;
  try {
    ResultsTable table = ResultsTable::load_listing_problems(path, catalog, check.problems);
    if (check.problems.empty()) check.table = std::move(table);
    return check;
  } catch (const LocatedDataFileError& e) {
    problem = {e.path(), e.line(), e.reason(), e.what()};
  } catch (const InputFileError& e) {
    problem = {e.path(), 0, e.reason(), e.what()};
  } catch (const DataFileError& e) {
    problem = {"", 0, e.what(), e.what()};
  }
  check.problems.push_back(std::move(problem));
  return check;
}

std::string ResultsCheck::to_text() const {
  if (!table) {
    if (problems.size() < 2) return "";  // the command's error line is the one problem
    std::string report = printable(table_path) + ": " + std::to_string(problems.size()) + " problems\n";
    for (const DataFileProblem& problem : problems) report += "  " + printable(problem.message) + "\n";
    return report;
  }
  const std::size_t rows = table->rows().size();
  std::string report = printable(table_path) + ": valid, " + std::to_string(rows) + " row" + (rows == 1 ? "" : "s") +
                       ", every measurement file present, unchanged and from a GPU\n";
  const std::vector<std::string> mismatches = table->gpu_mismatches();
  if (!mismatches.empty()) {
    report += "Not measured on the package's GPU (added with --gpu-mismatch-ok):\n";
    for (const std::string& line : mismatches) report += "  " + printable(line) + "\n";
  }
  return report;
}

std::string ResultsCheck::to_json() const {
  JsonWriter json("iteragpu.results-check", 1);
  json.key("table_path").value(table_path);
  json.key("catalog_path").value(catalog_path);
  json.key("ok").value(ok());
  json.key("row_count").value(table ? std::optional<std::int64_t>(table->rows().size()) : std::nullopt);
  json.key("problems").begin_array();
  for (const DataFileProblem& problem : problems) {
    json.begin_object();
    json.key("file").text_or_null(problem.file);
    json.key("line").value(problem.line > 0 ? std::optional<int>(problem.line) : std::nullopt);
    json.key("reason").value(problem.reason);
    json.key("message").value(problem.message);
    json.end_object();
  }
  json.end_array();
  json.key("gpu_mismatches").begin_array();
  if (table) {
    for (const ResultRow& row : table->rows()) {
      if (row.gpu_mismatch.empty()) continue;
      json.begin_object();
      json.key("line").value(row.line);
      json.key("gpu").value(row.gpu);
      json.key("measured_gpu").text_or_null(row.measured_device);
      json.key("reason").value(row.gpu_mismatch);
      json.end_object();
    }
  }
  json.end_array();
  return json.finish();
}

}  // namespace iteragpu
