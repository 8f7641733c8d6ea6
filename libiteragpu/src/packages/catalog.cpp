// The package catalog: a strictly validated CSV of lot prices (SPEC §4).

#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <sstream>
#include <utility>

#include "mechanics/csv_reader.hpp"
#include "mechanics/installation.hpp"
#include "mechanics/exact_arithmetic.hpp"
#include "iteragpu/error.hpp"
#include "iteragpu/package_calculator.hpp"
#include "iteragpu/printable_text.hpp"
#include "mechanics/json_output.hpp"
#include "packages/package_format.hpp"
#include "packages/package_notes.hpp"
#include "mechanics/quantity_parser.hpp"
#include "mechanics/wording.hpp"

namespace iteragpu {
namespace {

const std::vector<std::string> kHeader = {
    "gpu", "gpu_name", "days", "lot_price_cents", "gpus_per_lot", "snapshot_date", "source",
    "device_names"};
// device_names is optional, so that catalogs written before it still load; the shipped one
// has it (results add compares a measurement's GPU with it).
constexpr std::size_t kPriceColumns = 7;
const std::vector<int> kDurations = {3, 7, 30};
constexpr const char* kCatalogFileName = "tarifs-forfaits.csv";
// Far above any real lot (10 billion dollars); keeps lots × price exact in 64-bit fields.
constexpr long long kMaxLotPriceCents = 1'000'000'000'000LL;
constexpr long long kMaxGpusPerLot = 1024;

std::string joined(const std::vector<std::string>& parts, const std::string& separator) {
  std::string text;
  for (std::size_t i = 0; i < parts.size(); ++i) text += (i ? separator : "") + parts[i];
  return text;
}

// "3, 7 or 30"
std::string durations_text(const std::vector<int>& days) {
  std::string text;
  for (std::size_t i = 0; i < days.size(); ++i) {
    if (i > 0) text += i + 1 == days.size() ? " or " : ", ";
    text += std::to_string(days[i]);
  }
  return text;
}

std::string lower_ascii(std::string text) {
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

bool is_gpu_key(const std::string& text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
  });
}

// Validates one CSV row; every message is "path:line: column: reason".
class RowValidator {
 public:
  RowValidator(const std::string& path, const CsvRecord& record) : path_(path), record_(record) {}

  CatalogEntry entry() const {
    CatalogEntry entry;
    entry.line = record_.line;
    entry.gpu = field(0);
    if (!is_gpu_key(entry.gpu))
      fail("gpu", quoted_for_message(entry.gpu) +
                      " is not a catalog key; expected lower-case letters, digits and '-' (b200)");
    entry.gpu_name = text(1);
    // Compared as text: a duration is one of three spellings, not any integer form.
    for (int days : kDurations)
      if (field(2) == std::to_string(days)) entry.days = days;
    if (entry.days == 0)
      fail("days", quoted_for_message(field(2)) + " is not an offered duration; expected " +
                       durations_text(kDurations));
    entry.lot_price_cents = integer(3, kMaxLotPriceCents);
    entry.gpus_per_lot = static_cast<int>(integer(4, kMaxGpusPerLot));
    entry.snapshot_date = field(5);
    if (!is_calendar_date(entry.snapshot_date))
      fail("snapshot_date", quoted_for_message(entry.snapshot_date) +
                                " is not a date; expected YYYY-MM-DD (2026-12-02)");
    entry.source = text(6);
    if (record_.fields.size() > kPriceColumns) entry.device_names = device_names(7);
    return entry;
  }

 private:
  const std::string& field(std::size_t column) const { return record_.fields[column]; }

  [[noreturn]] void fail(const std::string& column, const std::string& reason) const {
    throw data_file_error(path_, record_.line, column + ": " + reason);
  }

  // The quantity parser's checks and wording, located in the file instead of on an option.
  long long integer(std::size_t column, long long max_value) const {
    try {
      return parse_bounded_positive_integer(field(column), "", max_value);
    } catch (const UsageError& e) {
      fail(kHeader[column], e.what());
    }
  }

