#pragma once
// Rental package prices from a CSV catalog, and cost per accepted result (SPEC §4).

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "iteragpu/exact_decimal.hpp"

namespace iteragpu {

// One row of a catalog CSV (data/tarifs-forfaits.csv).
struct CatalogEntry {
  std::string gpu;            // key used on the command line: "b200", "h100-80gb"
  std::string gpu_name;       // display name: "NVIDIA B200"
  int days = 0;               // 3, 7 or 30
  std::int64_t lot_price_cents = 0;  // whole lot, integer US cents
  int gpus_per_lot = 0;       // a B200 lot holds 2
  std::string snapshot_date;  // ISO date of the price snapshot
  std::string source;         // where the price comes from; the shipped one says "illustrative"
  // The names the GPU runtime gives the devices this model covers ("NVIDIA H200"), from
  // the optional device_names column (';'-separated); empty when the catalog does not say.
  std::vector<std::string> device_names;
  int line = 0;               // line in the CSV file, for messages

  // Whether a device the runtime names `device_name` is this model (case-insensitive).
  bool covers_device(const std::string& device_name) const;
};

class Catalog {
 public:
  // Reads and validates a catalog strictly; throws DataFileError "file:line: reason". The
  // header is the seven price columns, optionally followed by device_names.
  // `require_full_grid` demands every GPU at every duration (the shipped catalog: 15 × 3).
  static Catalog load(const std::string& path, bool require_full_grid = false);
  // The catalog shipped with iteragpu (build tree or install prefix).
  static std::string shipped_path();

  const std::string& path() const { return path_; }
  const std::vector<CatalogEntry>& entries() const { return entries_; }
  // Throws UsageError naming "gpu" or "days" with the accepted values.
  const CatalogEntry& find(const std::string& gpu, int days) const;

  std::string to_json() const;  // schema "iteragpu.catalog"
  std::string to_text() const;

 private:
  std::string path_;
  std::vector<CatalogEntry> entries_;
};

struct QuoteRequest {
  std::string gpu;               // catalog key, case-insensitive ("b200")
  std::string days;              // "3", "7" or "30"
  std::string lots = "1";        // positive integer
  // Distinct, actually accepted results; no default on purpose. Positive integer.
  std::optional<std::string> accepted_results;
};

// Whole package price divided by the accepted results.
struct UnitCost {
  std::int64_t accepted_results = 0;  // a count: at most kMaxCount, a JSON integer
  ExactDecimal numerator_cents;    // reduced fraction: exact cost per result, in cents
  ExactDecimal denominator;        //   = numerator_cents / denominator
  std::optional<ExactDecimal> exact_usd;  // set when the fraction has a finite decimal form
  std::string display_usd;         // rounded for display, see display_rounding
  static const char* display_rounding();
};

struct Quote {
  CatalogEntry entry;
  std::string catalog_path;
  std::int64_t lots = 0;        // counts are JSON integers; money and bytes exact strings
  std::int64_t total_gpus = 0;  // lots × gpus_per_lot
  ExactDecimal total_cents;  // lots × lot price
  ExactDecimal total_usd;    // total_cents / 100, exact
  std::optional<UnitCost> unit_cost;  // only with accepted_results

  std::string to_json() const;  // schema "iteragpu.quote"
  std::string to_text() const;
};

class PackageCalculator {
 public:
  PackageCalculator();  // the shipped catalog
  explicit PackageCalculator(Catalog catalog);
  const Catalog& catalog() const { return catalog_; }
  Quote quote(const QuoteRequest& request) const;

 private:
  Catalog catalog_;
};

}  // namespace iteragpu
