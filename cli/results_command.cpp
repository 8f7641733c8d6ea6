// `iteragpu results add|check|report`: the raw-results table of the quality protocol.

#include <iostream>

#include "command_support.hpp"
#include "commands.hpp"
#include "iteragpu/error.hpp"
#include "iteragpu/results_table.hpp"

namespace iteragpu::cli {
namespace {

const char* kSummary =
    "The raw-results table (data/resultats-bruts.csv): one row per real run, tied to its\n"
    "measurement file by SHA-256 and to a catalog package. Fill in data/protocole-qualite.md\n"
    "before the trial.\n"
    "  add     append one validated row (locked, atomic: concurrent adds lose nothing)\n"
    "  check   validate a table (format, counts, packages, measurement hashes)\n"
    "  report  package price and exact cost per accepted result for every row";

void add_common_options(po::options_description& options) {
  options.add_options()
      ("table", po::value<std::string>(), "results CSV file (required)")
      ("catalog", po::value<std::string>(), "catalog CSV file (default: the shipped, illustrative one)");
}

Catalog load_catalog(const po::variables_map& values) {
  const std::string path = option_text(values, "catalog");
  return path.empty() ? Catalog::load(Catalog::shipped_path(), true) : Catalog::load(path);
}

std::string required(const po::variables_map& values, const char* name, const char* accepted) {
  if (!values.count(name)) throw UsageError(name, std::string("required; expected ") + accepted);
  return values[name].as<std::string>();
}

int run_add(const std::vector<std::string>& args) {
  po::options_description options("Options");
  add_common_options(options);
  options.add_options()
      ("measurement", po::value<std::string>(), "the JSON file written by iteragpu measure (required)")
      ("gpu", po::value<std::string>(), "catalog GPU key of the package rented (required)")
      ("days", po::value<std::string>(), "package duration in days (required)")
      ("lots", po::value<std::string>()->default_value("1"), "lots rented")
      ("work-unit", po::value<std::string>(), "the effective work unit of the protocol (required)")
      ("attempted", po::value<std::string>(), "distinct units attempted in the run (required)")
      ("accepted", po::value<std::string>(), "distinct units that met the threshold (required)")
      ("metric", po::value<std::string>(), "the quality measure (required)")
      ("threshold", po::value<std::string>(), "acceptance threshold fixed before the trial (required)")
      ("observed", po::value<std::string>(), "the value observed in this run (required)")
      ("date", po::value<std::string>(), "day of the run, YYYY-MM-DD (default: today, UTC)")
      ("notes", po::value<std::string>()->default_value(""), "free notes")
      ("gpu-mismatch-ok", "record a measurement whose GPU is not a device the catalog lists for "
       "--gpu (results check will report the row)");
  const ParsedOptions parsed = parse_options("results add", options, args);
  if (parsed.help_requested) {
    print_help("results add", kSummary, options);
    return 0;
  }
  const auto& v = parsed.values;
  const std::string table = required(v, "table", "the results CSV file");
  ResultRowRequest request;
  request.measurement_file = required(v, "measurement", "the JSON file written by iteragpu measure");
  request.gpu = required(v, "gpu", "a catalog GPU key such as b200");
  request.days = required(v, "days", "3, 7 or 30");
  request.lots = option_text(v, "lots");
  request.work_unit = required(v, "work-unit", "the work unit of the quality protocol");
  request.attempted = required(v, "attempted", "a positive integer");
  request.accepted = required(v, "accepted", "a non-negative integer");
  request.metric = required(v, "metric", "the quality measure of the protocol");
  request.threshold = required(v, "threshold", "the acceptance threshold fixed before the trial");
  request.observed = required(v, "observed", "the value observed in this run");
  request.date = option_text(v, "date");
  request.notes = option_text(v, "notes");
  request.gpu_mismatch_ok = v.count("gpu-mismatch-ok") > 0;
  const ResultAdded added{table, ResultsTable::add_result(table, request, load_catalog(v))};
  print_report_after_commit(parsed.format == OutputFormat::kJson ? added.to_json() : added.to_text(),
                            "the row was added to " + table);
  return 0;
}

int run_check(const std::vector<std::string>& args) {
  po::options_description options("Options");
  add_common_options(options);
  const ParsedOptions parsed = parse_options("results check", options, args);
  if (parsed.help_requested) {
    print_help("results check", kSummary, options);
    return 0;
  }
  const std::string table = required(parsed.values, "table", "the results CSV file");
  const ResultsCheck check = check_results_table(table, load_catalog(parsed.values));
  // JSON: the document lists the problems too; the error line and exit 2 are the same. Text:
  // several problems are listed on stdout, the error line names the first.
  if (parsed.format == OutputFormat::kJson) print_report(check.to_json());
  if (parsed.format != OutputFormat::kJson) print_report(check.to_text());
  if (!check.ok()) {
    const std::size_t more = check.problems.size() - 1;
    throw DataFileError(check.problems.front().message +
                        (more == 0 ? std::string()
                                   : " (and " + std::to_string(more) + " more, listed above)"));
  }
  return 0;
}

int run_report(const std::vector<std::string>& args) {
  po::options_description options("Options");
  add_common_options(options);
  options.add_options()
      ("sort", po::value<std::string>()->default_value("table"), "table, cost, date or gpu")
      ("descending", "reverse the sort order");
  const ParsedOptions parsed = parse_options("results report", options, args, /*csv_allowed=*/true);
  if (parsed.help_requested) {
    print_help("results report", kSummary, options);
    return 0;
  }
  const std::string table = required(parsed.values, "table", "the results CSV file");
  const ReportSort sort = parse_report_sort(parsed.values["sort"].as<std::string>());
  const Catalog catalog = load_catalog(parsed.values);
  const ResultsReport report = report_results(ResultsTable::load(table, catalog, true),
                                              PackageCalculator(catalog), sort,
                                              parsed.values.count("descending") > 0);
  print_report(parsed.format == OutputFormat::kCsv    ? report.to_csv()
               : parsed.format == OutputFormat::kJson ? report.to_json()
                                                      : report.to_text());
  return 0;
}

}  // namespace

int run_results(const std::vector<std::string>& args) {
  const std::vector<std::string> rest(args.empty() ? args.begin() : args.begin() + 1, args.end());
  const std::string action = args.empty() ? "" : args[0];
  if (action == "add") return run_add(rest);
  if (action == "check") return run_check(rest);
  if (action == "report") return run_report(rest);
  if (action == "--help" || action == "-h") {
    std::cout << "Usage: iteragpu results add|check|report [options]\n\n" << kSummary << "\n";
    return 0;
  }
  throw UsageError("", (action.empty() ? std::string("missing action") : "unknown action '" + action + "'") +
                           "; expected add, check or report (see iteragpu results --help)");
}

}  // namespace iteragpu::cli