  // Free text shown in reports: required, one line, no stray spaces around it.
  const std::string& text(std::size_t column) const {
    const std::string& value = field(column);
    if (value.empty()) fail(kHeader[column], "empty; a value is required");
    if (std::any_of(value.begin(), value.end(),
                    [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; }))
      fail(kHeader[column], "contains a control character or a line break");
    if (value.front() == ' ' || value.back() == ' ')
      fail(kHeader[column], "has leading or trailing spaces");
    return value;
  }

  // "NVIDIA A100-SXM4-80GB;NVIDIA A100 80GB PCIe": each name as text() checks it, no repeats.
  std::vector<std::string> device_names(std::size_t column) const {
    text(column);
    std::vector<std::string> names;
    std::string rest = field(column) + ";";
    for (std::size_t end; (end = rest.find(';')) != std::string::npos; rest.erase(0, end + 1)) {
      const std::string name = rest.substr(0, end);
      if (name.empty() || name.front() == ' ' || name.back() == ' ')
        fail(kHeader[column], quoted_for_message(field(column)) +
                                  " is not a list of device names; expected names separated by ';' "
                                  "with no empty name and no spaces around one (NVIDIA H200)");
      if (std::find(names.begin(), names.end(), name) != names.end())
        fail(kHeader[column], "'" + name + "' is listed twice");
      names.push_back(name);
    }
    return names;
  }

  const std::string& path_;
  const CsvRecord& record_;
};

// Same source and date on every row: shown once above the table instead of on every row.
bool uniform_label(const std::vector<CatalogEntry>& entries) {
  return std::all_of(entries.begin(), entries.end(), [&](const CatalogEntry& e) {
    return e.source == entries.front().source && e.snapshot_date == entries.front().snapshot_date;
  });
}

}  // namespace

Catalog Catalog::load(const std::string& path, bool require_full_grid) {
  const CsvTable table = read_csv_file(path);
  const std::vector<std::string> price_header(kHeader.begin(), kHeader.begin() + kPriceColumns);
  if (table.header.fields != kHeader && table.header.fields != price_header)
    throw data_file_error(path, table.header.line,
                          "header is '" + joined(table.header.fields, ",") + "'; expected '" +
                              joined(kHeader, ",") + "' (device_names may be left out)");
  if (table.rows.empty())
    throw data_file_error(path, table.header.line, "the catalog has a header but no price rows");

  Catalog catalog;
  catalog.path_ = path;
  std::map<std::pair<std::string, int>, int> line_of;  // (gpu, days) → line
  std::map<std::string, const CatalogEntry*> first_row_of_gpu;
  for (const CsvRecord& record : table.rows) {
    CatalogEntry entry = RowValidator(path, record).entry();
    const auto [previous, inserted] =
        line_of.emplace(std::make_pair(entry.gpu, entry.days), entry.line);
    if (!inserted)
      throw data_file_error(path, entry.line,
                            "duplicate row for gpu " + entry.gpu + " and " +
                                std::to_string(entry.days) + " days (first on line " +
                                std::to_string(previous->second) + ")");
    catalog.entries_.push_back(std::move(entry));
  }
  for (const CatalogEntry& entry : catalog.entries_) {
    const auto [first, inserted] = first_row_of_gpu.emplace(entry.gpu, &entry);
    if (!inserted && first->second->gpu_name != entry.gpu_name)
      throw data_file_error(path, entry.line,
                            "gpu_name: '" + entry.gpu_name + "' differs from '" +
                                first->second->gpu_name + "' on line " +
                                std::to_string(first->second->line) + " for gpu " + entry.gpu);
    if (!inserted && first->second->device_names != entry.device_names)
      throw data_file_error(path, entry.line,
                            "device_names: differ from line " + std::to_string(first->second->line) +
                                " for gpu " + entry.gpu + "; a model covers the same devices for "
                                "every duration");
  }
  if (require_full_grid) {
    for (const auto& [gpu, first] : first_row_of_gpu)
      for (int days : kDurations)
        if (!line_of.count({gpu, days}))
          throw data_file_error(path, first->line,
                                "gpu " + gpu + " has no " + std::to_string(days) +
                                    "-day row; this catalog must price every GPU for " +
                                    durations_text(kDurations) + " days");
  }
  return catalog;
}

