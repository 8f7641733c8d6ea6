#include "model_options.hpp"

#include <charconv>

#include "iteragpu/error.hpp"

namespace iteragpu::cli {
namespace {

// A whole number, as written: the core checks ranges and names the option. Anything that
// is not a plain integer (1.5, 1e3, " 1", 0x10) is refused here.
template <typename Integer>
Integer integer_option(const po::variables_map& values, const char* name, Integer fallback) {
  if (!values.count(name)) return fallback;
  const std::string text = option_text(values, name);
  Integer value{};
  const char* end = text.data() + text.size();
  const auto [stop, error] = std::from_chars(text.data(), end, value);
  if (!text.empty() && stop == end && error == std::errc::result_out_of_range)
    throw UsageError(name, "'" + text + "' is out of range; expected a whole number such as 16");
  if (text.empty() || stop != end || error != std::errc())
    throw UsageError(name, "not a whole number; expected digits only, such as 16");
  return value;
}

}  // namespace

void add_model_options(po::options_description& options) {
  options.add_options()
      ("batch", po::value<std::string>(), "input batch size (default 1)")
      ("context", po::value<std::string>(), "positions per input; no attention, no KV cache (default 16)")
      ("width", po::value<std::string>(), "model width (default 64)")
      ("hidden", po::value<std::string>(), "hidden size of the MLP (default 4 x width)")
      ("dtype", po::value<std::string>()->default_value("float32"),
       "weights and inputs: float32, float16 or bfloat16")
      ("warmup", po::value<std::string>(), "warm-up forwards, measured together (default 1; 0 = none)")
      ("repeats", po::value<std::string>(), "measured warm forwards, one row each (default 2)")
      ("seed", po::value<std::string>(), "seed of the model and input initialisation (default 20260924)");
}

void add_backend_option(po::options_description& options) {
  options.add_options()
      ("backend", po::value<std::string>(),
       "LibTorch backend plugin to load (default: ITERAGPU_BACKEND, else "
       "libiteragpu_torch_backend.so beside the executable, else ../lib/iteragpu/)");
}

MeasureRequest measure_request_from(const po::variables_map& values, bool output_required) {
  MeasureRequest request;
  request.device = option_text(values, "device");
  request.batch = integer_option(values, "batch", request.batch);
  request.context = integer_option(values, "context", request.context);
  request.width = integer_option(values, "width", request.width);
  request.hidden = integer_option(values, "hidden", request.hidden);
  if (values.count("hidden") && request.hidden == 0)
    throw UsageError("hidden", "0 is not a size; expected a positive integer (omit it for 4 x width)");
  request.dtype = option_text(values, "dtype");
  request.warmup = integer_option(values, "warmup", request.warmup);
  request.repeats = integer_option(values, "repeats", request.repeats);
  request.seed = integer_option(values, "seed", request.seed);
  request.output = option_text(values, "output");
  request.backend_path = option_text(values, "backend");
  if (output_required && !values.count("output"))
    throw UsageError("output", "required: the name of a new JSON file for the result");
  return request;
}

}  // namespace iteragpu::cli
