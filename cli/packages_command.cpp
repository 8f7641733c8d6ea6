// `iteragpu packages`: a rental package quote, or the catalog itself with --list.

#include "command_support.hpp"
#include "commands.hpp"
#include "iteragpu/error.hpp"
#include "iteragpu/package_calculator.hpp"

namespace iteragpu::cli {
namespace {

constexpr const char* kSummary =
    "Prices a rental package from a catalog (the shipped one holds illustrative, invented\n"
    "prices) and, with --accepted-results, the exact cost per accepted result.\n"
    "Example: iteragpu packages --gpu b200 --days 7 --lots 2 --accepted-results 3";

// The only place where options become a QuoteRequest; absent options keep its defaults.
QuoteRequest quote_request_from(const po::variables_map& values) {
  if (!values.count("gpu") || !values.count("days"))
    throw UsageError(values.count("gpu") ? "days" : "gpu",
                     "required: a quote needs --gpu and --days (or use --list to see the catalog)");
  QuoteRequest request;
  request.gpu = option_text(values, "gpu");
  request.days = option_text(values, "days");
  if (values.count("lots")) request.lots = option_text(values, "lots");
  if (values.count("accepted-results"))
    request.accepted_results = option_text(values, "accepted-results");
  return request;
}

}  // namespace

int run_packages(const std::vector<std::string>& args) {
  po::options_description options("Options");
  // clang-format off
  options.add_options()
      ("gpu", po::value<std::string>(), "GPU key from the catalog, case-insensitive (b200)")
      ("days", po::value<std::string>(), "package duration in days: 3, 7 or 30")
      ("lots", po::value<std::string>(), "number of lots, a positive integer (default 1)")
      ("accepted-results", po::value<std::string>(),
       "distinct, actually accepted results (positive integer; no default: without it the "
       "unit cost is not computed)")
      ("catalog", po::value<std::string>(),
       "catalog CSV with your own prices (default: the shipped illustrative catalog)")
      ("list", "print the catalog instead of a quote");
  // clang-format on
  const ParsedOptions parsed = parse_options("packages", options, args);
  if (parsed.help_requested) {
    print_help("packages", kSummary, options);
    return 0;
  }
  const po::variables_map& values = parsed.values;
  const bool json = parsed.format == OutputFormat::kJson;

  const bool listing = values.count("list") > 0;
  if (listing) {
    for (const char* quote_option : {"gpu", "days", "lots", "accepted-results"})
      if (values.count(quote_option))
        throw UsageError("list", std::string("prints the catalog and takes no --") + quote_option);
  }
  // A missing --gpu/--days is reported before any catalog is read.
  const QuoteRequest request = listing ? QuoteRequest{} : quote_request_from(values);
  // A user catalog is validated as strictly but may price any subset of GPUs and durations.
  const PackageCalculator calculator =
      values.count("catalog") ? PackageCalculator(Catalog::load(option_text(values, "catalog")))
                              : PackageCalculator();
  if (listing) {
    print_report(json ? calculator.catalog().to_json() : calculator.catalog().to_text());
    return 0;
  }
  const Quote quote = calculator.quote(request);
  print_report(json ? quote.to_json() : quote.to_text());
  return 0;
}

}  // namespace iteragpu::cli
