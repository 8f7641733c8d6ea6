// `iteragpu predict`: the allocator counters `measure` will record, phase by phase, computed
// before any GPU is touched. With --device the backend names the GPU and the workspace sizes
// LibTorch chose for it (nothing is allocated); with --compute-capability alone the documented
// table of PyTorch's defaults is used and no backend is loaded.

#include <charconv>

#include "command_support.hpp"
#include "commands.hpp"
#include "iteragpu/environment.hpp"
#include "iteragpu/error.hpp"
#include "iteragpu/memory_predictor.hpp"
#include "model_options.hpp"

namespace iteragpu::cli {
namespace {

constexpr const char* kSummary =
    "Predicts, for every phase of `iteragpu measure` with the same options, this process's\n"
    "caching-allocator counters: allocated and reserved bytes at baseline and end, and the\n"
    "peaks, from PyTorch's allocator rules. Nothing is allocated on any GPU.\n"
    "Examples: iteragpu predict --compute-capability 9.0 --batch 2 --context 128 --width 1024\n"
    "          iteragpu predict --device cuda:0 --dtype bfloat16 --batch 8 --context 2048 --width 4096";

// "9.0" → {9, 0}; anything else is a UsageError naming the option.
std::pair<int, int> compute_capability_option(const std::string& text) {
  int major = 0, minor = 0;
  const char* end = text.data() + text.size();
  const auto dot = text.find('.');
  bool ok = dot != std::string::npos && dot > 0 && dot + 1 < text.size();
  if (ok) {
    const auto [stop_major, error_major] = std::from_chars(text.data(), text.data() + dot, major);
    const auto [stop_minor, error_minor] = std::from_chars(text.data() + dot + 1, end, minor);
    ok = error_major == std::errc() && stop_major == text.data() + dot &&
         error_minor == std::errc() && stop_minor == end;
  }
  if (!ok)
    throw UsageError("compute-capability", "'" + text + "' is not MAJOR.MINOR; expected a CUDA "
                                           "compute capability such as 8.0, 9.0 or 10.0");
  return {major, minor};
}

}  // namespace

int run_predict(const std::vector<std::string>& args) {
  po::options_description options("Options");
  options.add_options()
      ("device", po::value<std::string>(),
       "GPU to predict for, cuda:N: the backend reports its compute capability and the cuBLAS "
       "and cuBLASLt workspace sizes (nothing is allocated)")
      ("compute-capability", po::value<std::string>(),
       "predict without a GPU, for this compute capability (9.0 for H100/H200), with PyTorch's "
       "default workspace sizes");
  add_model_options(options);
  add_backend_option(options);
  const ParsedOptions parsed = parse_options("predict", options, args);
  if (parsed.help_requested) {
    print_help("predict", kSummary, options);
    return 0;
  }
  const MeasureRequest request = measure_request_from(parsed.values, /*output_required=*/false);
  const bool has_device = parsed.values.count("device") > 0;
  const bool has_capability = parsed.values.count("compute-capability") > 0;
  if (has_device == has_capability)
    throw UsageError(has_device ? "compute-capability" : "device",
                     has_device ? "give either --device or --compute-capability, not both"
                                : "required: --device cuda:N (reads the GPU) or "
                                  "--compute-capability MAJOR.MINOR (no GPU needed)");
  SyntheticModel::from(request);  // every model option is checked before a backend is loaded

  PredictionTarget target;
  if (has_capability) {
    const auto [major, minor] = compute_capability_option(option_text(parsed.values, "compute-capability"));
    target = PredictionTarget::from_table(major, minor);
  } else {
    parse_device_index(request.device, "device");
    EnvironmentRequest environment_request;
    environment_request.device = request.device;
    environment_request.backend_path = request.backend_path;
    const EnvironmentReport environment = Environment().collect(environment_request);
    if (!environment.stack)
      throw BackendUnavailable(environment.backend_error +
                               "; give --compute-capability to predict without a GPU");
    if (!environment.selected_present)
      throw DeviceUnavailable(request.device + " is not a visible GPU (LibTorch " +
                              environment.stack->torch_version + " sees " +
                              std::to_string(environment.stack->gpus.size()) +
                              "); give --compute-capability to predict without a GPU");
    target = PredictionTarget::from_environment(environment);
  }
  const MemoryPrediction prediction = MemoryPredictor::predict(request, target);
  print_report(parsed.format == OutputFormat::kJson ? prediction.to_json() : prediction.to_text());
  return 0;
}

}  // namespace iteragpu::cli
