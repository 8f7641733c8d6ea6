#include "model_options.hpp"

#include <iostream>
#include <string>

#include "iteragpu/error.hpp"
#include "iteragpu/printable_text.hpp"
#include "iteragpu/workload_options.hpp"

namespace iteragpu::cli {
namespace {

// An option as written, or `fallback` when absent: the core parses every value
// (MeasureConfiguration::parse), the same way for the CLI and Python.
std::string text_option(const po::variables_map& values, const char* name, const std::string& fallback) {
  return values.count(name) ? option_text(values, name) : fallback;
}

}  // namespace

void add_model_options(po::options_description& options) {
  options.add_options()
      ("batch", po::value<std::string>(), "input batch size (default 1)")
      ("context", po::value<std::string>(),
       "MLP: positions per input, no attention, no KV cache; with --model: the prompt length, run "
       "with attention and a growing KV cache (default 16)")
      ("width", po::value<std::string>(), "MLP only: model width (default 64)")
      ("hidden", po::value<std::string>(), "MLP only: hidden size (default 4 x width)")
      ("dtype", po::value<std::string>(),
       "float32, float16 or bfloat16. MLP: weights and inputs (default float32); with --model: "
       "the weights and activations (default the checkpoint's own dtype)")
      ("warmup", po::value<std::string>(),
       "MLP: warm-up forwards, measured together; with --model: warm-up sequences (default 1; 0 = none)")
      ("repeats", po::value<std::string>(),
       "MLP: measured warm forwards, one row each; with --model: measured warm sequences (default 2)")
      ("seed", po::value<std::string>(),
       "seed of the weights (MLP) and input initialisation (default 20260924)");
}

void add_checkpoint_options(po::options_description& options) {
  options.add_options()
      ("model", po::value<std::string>(),
       "a dense decoder-only checkpoint (Llama, Mistral, Qwen2, Qwen3), run as transformers runs it, "
       "instead of the synthetic MLP: a folder with config.json and safetensors weights, or a Hugging "
       "Face Hub id org/name[@revision] (read from the Hugging Face cache, else only config.json and "
       "the safetensors headers over HTTPS; measure needs the weights in the cache); --context is "
       "then the prompt length and --dtype defaults to the checkpoint's");
  // Every workload's own options, as it declares them (WorkloadKind::options).
  for (const WorkloadOption& option : declared_workload_options()) {
    if (option.type == WorkloadOption::Type::kSwitch) {  // a flag: off unless given
      options.add_options()(option.name, option.help);
      continue;
    }
    const std::string default_text = *option.default_text ? std::string(" (default ") + option.default_text + ")" : "";
    options.add_options()(option.name, po::value<std::string>(), (option.help + default_text).c_str());
  }
  add_hub_options(options);
}

void add_hub_options(po::options_description& options) {
  options.add_options()
      ("timeout", po::value<std::string>(), "with a Hub id: seconds each HTTP request may take (default 10)")
      ("verbose", "with a Hub id: print on stderr where the model was read from, the HTTP requests and the bytes");
}

void add_backend_option(po::options_description& options) {
  options.add_options()
      ("backend", po::value<std::string>(),
       "LibTorch backend plugin to load (default: ITERAGPU_BACKEND, else "
       "libiteragpu_torch_backend.so beside the executable, else ../lib/iteragpu/)");
}

MeasureConfiguration measure_configuration_from(const po::variables_map& values, bool output_required) {
  // Absent options stay absent: MeasureConfiguration::parse checks what goes together, for
  // the command line and Python alike.
  auto given = [&values](const char* name) -> std::optional<std::string> {
    if (!values.count(name) || values[name].defaulted()) return std::nullopt;
    return option_text(values, name);
  };
  MeasureRequest request;
  request.device = option_text(values, "device");  // measure defaults to cuda:0; predict to none
  request.batch = text_option(values, "batch", request.batch);
  request.context = text_option(values, "context", request.context);
  request.width = given("width");
  request.hidden = given("hidden");
  request.dtype = given("dtype");
  request.model = given("model");
  for (const WorkloadOption& option : declared_workload_options()) {
    if (option.type == WorkloadOption::Type::kSwitch) {
      if (values.count(option.name)) request.workload_options[option.name] = "1";
    } else if (const std::optional<std::string> text = given(option.name)) {
      request.workload_options[option.name] = *text;
    }
  }
  request.timeout = given("timeout");
  request.warmup = given("warmup");
  request.repeats = given("repeats");
  request.seed = text_option(values, "seed", request.seed);
  request.output = output_option(values);
  request.backend_path = text_option(values, "backend", request.backend_path);
  if (output_required && request.output.empty())
    throw UsageError("output", "required: the name of a new JSON file for the result");
  const MeasureConfiguration configuration = MeasureConfiguration::parse(request);
  if (values.count("verbose")) print_model_origin(configuration.model_origin());
  return configuration;
}

void print_model_origin(const ModelOrigin& origin) {
  std::cerr << "iteragpu: " << printable(origin.traffic_text()) << "\n";
}

}  // namespace iteragpu::cli
