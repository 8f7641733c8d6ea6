#include "command_support.hpp"
#include "commands.hpp"
#include "iteragpu/error.hpp"
#include "iteragpu/memory_estimator.hpp"
#include "model_options.hpp"

namespace iteragpu::cli {
namespace {

// --checkpoint: the weights are the checkpoint's own; --parameters and --bits would be a
// second, contradicting answer.
int run_checkpoint_estimate(const ParsedOptions& parsed) {
  for (const char* other : {"parameters", "bits"})
    if (parsed.values.count(other))
      throw UsageError("checkpoint", std::string("cannot be combined with --") + other +
                                         ": the checkpoint's headers give every tensor's dtype and shape");
  CheckpointRequest request;
  request.checkpoint = option_text(parsed.values, "checkpoint");
  request.reserve_gib = option_text(parsed.values, "reserve-gib");
  request.by_tensor = parsed.values.count("by-tensor") > 0;
  if (parsed.values.count("timeout")) request.timeout = option_text(parsed.values, "timeout");
  const CheckpointEstimate estimate = MemoryEstimator().estimate_checkpoint(request);
  if (parsed.values.count("verbose")) print_model_origin(estimate.origin);
  print_report(parsed.format == OutputFormat::kJson ? estimate.to_json() : estimate.to_text());
  return 0;
}

}  // namespace

int run_estimate(const std::vector<std::string>& args) {
  po::options_description options("Options");
  options.add_options()
      ("parameters", po::value<std::string>(),
       "parameter count: a positive integer or a shorthand such as 7B, 1.5M, 70B (required\n"
       "without --checkpoint)")
      ("bits", po::value<std::string>(),
       "storage bits per parameter, a positive integer (required without --checkpoint)")
      ("checkpoint", po::value<std::string>(),
       "instead: a .safetensors file, a sharded checkpoint's *.safetensors.index.json, a "
       "folder holding one, or a Hub id org/name[@revision] (the Hugging Face cache, else the "
       "headers over HTTPS); only the headers are read")
      ("by-tensor", "with --checkpoint: list every tensor (name, dtype, shape, bytes, shard)")
      ("reserve-gib", po::value<std::string>()->default_value("0"),
       "a reserve you choose to add, in GiB (non-negative decimal; an assumption)");
  add_hub_options(options);
  const ParsedOptions parsed = parse_options("estimate", options, args);
  if (parsed.help_requested) {
    print_help("estimate",
               "Exact weight memory: bytes = ceil(parameters x bits / 8), in bytes, GiB (2^30)\n"
               "and GB (10^9); or, with --checkpoint, the bytes of every tensor of a safetensors\n"
               "checkpoint, per dtype, from its headers. No GPU needed; LibTorch is not loaded.",
               options);
    return 0;
  }
  if (parsed.values.count("checkpoint")) return run_checkpoint_estimate(parsed);
  if (parsed.values.count("by-tensor"))
    throw UsageError("by-tensor", "lists the tensors of a checkpoint; give --checkpoint PATH");
  for (const char* hub_option : {"timeout", "verbose"})
    if (parsed.values.count(hub_option))
      throw UsageError(hub_option, "goes with --checkpoint naming a Hub id (org/name)");

  EstimateRequest request;
  request.parameters = option_text(parsed.values, "parameters");
  request.bits = option_text(parsed.values, "bits");
  request.reserve_gib = option_text(parsed.values, "reserve-gib");
  if (request.parameters.empty() && !parsed.values.count("parameters"))
    throw UsageError("parameters", "required; expected a positive integer or a shorthand such as 7B"
                                   " (or --checkpoint PATH)");
  if (request.bits.empty() && !parsed.values.count("bits"))
    throw UsageError("bits", "required; expected a positive integer such as 16");

  const MemoryEstimate estimate = MemoryEstimator().estimate(request);
  print_report(parsed.format == OutputFormat::kJson ? estimate.to_json() : estimate.to_text());
  return 0;
}

}  // namespace iteragpu::cli
