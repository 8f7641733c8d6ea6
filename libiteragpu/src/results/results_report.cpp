// Cost per accepted result across the raw-results table, priced through PackageCalculator,
// and the cost per million generated tokens of the checkpoint runs.

#include <algorithm>
#include <charconv>
#include <sstream>

#include "mechanics/exact_arithmetic.hpp"
#include "iteragpu/error.hpp"
#include "iteragpu/printable_text.hpp"
#include "iteragpu/results_table.hpp"
#include "mechanics/json_output.hpp"
#include "mechanics/text_table.hpp"
#include "packages/package_format.hpp"
#include "packages/package_notes.hpp"
#include "mechanics/wording.hpp"

namespace iteragpu {
namespace {

// a/b < c/d for positive fractions, exactly.
bool cheaper(const UnitCost& a, const UnitCost& b) {
  const BigInt left = exact::from_exact(a.numerator_cents).mantissa * exact::from_exact(b.denominator).mantissa;
  const BigInt right = exact::from_exact(b.numerator_cents).mantissa * exact::from_exact(a.denominator).mantissa;
  return left < right;
}

std::string exact_cost_text(const UnitCost& cost) {
  return cost.exact_usd ? "$" + cost.exact_usd->str()
                        : cost.numerator_cents.str() + "/" + cost.denominator.str() + " cents";
}

constexpr int kTokenCostPlaces = 4;  // dollars to 1/100 of a cent, as the cost per result

// A double as the exact decimal its shortest text writes: std::to_chars without a precision
// gives the fewest significant digits that read back as the same double ("228.80291828970158"
// for the double nearest it). Asked in scientific form so that the digits and the exponent
// come apart whatever the magnitude; the value is finite and positive.
Decimal exact_shortest_decimal(double value) {
  char text[64];
  const auto result = std::to_chars(text, text + sizeof text, value, std::chars_format::scientific);
  const std::string scientific(text, result.ptr);  // "2.2880291828970158e+02"
  const std::size_t e = scientific.find('e');
  std::string digits;
  int fraction_digits = 0;
  bool after_point = false;
  for (std::size_t i = 0; i < e; ++i) {
    if (scientific[i] == '.') {
      after_point = true;
      continue;
    }
    digits += scientific[i];
    if (after_point) ++fraction_digits;
  }
  const int scale = fraction_digits - std::stoi(scientific.substr(e + 1));
  const BigInt mantissa = exact::from_digits(digits);
  if (scale < 0) return exact::normalized(Decimal{mantissa * boost::multiprecision::pow(BigInt(10), -scale), 0});
  return exact::normalized(Decimal{mantissa, static_cast<unsigned>(scale)});
}

// A row's cost per million generated tokens; none without a decode rate or without the GPU
// it was measured on.
std::optional<GeneratedTokensCost> row_tokens_cost(const ResultRow& row, const Quote& quote) {
  if (!row.decode_rate || row.measured_device.empty()) return std::nullopt;
  return generated_tokens_cost(row.measured_device, *row.decode_rate, quote);
}

// "LlamaForCausalLM, bfloat16, batch 4, context 4096, 16 new tokens"
std::string decode_run_text(const MeasuredDecodeRate& rate) {
  return printable(rate.architecture) + ", " + rate.dtype + ", batch " + std::to_string(rate.batch) +
         ", context " + std::to_string(rate.context) + ", " + std::to_string(rate.new_tokens) + " new tokens";
}

}  // namespace

MillionTokensPrice million_tokens_price(double tokens_per_second, const Quote& quote) {
  MillionTokensPrice price;
  const Decimal rate = exact_shortest_decimal(tokens_per_second);  // mantissa / 10^scale
  price.tokens_per_second = exact::to_exact(rate);
  price.gpu_hours = quote.total_gpus * quote.entry.days * 24;
  // cents = total_cents / gpu_hours / (rate × 3600) × 10^6
  //       = total_cents × 10^(6 + scale) / (gpu_hours × 3600 × mantissa)
  const BigInt total_cents = BigInt(quote.lots) * quote.entry.lot_price_cents;
  const CentsFraction fraction =
      cents_fraction(total_cents * boost::multiprecision::pow(BigInt(10), 6 + rate.scale),
                     BigInt(price.gpu_hours) * 3600 * rate.mantissa, kTokenCostPlaces);
  price.numerator_cents = exact::to_exact(fraction.numerator_cents);
  price.denominator = exact::to_exact(fraction.denominator);
  price.exact_usd = fraction.exact_usd;
  price.display_usd = fraction.display_usd;
  return price;
}

GeneratedTokensCost generated_tokens_cost(const std::string& measured_gpu, const MeasuredDecodeRate& rate_measured,
                                          const Quote& quote) {
  return {measured_gpu, rate_measured, million_tokens_price(rate_measured.decode_tokens_per_second, quote)};
}

const char* GeneratedTokensCost::method() {
  return "The cost per million generated tokens is the package price per GPU-hour (the package "
         "price over its GPUs x days x 24 hours) / (decode tokens/s x 3600) x 10^6, for checkpoint "
         "runs only. The decode rate is the measurement's double (the batch over the warm decode "
         "steps' host median, on the one GPU measured) written as its shortest decimal text, the "
         "fewest digits that read back as the same double, and taken as exact; the exact value is "
         "the reduced fraction numerator_cents/denominator in cents (exact_usd when it has a "
         "finite decimal form), displayed in US dollars rounded to 4 decimal places, halves away "
         "from zero. It holds for the GPU, batch and context measured, with the GPU generating "
         "for every hour paid for.";
}

ReportSort parse_report_sort(const std::string& text) {
  if (text == "table") return ReportSort::kTable;
  if (text == "cost") return ReportSort::kCost;
  if (text == "date") return ReportSort::kDate;
  if (text == "gpu") return ReportSort::kGpu;
  throw UsageError("sort", "'" + text + "' is not a sort key; expected table, cost, date or gpu");
}

ResultsReport report_results(const ResultsTable& table, const PackageCalculator& calculator,
                             ReportSort sort, bool descending) {
  ResultsReport report;
  report.table_path = table.path();
  report.catalog_path = calculator.catalog().path();
  for (const ResultRow& row : table.rows()) {
    QuoteRequest request{row.gpu, std::to_string(row.days), std::to_string(row.lots), std::nullopt};
    // Nothing accepted: there is no cost per result (null), never a division by zero.
    if (row.units_accepted_distinct > 0) request.accepted_results = std::to_string(row.units_accepted_distinct);
    const Quote quote = calculator.quote(request);
    report.rows.push_back({row, quote, row_tokens_cost(row, quote)});
  }
  const auto before = [sort](const ResultCost& a, const ResultCost& b) {
    switch (sort) {
      case ReportSort::kCost: return cheaper(*a.quote.unit_cost, *b.quote.unit_cost);
      case ReportSort::kDate: return a.row.date < b.row.date;
      case ReportSort::kGpu: return a.row.gpu < b.row.gpu;
      case ReportSort::kTable: break;
    }
    return a.row.line < b.row.line;
  };
  // Rows without a unit cost always go last when sorting by cost.
  auto priced_end = report.rows.end();
  if (sort == ReportSort::kCost)
    priced_end = std::stable_partition(report.rows.begin(), report.rows.end(),
                                       [](const ResultCost& r) { return r.quote.unit_cost.has_value(); });
  std::stable_sort(report.rows.begin(), priced_end, [&](const ResultCost& a, const ResultCost& b) {
    return descending ? before(b, a) : before(a, b);
  });
  return report;
}

std::string ResultsReport::to_json() const {
  // 2: counts became JSON integers; 3: the GPU measured and any mismatch with the package.
  JsonWriter json("iteragpu.results-report", 3);
  json.key("table_path").value(table_path);
  json.key("catalog_path").value(catalog_path);
  json.key("rows").begin_array();
  for (const ResultCost& r : rows) {
    json.begin_object();
    json.key("line").value(r.row.line);
    json.key("date").value(r.row.date);
    json.key("gpu").value(r.row.gpu);
    json.key("gpu_name").value(r.quote.entry.gpu_name);
    // null: a table loaded without reading its measurements.
    json.key("measured_gpu").text_or_null(r.row.measured_device);
    json.key("gpu_mismatch").text_or_null(r.row.gpu_mismatch);
    json.key("days").value(r.row.days);
    json.key("lots").value(r.row.lots);
    json.key("total_gpus").value(r.quote.total_gpus);
    json.key("work_unit").value(r.row.work_unit);
    json.key("units_attempted").value(static_cast<std::int64_t>(r.row.units_attempted));
    json.key("units_accepted_distinct").value(static_cast<std::int64_t>(r.row.units_accepted_distinct));
    json.key("quality_metric").value(r.row.quality_metric);
    json.key("acceptance_threshold").value(r.row.acceptance_threshold);
    json.key("observed_value").value(r.row.observed_value);
    json.key("measurement_file").value(r.row.measurement_file);
    json.key("measurement_sha256").value(r.row.measurement_sha256);
    json.key("package_price_cents").value(r.quote.total_cents);
    json.key("package_price_usd").value(r.quote.total_usd);
    json.key("snapshot_date").value(r.quote.entry.snapshot_date);
    json.key("price_source").value(r.quote.entry.source);
    json.key("unit_cost");
    write_unit_cost(json, r.quote.unit_cost);
    // Only for a checkpoint run with a decode rate, so the rows of synthetic-MLP runs are
    // written as before.
    if (const auto& cost = r.generated_tokens_cost) {
      json.key("generated_tokens_cost").begin_object();
      json.key("measured_gpu").value(cost->measured_gpu);
      json.key("architecture").value(cost->rate.architecture);
      json.key("dtype").value(cost->rate.dtype);
      json.key("batch").value(cost->rate.batch);
      json.key("context").value(cost->rate.context);
      json.key("new_tokens").value(cost->rate.new_tokens);
      json.key("decode_tokens_per_second").value(cost->price.tokens_per_second);
      json.key("gpu_hours").value(cost->price.gpu_hours);
      json.key("numerator_cents").value(cost->price.numerator_cents);
      json.key("denominator").value(cost->price.denominator);
      json.key("exact_usd").value(cost->price.exact_usd);
      json.key("display_usd").value(cost->price.display_usd);
      json.key("method").value(GeneratedTokensCost::method());
      json.end_object();
    }
    json.end_object();
  }
  json.end_array();
  json.key("caveats").value(std::vector<std::string>{
      package_notes::kPricesAsLabelled, package_notes::kNotAnOffer,
      package_notes::kRepeatsAreNotResults, UnitCost::display_rounding()});
  return json.finish();
}

std::string ResultsReport::to_csv() const {
  std::string text = csv_record({"line", "date", "gpu", "days", "lots", "package_price_cents",
                                 "units_accepted_distinct", "unit_cost_numerator_cents",
                                 "unit_cost_denominator", "unit_cost_display_usd", "measured_gpu"});
  for (const ResultCost& r : rows) {
    const auto& cost = r.quote.unit_cost;
    text += csv_record({std::to_string(r.row.line), r.row.date, r.row.gpu, std::to_string(r.row.days),
                        std::to_string(r.row.lots), r.quote.total_cents.str(),
                        std::to_string(r.row.units_accepted_distinct),
                        cost ? cost->numerator_cents.str() : "", cost ? cost->denominator.str() : "",
                        cost ? cost->display_usd : "", r.row.measured_device});
  }
  return text;
}

std::string ResultsReport::to_text() const {
  std::ostringstream out;
  out << "Cost per accepted result: " << printable(table_path) << " (" << counted(rows.size(), "row") << ")\n"
      << "Prices: " << printable(catalog_path) << "\n\n";
  if (rows.empty()) {
    out << "The table has no rows yet: one row is added per real run.\n";
  } else {
    char line[256];
    std::snprintf(line, sizeof line, "  %-5s %-10s %-14s %4s %5s %14s %9s %14s\n", "line", "date",
                  "gpu", "days", "lots", "package", "accepted", "per result");
    out << line;
    for (const ResultCost& r : rows) {
      const auto& cost = r.quote.unit_cost;
      std::snprintf(line, sizeof line, "  %-5d %-10s %-14s %4d %5lld %14s %9lld %14s\n", r.row.line,
                    printable(r.row.date).c_str(), printable(r.row.gpu).c_str(), r.row.days,
                    static_cast<long long>(r.row.lots), ("$" + r.quote.total_usd.grouped(2)).c_str(),
                    static_cast<long long>(r.row.units_accepted_distinct),
                    cost ? ("$" + ExactDecimal::parse(cost->display_usd).grouped(4)).c_str() : "none");
      out << line;
    }
    // Every row gets its exact line, so no row's figure rests on the rounded column alone.
    out << "\nExactly, per accepted result:\n";
    for (const ResultCost& r : rows)
      out << "  line " << r.row.line << ": "
          << (r.quote.unit_cost ? exact_cost_text(*r.quote.unit_cost)
                                : std::string("none (no accepted unit, so no cost per result)"))
          << "\n";
    // A checkpoint run's generated tokens, priced from its decode rate, each line naming the
    // GPU measured and the catalog's label of its prices.
    bool tokens_said = false;
    for (const ResultCost& r : rows) {
      const auto& cost = r.generated_tokens_cost;
      if (!cost) continue;
      if (!tokens_said) out << "\nPer million generated tokens (checkpoint runs, from the measured decode rate):\n";
      tokens_said = true;
      out << "  line " << r.row.line << ": $" << ExactDecimal::parse(cost->price.display_usd).grouped(kTokenCostPlaces)
          << " (exactly "
          << (cost->price.exact_usd ? "$" + cost->price.exact_usd->str()
                              : cost->price.numerator_cents.str() + "/" + cost->price.denominator.str() + " cents")
          << "), decode " << cost->price.tokens_per_second.str() << " tokens/s measured on "
          << printable(cost->measured_gpu) << (r.row.gpu_mismatch.empty() ? "" : " (not the package's GPU)")
          << " (" << decode_run_text(cost->rate) << "), package $" << r.quote.total_usd.grouped(2) << " for "
          << cost->price.gpu_hours << " GPU-hours; prices: " << printable(r.quote.entry.source) << "\n";
    }
    if (tokens_said) out << GeneratedTokensCost::method() << "\n";
    // A row recorded with gpu-mismatch-ok prices a package whose GPU was not the one measured.
    bool mismatch_said = false;
    for (const ResultCost& r : rows) {
      if (r.row.gpu_mismatch.empty()) continue;
      if (!mismatch_said) out << "\nMeasured on another GPU than the package's (recorded with gpu-mismatch-ok):\n";
      mismatch_said = true;
      out << "  line " << r.row.line << ": " << printable(r.row.gpu_mismatch) << "\n";
    }
    out << "\n" << UnitCost::display_rounding() << "\n"
        << "Prices: " << printable(rows.front().quote.entry.source) << " (snapshot "
        << printable(rows.front().quote.entry.snapshot_date) << ").\n";
  }
  out << package_notes::kNotAnOffer << "\n" << package_notes::kRepeatsAreNotResults << "\n";
  return out.str();
}

}  // namespace iteragpu
