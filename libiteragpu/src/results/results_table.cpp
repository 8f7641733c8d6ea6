// The raw-results table: validation, locked atomic appends (SPEC §5).

#include "iteragpu/results_table.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <map>
#include <sstream>

#include "mechanics/input_file.hpp"
#include "mechanics/atomic_output_file.hpp"
#include "mechanics/csv_reader.hpp"
#include "iteragpu/measurement.hpp"
#include "mechanics/text_table.hpp"
#include "iteragpu/error.hpp"
#include "mechanics/quantity_parser.hpp"
#include "mechanics/sha256.hpp"

namespace iteragpu {
namespace {

enum Column {
  kDate, kMeasurementFile, kMeasurementSha256, kGpu, kDays, kLots, kWorkUnit, kAttempted,
  kAccepted, kMetric, kThreshold, kObserved, kNotes, kColumnCount
};

constexpr long long kMaxDays = 10'000;
constexpr long long kMaxLots = 1'000'000;
constexpr long long kMaxUnits = 1'000'000'000'000LL;

std::string directory_of(const std::string& path) {
  const auto slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

bool is_sha256_hex(const std::string& text) {
  if (text.size() != 64) return false;
  for (char c : text)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

std::string today_utc() {
  const std::time_t now = std::time(nullptr);
  std::tm parts{};
  gmtime_r(&now, &parts);
  char text[16];
  std::strftime(text, sizeof text, "%Y-%m-%d", &parts);
  return text;
}

// Where a recorded measurement path points: relative paths are from the table's folder, so
// a folder holding a table and its measurements can be moved as a whole.
std::string resolve_measurement(const std::string& table_path, const std::string& recorded) {
  if (!recorded.empty() && recorded[0] == '/') return recorded;
  return directory_of(table_path) + "/" + recorded;
}

// The path to record for `measurement`: relative to the table's folder when the file lies
// inside it, absolute otherwise.
std::string path_to_record(const std::string& table_path, const std::string& measurement) {
  char resolved_file[PATH_MAX], resolved_dir[PATH_MAX];
  if (!realpath(measurement.c_str(), resolved_file))
    throw UsageError("measurement", quoted_for_message(measurement) +
                                        " does not exist; expected the JSON file written by "
                                        "iteragpu measure");
  if (!realpath(directory_of(table_path).c_str(), resolved_dir))
    throw ResourceUnavailable("the folder of the results table " + table_path + " does not exist");
  const std::string file(resolved_file), dir = std::string(resolved_dir) + "/";
  return file.compare(0, dir.size(), dir) == 0 ? file.substr(dir.size()) : file;
}

// What a measurement file says about how it was made.
struct MeasurementEvidence {
  std::string backend;  // the backend's identity; empty in files from before it was recorded
  bool scripted = false;  // made by a backend other than LibTorch: not a run on a GPU
  std::string device;   // the name of the GPU measured, as the runtime gave it
  std::optional<MeasuredDecodeRate> decode_rate;  // a checkpoint run with a decode rate
};

// Reads a file that must be an iteragpu measurement, through the one reader of measurement
// files: a row must point at real evidence, so the file must be a whole measurement.
MeasurementEvidence read_measurement(const std::string& path) {
  Measurement measurement;
  try {
    measurement = Measurement::read(path);
  } catch (const NotAMeasurement& error) {
    throw UsageError("measurement", quoted_for_message(path) + " is not an iteragpu measurement (" +
                                        error.problem() + "); expected the JSON file written by iteragpu measure");
  }
  MeasurementEvidence evidence;
  const EnvironmentReport& environment = measurement.environment;
  if (environment.stack) evidence.backend = environment.stack->backend_identity;
  evidence.scripted = environment.from_other_than_libtorch();
  if (const GpuDevice* gpu = environment.selected_gpu()) evidence.device = gpu->name;
  // A checkpoint run's decode rate prices its generated tokens (results report).
  evidence.decode_rate = measured_decode_rate(measurement);
  return evidence;
}

// A measurement from anything but the LibTorch backend is scripted, not a run on a GPU.
std::string test_double_reason(const MeasurementEvidence& evidence) {
  if (!evidence.scripted) return "";
  return "was made by the " + evidence.backend + " backend (scripted figures, not a GPU): only "
         "real runs are recorded";
}

// Empty when `entry` covers the device measured; otherwise says which devices it covers.
std::string mismatch_text(const CatalogEntry& entry, const std::string& device) {
  if (entry.covers_device(device)) return "";
  std::string covered;
  for (const auto& name : entry.device_names) covered += (covered.empty() ? "" : ", ") + name;
  return "measured on " + device + ", which " + entry.gpu + " does not cover (" +
         (covered.empty() ? "the catalog names no device for it" : covered) + ")";
}

std::vector<std::string> fields_of(const ResultRow& row) {
  return {row.date, row.measurement_file, row.measurement_sha256, row.gpu,
          std::to_string(row.days), std::to_string(row.lots), row.work_unit,
          std::to_string(row.units_attempted), std::to_string(row.units_accepted_distinct),
          row.quality_metric, row.acceptance_threshold, row.observed_value, row.notes};
}

// Turns the number parser's UsageError (field named by the caller) into the error type
// and location of the context: a table line, or an option.
class RowChecker {
 public:
  RowChecker(std::string path, int line) : path_(std::move(path)), line_(line) {}

  [[noreturn]] void fail(Column column, const std::string& reason) const {
    if (line_ > 0) throw data_file_error(path_, line_, ResultsTable::columns()[column] + ": " + reason);
    throw UsageError(option_name(column), reason);
  }

  long long positive(Column column, const std::string& text, long long max_value) const {
    try {
      return parse_bounded_positive_integer(text, "", max_value);
    } catch (const UsageError& e) {
      fail(column, e.reason());
    }
  }

  long long non_negative(Column column, const std::string& text, long long max_value) const {
    return text == "0" ? 0 : positive(column, text, max_value);
  }

  const std::string& required_text(Column column, const std::string& text) const {
    if (text.empty() || text.find_first_not_of(' ') == std::string::npos)
      fail(column, "empty; the quality protocol requires it (data/protocole-qualite.md)");
    for (char c : text)
      if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f)
        fail(column, "contains a control character or a line break; expected one line of text");
    return text;
  }

 private:
  static std::string option_name(Column column) {
    switch (column) {
      case kMeasurementFile: return "measurement";
      case kAttempted: return "attempted";
      case kAccepted: return "accepted";
      case kMetric: return "metric";
      case kThreshold: return "threshold";
      case kObserved: return "observed";
      case kWorkUnit: return "work-unit";
      default: return ResultsTable::columns()[column];
    }
  }
  std::string path_;
  int line_;
};

// Validates the fields every row has, whether read from a table (line > 0) or given by a
// user (line 0). The measurement file is checked by the callers.
ResultRow validated_row(const std::vector<std::string>& f, const Catalog& catalog,
                        const std::string& path, int line) {
  const RowChecker check(path, line);
  ResultRow row;
  row.line = line;
  row.date = f[kDate];
  if (!is_calendar_date(row.date))
    check.fail(kDate, quoted_for_message(row.date) + " is not a date; expected YYYY-MM-DD");
  row.measurement_file = check.required_text(kMeasurementFile, f[kMeasurementFile]);
  row.measurement_sha256 = f[kMeasurementSha256];
  if (line > 0 && !is_sha256_hex(row.measurement_sha256))
    check.fail(kMeasurementSha256, quoted_for_message(row.measurement_sha256) +
                                       " is not a SHA-256; expected 64 lower-case hex digits");
  row.gpu = f[kGpu];
  row.days = static_cast<int>(check.positive(kDays, f[kDays], kMaxDays));
  try {
    row.gpu = catalog.find(row.gpu, row.days).gpu;
  } catch (const UsageError& e) {
    check.fail(e.field() == "days" ? kDays : kGpu, e.reason());
  }
  row.lots = check.positive(kLots, f[kLots], kMaxLots);
  row.work_unit = check.required_text(kWorkUnit, f[kWorkUnit]);
  row.units_attempted = check.positive(kAttempted, f[kAttempted], kMaxUnits);
  row.units_accepted_distinct = check.non_negative(kAccepted, f[kAccepted], kMaxUnits);
  if (row.units_accepted_distinct > row.units_attempted)
    check.fail(kAccepted, std::to_string(row.units_accepted_distinct) +
                              " distinct accepted units exceed the " +
                              std::to_string(row.units_attempted) + " attempted");
  row.quality_metric = check.required_text(kMetric, f[kMetric]);
  row.acceptance_threshold = check.required_text(kThreshold, f[kThreshold]);
  row.observed_value = check.required_text(kObserved, f[kObserved]);
  row.notes = f[kNotes];
  for (char c : row.notes)
    if (static_cast<unsigned char>(c) < 0x20 && c != '\n' && c != '\r' && c != '\t')
      check.fail(kNotes, "contains a control character");
  return row;
}

void check_header(const CsvTable& table) {
  if (table.header.fields != ResultsTable::columns()) {
    std::string expected;
    for (const auto& name : ResultsTable::columns()) expected += (expected.empty() ? "" : ",") + name;
    throw data_file_error(table.path, table.header.line,
                          "unexpected header; expected exactly " + expected);
  }
}

// `problems` null: the first problem is thrown; otherwise each row's is appended there and
// the row left out.
std::vector<ResultRow> parse_rows(const CsvTable& table, const Catalog& catalog, bool verify_measurements,
                                  std::vector<DataFileProblem>* problems = nullptr) {
  check_header(table);
  std::vector<ResultRow> rows;
  // Rows often share a measurement file (several work units of one run): each file is hashed
  // and read once per load, with the first row that names it.
  struct ReadFile {
    std::string sha256;
    MeasurementEvidence evidence;
  };
  std::map<std::string, ReadFile> read_files;
  for (const CsvRecord& record : table.rows) try {
    ResultRow row = validated_row(record.fields, catalog, table.path, record.line);
    if (verify_measurements) {
      const std::string file = resolve_measurement(table.path, row.measurement_file);
      auto found = read_files.find(file);
      if (found == read_files.end()) {
        struct stat info {};
        if (stat(file.c_str(), &info) != 0)
          throw data_file_error(table.path, record.line,
                                "measurement_file: " + file + " is missing; the row cannot be traced");
        ReadFile read;
        read.sha256 = sha256_file_hex(file);
        if (read.sha256 == row.measurement_sha256) {
          try {
            read.evidence = read_measurement(file);
          } catch (const UsageError& e) {
            throw data_file_error(table.path, record.line, "measurement_file: " + e.reason());
          }
        }
        found = read_files.emplace(file, std::move(read)).first;
      }
      const std::string& actual = found->second.sha256;
      if (actual != row.measurement_sha256)
        throw data_file_error(table.path, record.line,
                              "measurement_sha256: " + file + " has changed since the row was "
                              "added (SHA-256 " + actual + ", recorded " + row.measurement_sha256 + ")");
      const MeasurementEvidence& evidence = found->second.evidence;
      const std::string test_double = test_double_reason(evidence);
      if (!test_double.empty())
        throw data_file_error(table.path, record.line, "measurement_file: " + file + " " + test_double);
      row.measured_device = evidence.device;
      row.decode_rate = evidence.decode_rate;
      row.gpu_mismatch = mismatch_text(catalog.find(row.gpu, row.days), evidence.device);
    }
    rows.push_back(std::move(row));
  } catch (const LocatedDataFileError& error) {
    if (problems == nullptr) throw;
    problems->push_back({error.path(), error.line(), error.reason(), error.what()});
  }
  return rows;
}

}  // namespace

std::optional<double> measured_tokens_per_second(const Measurement& measurement) {
  const TrainingRun* trained = measurement.training_run();
  const DecoderRun* decoded = measurement.decoder_run();
  const std::optional<double> rate =
      trained ? trained->trained_tokens_per_second : decoded ? decoded->decode_tokens_per_second : std::nullopt;
  if (!measurement.checkpoint || !rate || !std::isfinite(*rate) || !(*rate > 0)) return std::nullopt;
  return rate;
}

std::optional<MeasuredDecodeRate> measured_decode_rate(const Measurement& measurement) {
  const std::optional<double> rate =
      measurement.decoder_run() ? measured_tokens_per_second(measurement) : std::nullopt;
  if (!rate) return std::nullopt;
  MeasuredDecodeRate decode;
  decode.architecture = measurement.checkpoint->architecture.architecture;
  decode.dtype = measurement.configuration.dtype;
  decode.batch = measurement.configuration.batch;
  decode.context = measurement.configuration.context;
  decode.new_tokens = static_cast<int>(measurement.configuration.workload_options.whole_number("new-tokens"));
  decode.decode_tokens_per_second = *rate;
  return decode;
}

const std::vector<std::string>& ResultsTable::columns() {
  static const std::vector<std::string> names{
      "date", "measurement_file", "measurement_sha256", "gpu", "days", "lots", "work_unit",
      "units_attempted", "units_accepted_distinct", "quality_metric", "acceptance_threshold",
      "observed_value", "notes"};
  return names;
}

std::vector<std::string> ResultsTable::gpu_mismatches() const {
  std::vector<std::string> lines;
  for (const ResultRow& row : rows_)
    if (!row.gpu_mismatch.empty())
      lines.push_back("line " + std::to_string(row.line) + ": " + row.gpu_mismatch);
  return lines;
}

ResultsTable ResultsTable::load(const std::string& path, const Catalog& catalog,
                                bool verify_measurements) {
  ResultsTable table;
  table.path_ = path;
  table.rows_ = parse_rows(read_csv_file(path), catalog, verify_measurements);
  return table;
}

ResultsTable ResultsTable::load_listing_problems(const std::string& path, const Catalog& catalog,
                                                 std::vector<DataFileProblem>& problems) {
  ResultsTable table;
  table.path_ = path;
  table.rows_ = parse_rows(read_csv_file(path), catalog, /*verify_measurements=*/true, &problems);
  return table;
}

ResultRow ResultsTable::add_result(const std::string& path, const ResultRowRequest& request,
                                   const Catalog& catalog) {
  if (path.empty()) throw UsageError("table", "empty path; expected the results CSV file");
  std::vector<std::string> fields(kColumnCount);
  fields[kDate] = request.date.empty() ? today_utc() : request.date;
  fields[kMeasurementFile] = request.measurement_file;
  fields[kGpu] = request.gpu;
  fields[kDays] = request.days;
  fields[kLots] = request.lots;
  fields[kWorkUnit] = request.work_unit;
  fields[kAttempted] = request.attempted;
  fields[kAccepted] = request.accepted;
  fields[kMetric] = request.metric;
  fields[kThreshold] = request.threshold;
  fields[kObserved] = request.observed;
  fields[kNotes] = request.notes;
  ResultRow row = validated_row(fields, catalog, path, 0);
  if (request.measurement_file.empty())
    throw UsageError("measurement", "required; expected the JSON file written by iteragpu measure");
  row.measurement_file = path_to_record(path, request.measurement_file);
  const MeasurementEvidence evidence = read_measurement(request.measurement_file);
  const std::string test_double = test_double_reason(evidence);
  if (!test_double.empty())
    throw UsageError("measurement", quoted_for_message(request.measurement_file) + " " + test_double);
  row.measured_device = evidence.device;
  row.decode_rate = evidence.decode_rate;
  row.gpu_mismatch = mismatch_text(catalog.find(row.gpu, row.days), evidence.device);
  if (!row.gpu_mismatch.empty() && !request.gpu_mismatch_ok)
    throw UsageError("gpu", quoted_for_message(request.measurement_file) + " was " + row.gpu_mismatch +
                                "; name the package of the GPU measured, or allow the mismatch "
                                "(gpu-mismatch-ok) if the catalog names that GPU differently");
  row.measurement_sha256 = sha256_file_hex(request.measurement_file);

  // Through a symbolic link the table it points to is updated (and the link kept); a link
  // to nothing is refused rather than replaced by a new file.
  struct stat link_status {};
  if (lstat(path.c_str(), &link_status) == 0 && S_ISLNK(link_status.st_mode) &&
      access(path.c_str(), F_OK) != 0)
    throw InputFileError(path, "is a symbolic link to a file that does not exist; expected the results table");
  const std::string target = resolved_existing_path(path);

  // One writer at a time; the others wait. The table is re-read under the lock so that a
  // row added meanwhile is kept, then replaced as a whole: old table or new, never a mix.
  const DirectoryLock lock(target);
  std::string content;
  const char* line_end = "\n";
  if (lstat(target.c_str(), &link_status) == 0) {
    content = read_input_file(target, "results table", kMaxTableBytes);
    parse_rows(parse_csv(content, path), catalog, /*verify_measurements=*/false);
    if (content.find("\r\n") != std::string::npos) line_end = "\r\n";
    if (!content.empty() && content.back() != '\n') content += line_end;
  } else {
    content = csv_record(columns(), line_end);
  }
  // The row starts on the line after the last one (a quoted note may span lines).
  row.line = static_cast<int>(std::count(content.begin(), content.end(), '\n')) + 1;
  content += csv_record(fields_of(row), line_end);
  replace_atomically(target, content);
  return row;
}

}  // namespace iteragpu
