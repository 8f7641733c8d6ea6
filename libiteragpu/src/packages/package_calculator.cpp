// Package quotes and cost per accepted result, in exact integer cents (SPEC §4).

#include "iteragpu/package_calculator.hpp"

#include <sstream>

#include "mechanics/csv_reader.hpp"
#include "mechanics/exact_arithmetic.hpp"
#include "iteragpu/error.hpp"
#include "iteragpu/printable_text.hpp"
#include "mechanics/json_output.hpp"
#include "packages/package_format.hpp"
#include "packages/package_notes.hpp"
#include "mechanics/quantity_parser.hpp"
#include "mechanics/wording.hpp"

namespace iteragpu {
namespace {

constexpr std::size_t kShippedCatalogRows = 45;  // 15 GPU models × 3 durations
constexpr long long kMaxLots = 1'000'000;
constexpr long long kMaxDays = 10'000;  // only bounds parsing; the catalog decides what exists
constexpr int kDisplayPlaces = 4;       // dollars to 1/100 of a cent

// total_cents / accepted as a reduced fraction, its exact dollars when the decimal
// expansion ends, and a rounded display figure.
UnitCost unit_cost(const BigInt& total_cents, long long accepted) {
  const CentsFraction fraction = cents_fraction(total_cents, accepted, kDisplayPlaces);
  UnitCost cost;
  cost.accepted_results = accepted;
  cost.numerator_cents = exact::to_exact(fraction.numerator_cents);
  cost.denominator = exact::to_exact(fraction.denominator);
  cost.exact_usd = fraction.exact_usd;
  cost.display_usd = fraction.display_usd;
  return cost;
}

std::vector<std::string> caveats() {
  return {package_notes::kPricesAsLabelled, package_notes::kNotAnOffer,
          package_notes::kRepeatsAreNotResults};
}

}  // namespace

const char* UnitCost::display_rounding() {
  return "The cost per accepted result is displayed in US dollars rounded to 4 decimal places "
         "(1/100 of a cent), halves away from zero; the exact value is the reduced fraction "
         "numerator_cents/denominator in cents, also given as exact_usd when it has a finite "
         "decimal form.";
}

PackageCalculator::PackageCalculator() : catalog_(Catalog::load(Catalog::shipped_path(), true)) {
  if (catalog_.entries().size() != kShippedCatalogRows)
    throw data_file_error(catalog_.path(), 0,
                          "the shipped catalog has " + std::to_string(catalog_.entries().size()) +
                              " rows; expected " + std::to_string(kShippedCatalogRows) +
                              " (15 GPU models x 3 durations)");
}

PackageCalculator::PackageCalculator(Catalog catalog) : catalog_(std::move(catalog)) {}

Quote PackageCalculator::quote(const QuoteRequest& request) const {
  const int days = static_cast<int>(parse_bounded_positive_integer(request.days, "days", kMaxDays));
  const CatalogEntry& entry = catalog_.find(request.gpu, days);
  const long long lots = parse_bounded_positive_integer(request.lots, "lots", kMaxLots);
  std::optional<long long> accepted;
  if (request.accepted_results)
    accepted = parse_bounded_positive_integer(*request.accepted_results, "accepted-results", kMaxCount);

  const BigInt total_cents = BigInt(lots) * entry.lot_price_cents;
  Quote quote;
  quote.entry = entry;
  quote.catalog_path = catalog_.path();
  quote.lots = lots;
  quote.total_gpus = lots * entry.gpus_per_lot;
  quote.total_cents = exact::to_exact(total_cents);
  quote.total_usd = usd_from_cents(total_cents);
  if (accepted) quote.unit_cost = unit_cost(total_cents, *accepted);
  return quote;
}

std::string Quote::to_json() const {
  JsonWriter json("iteragpu.quote", 2);  // 2: counts became JSON integers
  json.key("catalog_path").value(catalog_path);
  json.key("gpu").value(entry.gpu);
  json.key("gpu_name").value(entry.gpu_name);
  json.key("days").value(entry.days);
  json.key("lot_price_cents").value(exact::to_exact(BigInt(entry.lot_price_cents)));
  json.key("lot_price_usd").value(usd_from_cents(entry.lot_price_cents));
  json.key("lots").value(lots);
  json.key("gpus_per_lot").value(entry.gpus_per_lot);
  json.key("total_gpus").value(total_gpus);
  json.key("total_cents").value(total_cents);
  json.key("total_usd").value(total_usd);
  json.key("snapshot_date").value(entry.snapshot_date);
  json.key("source").value(entry.source);
  json.key("unit_cost");
  write_unit_cost(json, unit_cost);
  json.key("caveats").value(caveats());
  return json.finish();
}

std::string Quote::to_text() const {
  std::ostringstream out;
  // What the catalog file says is printed as text from outside (control characters escaped).
  out << "Package quote: " << printable(entry.gpu) << " (" << printable(entry.gpu_name) << "), " << entry.days
      << " days, " << counted(lots, "lot") << "\n"
      << "Prices: " << printable(entry.source) << "\n"
      << "Snapshot date: " << printable(entry.snapshot_date) << "\n"
      << "Catalog: " << printable(catalog_path) << " (line " << entry.line << ")\n\n";
  const auto row = [&out](const char* label, const std::string& value) {
    out << "  " << label << std::string(20 - std::string(label).size(), ' ') << value << "\n";
  };
  row("Lot price:", "$" + usd_from_cents(entry.lot_price_cents).grouped(2) + " (" +
                        std::to_string(entry.lot_price_cents) + " cents, " +
                        counted(entry.gpus_per_lot, "GPU") + " per lot)");
  row("GPUs in total:", grouped_count(total_gpus) + " (" + counted(lots, "lot") + " x " +
                            std::to_string(entry.gpus_per_lot) + " per lot)");
  row("Total price:", "$" + total_usd.grouped(2) + " (" + total_cents.str() + " cents = " +
                          std::to_string(lots) + " x " + std::to_string(entry.lot_price_cents) + ")");
  if (unit_cost) {
    row("Accepted results:", grouped_count(unit_cost->accepted_results));
    const std::string exact_text =
        unit_cost->exact_usd ? "exactly $" + unit_cost->exact_usd->str()
                             : "exactly " + unit_cost->numerator_cents.str() + "/" +
                                   unit_cost->denominator.str() + " cents, a repeating decimal";
    row("Cost per result:",
        "$" + ExactDecimal::parse(unit_cost->display_usd).grouped(kDisplayPlaces) + " (" +
            exact_text + ")");
    out << "\n" << UnitCost::display_rounding() << "\n";
  } else {
    row("Cost per result:",
        "not computed: no count of accepted results was given (there is no default)");
  }
  out << "\nCaveats:\n";
  for (const std::string& caveat : caveats()) out << "  - " << caveat << "\n";
  return out.str();
}

}  // namespace iteragpu
