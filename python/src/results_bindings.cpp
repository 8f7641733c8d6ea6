// ResultsTable and report_results: the raw-results table of the quality protocol, as
// `iteragpu results add|check|report` uses it. Keywords become a ResultRowRequest; the
// core validates, locks, prices and formats.

#include <pybind11/stl.h>

#include "bindings.hpp"
#include "iteragpu/results_table.hpp"

namespace iteragpu::python {
namespace {

std::string type_name(py::handle value) {
  return py::type::of(value).attr("__name__").cast<std::string>();
}

// The day of the run: None (today, UTC, chosen by the core), "YYYY-MM-DD" as given, or a
// datetime.date / datetime.datetime, whose calendar day is written out.
std::string date_keyword(py::handle value) {
  if (value.is_none()) return "";
  if (py::isinstance<py::str>(value)) return text_keyword(value, "date");
  const py::object date_type = py::module_::import("datetime").attr("date");
  if (!py::isinstance(value, date_type))
    throw py::type_error("date: expected a str 'YYYY-MM-DD', a datetime.date or None, got " +
                         type_name(value));
  return date_type(value.attr("year"), value.attr("month"), value.attr("day"))
      .attr("isoformat")()
      .cast<std::string>();
}

void register_rows(py::module_& m) {
  py::class_<ResultRow>(m, "ResultRow", R"pbdoc(
    One row of a raw-results table: a real run, tied to its measurement file by SHA-256 and
    to a catalog package, with the quality protocol's fields (data/protocole-qualite.md).
  )pbdoc")
      .def_readonly("date", &ResultRow::date, "Day of the run, 'YYYY-MM-DD'.")
      .def_readonly("measurement_file", &ResultRow::measurement_file,
                    "The measurement file as recorded; a relative path is from the table's folder.")
      .def_readonly("measurement_sha256", &ResultRow::measurement_sha256,
                    "SHA-256 of the measurement file when the row was added (64 hex digits).")
      .def_readonly("gpu", &ResultRow::gpu, "Catalog key of the package rented ('b200').")
      .def_readonly("days", &ResultRow::days, "Package duration in days (int).")
      .def_readonly("lots", &ResultRow::lots, "Lots rented (int).")
      .def_readonly("work_unit", &ResultRow::work_unit, "The effective work unit of the protocol.")
      .def_readonly("units_attempted", &ResultRow::units_attempted,
                    "Distinct units attempted in the run (int).")
      .def_readonly("units_accepted_distinct", &ResultRow::units_accepted_distinct,
                    "Distinct units that met the threshold (int, at most units_attempted).")
      .def_readonly("quality_metric", &ResultRow::quality_metric, "The quality measure.")
      .def_readonly("acceptance_threshold", &ResultRow::acceptance_threshold,
                    "The acceptance threshold, fixed before the trial.")
      .def_readonly("observed_value", &ResultRow::observed_value, "The value observed in this run.")
      .def_readonly("notes", &ResultRow::notes, "Free notes.")
      .def_readonly("line", &ResultRow::line,
                    "Line in the table file (for a row returned by add_result: the line it was written at).")
      .def_readonly("measured_device", &ResultRow::measured_device,
                    "The GPU the measurement ran on, as the runtime named it ('' when the "
                    "measurement was not read).")
      .def_readonly("gpu_mismatch", &ResultRow::gpu_mismatch,
                    "'' or why measured_device is not a device the catalog lists for gpu.")
      .def("__repr__", [](const ResultRow& r) {
        return "ResultRow(line=" + std::to_string(r.line) + ", date='" + r.date + "', gpu='" +
               r.gpu + "', days=" + std::to_string(r.days) + ", lots=" + std::to_string(r.lots) +
               ", accepted=" + std::to_string(r.units_accepted_distinct) + "/" +
               std::to_string(r.units_attempted) + ")";
      });

  py::class_<ResultCost>(m, "ResultCost", "A table row with its package price (Quote).")
      .def_readonly("row", &ResultCost::row, "The ResultRow.")
      .def_readonly("quote", &ResultCost::quote,
                    "Quote of the row's package; quote.unit_cost is None when nothing was accepted.")
      .def("__repr__", [](const ResultCost& c) {
        return "ResultCost(line=" + std::to_string(c.row.line) + ", total_cents=" +
               c.quote.total_cents.str() + ", display_usd=" +
               (c.quote.unit_cost ? "'" + c.quote.unit_cost->display_usd + "'" : "None") + ")";
      });
}

void register_table(py::module_& m) {
  const ResultRowRequest defaults;
  py::class_<ResultsTable>(m, "ResultsTable", R"pbdoc(
    A validated raw-results table (CSV, SPEC section 5). Rows are added under a lock and the
    table is replaced atomically: concurrent adds lose nothing.
  )pbdoc")
      .def_property_readonly_static(
          "columns", [](py::object) { return ResultsTable::columns(); },
          "The header every table has, in order (list of str).")
      .def_static(
          "load",
          [](py::handle path, py::handle catalog, py::handle verify_measurements) {
            const std::string table = required_path_keyword(path, "path");
            const PackageCalculator calculator = calculator_for_catalog(catalog);
            const bool verify = bool_keyword(verify_measurements, "verify_measurements");
            // Hashing every measurement file takes a while: let other threads run.
            py::gil_scoped_release no_gil;
            return ResultsTable::load(table, calculator.catalog(), verify);
          },
          py::arg("path"), py::arg("catalog") = py::none(),
          py::arg("verify_measurements") = py::bool_(true), R"pbdoc(
            Reads and validates a table: header, dates, counts, accepted <= attempted, a
            filled threshold, packages present in the catalog and, with
            verify_measurements, every measurement file present with its recorded SHA-256.

            Args:
                path: the results CSV file (str or os.PathLike).
                catalog: None for the shipped catalog (illustrative prices), a Catalog, or
                    the path of a CSV file.
                verify_measurements: check that each measurement file is still there and
                    unchanged (default True).

            Returns:
                ResultsTable

            Raises:
                DataFileError: (a ValueError) a missing or malformed table, at the first
                    problem: 'file:line: column: reason'.
          )pbdoc")
      .def_static(
          "add_result",
          [](py::handle table_path, py::handle measurement, py::handle gpu, py::handle days,
             py::handle work_unit, py::handle attempted, py::handle accepted, py::handle metric,
             py::handle threshold, py::handle observed, py::handle lots, py::handle date,
             py::handle notes, py::handle catalog, py::handle gpu_mismatch_ok) {
            const std::string table = required_path_keyword(table_path, "table");
            ResultRowRequest request;
            request.measurement_file = path_keyword_text(measurement, "measurement");
            request.gpu = text_keyword(gpu, "gpu");
            request.days = numeric_keyword_text(days, "days");
            request.lots = numeric_keyword_text(lots, "lots");
            request.work_unit = text_keyword(work_unit, "work_unit");
            request.attempted = numeric_keyword_text(attempted, "attempted");
            request.accepted = numeric_keyword_text(accepted, "accepted");
            request.metric = text_keyword(metric, "metric");
            // A threshold or an observed value is text ('>= 0.8'); a number is written out.
            request.threshold = numeric_keyword_text(threshold, "threshold");
            request.observed = numeric_keyword_text(observed, "observed");
            request.date = date_keyword(date);
            request.notes = text_keyword(notes, "notes");
            request.gpu_mismatch_ok = bool_keyword(gpu_mismatch_ok, "gpu_mismatch_ok");
            const PackageCalculator calculator = calculator_for_catalog(catalog);
            // The add waits for the table's lock, which another process may hold.
            py::gil_scoped_release no_gil;
            return ResultsTable::add_result(table, request, calculator.catalog());
          },
          py::arg("table"), py::kw_only(), py::arg("measurement"), py::arg("gpu"), py::arg("days"),
          py::arg("work_unit"), py::arg("attempted"), py::arg("accepted"), py::arg("metric"),
          py::arg("threshold"), py::arg("observed"), py::arg("lots") = defaults.lots,
          py::arg("date") = py::none(), py::arg("notes") = defaults.notes,
          py::arg("catalog") = py::none(), py::arg("gpu_mismatch_ok") = py::bool_(defaults.gpu_mismatch_ok),
          R"pbdoc(
            Validates one run, then appends it to the table under an exclusive lock,
            replacing the table atomically (created with its header when missing).

            Args:
                table: the results CSV file (str or os.PathLike).
                measurement: the JSON file written by iteragpu measure; its SHA-256 is
                    recorded.
                gpu: catalog key of the package rented ('b200').
                days: package duration in days (3, 7 or 30 in the shipped catalog).
                work_unit: the effective work unit of the quality protocol.
                attempted: distinct units attempted, a positive int (or str).
                accepted: distinct units that met the threshold, an int from 0 to
                    attempted. Repeats of the same unit are not new results.
                metric: the quality measure of the protocol.
                threshold: the acceptance threshold fixed before the trial (str; a number is
                    written out).
                observed: the value observed in this run (str; a number is written out).
                lots: lots rented, a positive int (default 1).
                date: the day of the run, 'YYYY-MM-DD' or a datetime.date (default today,
                    UTC).
                notes: free notes (default empty).
                catalog: None for the shipped catalog, a Catalog, or a CSV path.
                gpu_mismatch_ok: record a measurement whose GPU is not a device the
                    catalog lists for gpu (default False: refused, UsageError naming gpu).
                    A measurement from the test double is always refused.

            Returns:
                ResultRow: the row added (line 0).

            Raises:
                UsageError: (a ValueError) a malformed or missing value, naming the keyword.
                DataFileError: (a ValueError) the existing table is malformed ('file:line').
                TypeError: a value of the wrong type.
          )pbdoc")
      .def_property_readonly("path", &ResultsTable::path, "The file the table was read from.")
      .def_property_readonly("rows", &ResultsTable::rows, "The rows, as ResultRow objects.")
      .def_property_readonly("gpu_mismatches", &ResultsTable::gpu_mismatches,
                             "'line N: measured on ..., which GPU does not cover (...)' for every "
                             "row whose measurement is not from its package's GPU (list of str; "
                             "filled when the measurements were verified).")
      .def("__len__", [](const ResultsTable& table) { return table.rows().size(); })
      .def("__repr__", [](const ResultsTable& table) {
        return "ResultsTable(path='" + table.path() + "', rows=" +
               std::to_string(table.rows().size()) + ")";
      });
}

void register_report(py::module_& m) {
  py::class_<ResultsReport> report(m, "ResultsReport", R"pbdoc(
    Package price and exact cost per accepted result for every row of a table. A catalog
    proves neither availability nor a reservation: check the provider's page before buying.
  )pbdoc");
  report.def_readonly("table_path", &ResultsReport::table_path, "The table reported.")
      .def_readonly("catalog_path", &ResultsReport::catalog_path, "The catalog priced with.")
      .def_readonly("rows", &ResultsReport::rows, "The rows in report order, as ResultCost objects.")
      .def("to_csv", &ResultsReport::to_csv,
           "The core's CSV report, as `iteragpu results report --format csv` prints it.")
      .def("__repr__", [](const ResultsReport& r) {
        return "ResultsReport(table_path='" + r.table_path + "', rows=" +
               std::to_string(r.rows.size()) + ")";
      });
  add_report_methods(report, "results_report_html");

  m.def(
      "report_results",
      [](const ResultsTable& table, const PackageCalculator& calculator, py::handle sort,
         bool descending) {
        return report_results(table, calculator, parse_report_sort(text_keyword(sort, "sort")),
                              descending);
      },
      py::arg("table"), py::arg("calculator"), py::arg("sort") = "table",
      py::arg("descending") = false, R"pbdoc(
        Prices every row of a loaded table.

        Args:
            table: a ResultsTable (ResultsTable.load).
            calculator: the PackageCalculator to price with (its catalog should be the one
                the table was checked against).
            sort: 'table' (file order), 'cost', 'date' or 'gpu'. By cost, rows without a
                unit cost (nothing accepted) come last.
            descending: reverse the order (default False).

        Returns:
            ResultsReport

        Raises:
            UsageError: (a ValueError) an unknown sort key.
      )pbdoc");
}

}  // namespace

void register_results(py::module_& m) {
  register_rows(m);
  register_table(m);
  register_report(m);
}

}  // namespace iteragpu::python
