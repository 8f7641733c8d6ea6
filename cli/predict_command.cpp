// `iteragpu predict`: the allocator counters `measure` will record, phase by phase, computed
// before any GPU is touched. With --device the backend names the GPU and the workspace sizes
// LibTorch chose for it (nothing is allocated); with --compute-capability alone the documented
// table of PyTorch's defaults is used and no backend is loaded.

#include "command_support.hpp"
#include "commands.hpp"
#include "iteragpu/error.hpp"
#include "iteragpu/memory_predictor.hpp"
#include "model_options.hpp"

namespace iteragpu::cli {
namespace {

constexpr const char* kSummary =
    "Predicts, for every phase of `iteragpu measure` with the same options, this process's\n"
    "caching-allocator counters: allocated and reserved bytes at baseline and end, and the\n"
    "peaks, from PyTorch's allocator rules. Nothing is allocated on any GPU.\n"
    "With --model, the checkpoint's every prefill and decode row, from config.json and the\n"
    "safetensors headers alone.\n"
    "Examples: iteragpu predict --compute-capability 9.0 --batch 2 --context 128 --width 1024\n"
    "          iteragpu predict --device cuda:0 --dtype bfloat16 --batch 8 --context 2048 --width 4096\n"
    "          iteragpu predict --compute-capability 9.0 --model ./Llama-3.1-8B --batch 4 --context 4096";

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
  add_checkpoint_options(options);
  add_backend_option(options);
  const ParsedOptions parsed = parse_options("predict", options, args);
  if (parsed.help_requested) {
    print_help("predict", kSummary, options);
    return 0;
  }
  // Every model option is checked before a backend is loaded.
  const MeasureConfiguration configuration = measure_configuration_from(parsed.values, /*output_required=*/false);
  const PredictionTarget target = PredictionTarget::resolve(
      configuration.device, option_text(parsed.values, "compute-capability"), configuration.backend_path);
  const MemoryPrediction prediction = MemoryPredictor::predict(configuration, target);
  print_report(parsed.format == OutputFormat::kJson ? prediction.to_json() : prediction.to_text());
  return 0;
}

}  // namespace iteragpu::cli