bool CatalogEntry::covers_device(const std::string& device_name) const {
  return std::any_of(device_names.begin(), device_names.end(), [&](const std::string& name) {
    return lower_ascii(name) == lower_ascii(device_name);
  });
}

std::string Catalog::shipped_path() {
  return shipped_data_path(kCatalogFileName, "package catalog");
}

const CatalogEntry& Catalog::find(const std::string& gpu, int days) const {
  const std::string key = lower_ascii(gpu);
  std::vector<std::string> keys;
  std::vector<int> durations;
  for (const CatalogEntry& entry : entries_) {
    if (entry.gpu == key) {
      if (entry.days == days) return entry;
      durations.push_back(entry.days);
    }
    if (std::find(keys.begin(), keys.end(), entry.gpu) == keys.end()) keys.push_back(entry.gpu);
  }
  if (durations.empty())
    throw UsageError(
        "gpu", (gpu.empty() ? "empty value" : quoted_for_message(gpu) + " is not in the catalog") +
                   "; expected one of: " + joined(keys, ", "));
  std::sort(durations.begin(), durations.end());
  throw UsageError("days", std::to_string(days) + " days is not offered for " + key +
                               " in the catalog; expected " + durations_text(durations));
}

std::string Catalog::to_json() const {
  JsonWriter json("iteragpu.catalog", 1);
  json.key("catalog_path").value(path_);
  json.key("note").value(package_notes::kPricesAsLabelled);
  json.key("caveat").value(package_notes::kNotAnOffer);
  json.key("rows").begin_array();
  for (const CatalogEntry& entry : entries_) {
    json.begin_object();
    json.key("gpu").value(entry.gpu);
    json.key("gpu_name").value(entry.gpu_name);
    json.key("days").value(entry.days);
    json.key("lot_price_cents").value(exact::to_exact(BigInt(entry.lot_price_cents)));
    json.key("lot_price_usd").value(usd_from_cents(entry.lot_price_cents));
    json.key("gpus_per_lot").value(entry.gpus_per_lot);
    json.key("snapshot_date").value(entry.snapshot_date);
    json.key("source").value(entry.source);
    json.key("device_names").value(entry.device_names);
    json.key("line").value(entry.line);
    json.end_object();
  }
  json.end_array();
  return json.finish();
}

std::string Catalog::to_text() const {
  const bool uniform = uniform_label(entries_);
  std::vector<std::vector<std::string>> table = {{"gpu", "name", "days", "lot price", "GPUs/lot"}};
  if (!uniform) {
    table[0].push_back("snapshot");
    table[0].push_back("source");
  }
  for (const CatalogEntry& entry : entries_) {
    table.push_back({printable(entry.gpu), printable(entry.gpu_name), std::to_string(entry.days),
                     "$" + usd_from_cents(entry.lot_price_cents).grouped(2),
                     std::to_string(entry.gpus_per_lot)});
    if (!uniform) {
      table.back().push_back(printable(entry.snapshot_date));
      table.back().push_back(printable(entry.source));
    }
  }
  std::vector<std::size_t> widths(table[0].size(), 0);
  for (const auto& row : table)
    for (std::size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], row[i].size());
  const auto right_aligned = [](std::size_t column) { return column >= 2 && column <= 4; };

  std::ostringstream out;
  out << "Package catalog: " << printable(path_) << " (" << counted(entries_.size(), "row") << ")\n";
  if (uniform) {
    out << "Prices: " << printable(entries_.front().source) << "\n"
        << "Snapshot date: " << printable(entries_.front().snapshot_date) << "\n";
  }
  out << "\n";
  for (const auto& row : table) {
    std::string line;
    for (std::size_t i = 0; i < row.size(); ++i) {
      const std::string padding(widths[i] - row[i].size(), ' ');
      line += (i ? "  " : "") + (right_aligned(i) ? padding + row[i] : row[i] + padding);
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out << line << "\n";
  }
  out << "\n" << package_notes::kPricesAsLabelled << "\n" << package_notes::kNotAnOffer << "\n";
  return out.str();
}

}  // namespace iteragpu
