// `iteragpu packages`: a rental package quote, or the catalog itself with --list.

#include <string>
#include <vector>

#include "command_support.hpp"
#include "commands.hpp"
#include "iteragpu/error.hpp"
#include "iteragpu/package_calculator.hpp"
#include "iteragpu/package_fit.hpp"
#include "iteragpu/workload_options.hpp"
#include "model_options.hpp"

namespace iteragpu::cli {
namespace {

constexpr const char* kSummary =
    "Prices a rental package from a catalog (the shipped one holds illustrative, invented\n"
    "prices) and, with --accepted-results, the exact cost per accepted result.\n"
    "With --model, which packages' GPU holds that checkpoint at --batch and --context: the\n"
    "predicted peak reserved bytes plus the memory outside the allocator, against each GPU\n"
    "model's memory (in GiB, exact bytes in the lines under the table); with --days one lot's\n"
    "price, and with --measurement a measured rate's cost per million generated tokens (with\n"
    "--train: trained tokens).\n"
    "Examples: iteragpu packages --gpu b200 --days 7 --lots 2 --accepted-results 3\n"
    "          iteragpu packages --model ./Llama-3-8B --batch 4 --context 4096 --days 7";

// `packages --model`: the fit of a checkpoint on each catalog GPU model.
int run_package_fit(const po::variables_map& values, const PackageCalculator& calculator, bool json) {
  for (const char* quote_option : {"gpu", "lots", "accepted-results", "list"})
    if (values.count(quote_option))
      throw UsageError("model", std::string("judges every GPU model of the catalog and takes no --") + quote_option);
  PackageFitRequest request;
  request.configuration = measure_configuration_from(values, /*output_required=*/false);
  request.configuration.device.clear();
  if (values.count("days")) request.days = option_text(values, "days");
  if (values.count("measurement")) {
    request.measurement_file = option_text(values, "measurement");
    if (!request.days) throw UsageError("measurement", "prices tokens and needs --days (3, 7 or 30)");
  }
  const std::string memory_path = shipped_gpu_memory_path();
  const PackageFitReport report = fit_packages(request, calculator, load_gpu_memory(memory_path), memory_path);
  print_report(json ? report.to_json() : report.to_text());
  return 0;
}

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
      ("list", "print the catalog instead of a quote")
      ("measurement", po::value<std::string>(),
       "with --model and --days: a measure --model file of the same checkpoint and configuration; "
       "its decode rate prices a million generated tokens on the GPU model it was measured on "
       "(with --train, a measure --model --train file: its trained tokens per second a million trained tokens)");
  // clang-format on
  po::options_description model("Fit of a checkpoint (--model)");
  model.add_options()
      ("batch", po::value<std::string>(), "input batch size (default 1)")
      ("context", po::value<std::string>(), "prompt positions (default 16)")
      ("dtype", po::value<std::string>(), "float32, float16 or bfloat16 (default the checkpoint's)")
      ("warmup", po::value<std::string>(), "warm-up sequences, as measure counts them (default 1)")
      ("repeats", po::value<std::string>(), "measured sequences (default 2)");
  add_checkpoint_options(model);
  options.add(model);
  const ParsedOptions parsed = parse_options("packages", options, args);
  if (parsed.help_requested) {
    print_help("packages", kSummary, options);
    return 0;
  }
  const po::variables_map& values = parsed.values;
  const bool json = parsed.format == OutputFormat::kJson;
  if (values.count("model")) {
    const PackageCalculator calculator =
        values.count("catalog") ? PackageCalculator(Catalog::load(option_text(values, "catalog"))) : PackageCalculator();
    return run_package_fit(values, calculator, json);
  }
  std::vector<std::string> model_options{"batch", "context", "dtype", "warmup", "repeats"};
  for (const WorkloadOption& option : declared_workload_options()) model_options.emplace_back(option.name);
  model_options.emplace_back("measurement");
  for (const std::string& model_option : model_options)
    if (values.count(model_option))
      throw UsageError(model_option, "needs --model (a checkpoint whose fit on each GPU to judge)");

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
