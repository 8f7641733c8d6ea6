#include "command_support.hpp"
#include "commands.hpp"
#include "iteragpu/error.hpp"
#include "iteragpu/memory_estimator.hpp"

namespace iteragpu::cli {

int run_estimate(const std::vector<std::string>& args) {
  po::options_description options("Options");
  options.add_options()
      ("parameters", po::value<std::string>(),
       "parameter count: a positive integer or a shorthand such as 7B, 1.5M, 70B (required)")
      ("bits", po::value<std::string>(), "storage bits per parameter, a positive integer (required)")
      ("reserve-gib", po::value<std::string>()->default_value("0"),
       "a reserve you choose to add, in GiB (non-negative decimal; an assumption)");
  const ParsedOptions parsed = parse_options("estimate", options, args);
  if (parsed.help_requested) {
    print_help("estimate",
               "Exact weight memory: bytes = ceil(parameters x bits / 8), in bytes, GiB (2^30)\n"
               "and GB (10^9). No GPU needed; LibTorch is not loaded.",
               options);
    return 0;
  }
  EstimateRequest request;
  request.parameters = option_text(parsed.values, "parameters");
  request.bits = option_text(parsed.values, "bits");
  request.reserve_gib = option_text(parsed.values, "reserve-gib");
  if (request.parameters.empty() && !parsed.values.count("parameters"))
    throw UsageError("parameters", "required; expected a positive integer or a shorthand such as 7B");
  if (request.bits.empty() && !parsed.values.count("bits"))
    throw UsageError("bits", "required; expected a positive integer such as 16");

  const MemoryEstimate estimate = MemoryEstimator().estimate(request);
  print_report(parsed.format == OutputFormat::kJson ? estimate.to_json() : estimate.to_text());
  return 0;
}

}  // namespace iteragpu::cli
