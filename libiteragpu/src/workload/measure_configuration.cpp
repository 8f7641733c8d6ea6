// A measurement request parsed once per run: whole numbers in range, the default hidden
// size resolved, the dtype known. The bounds keep every size computation far from
// overflow and the workload bounded; anything within them that does not fit on the GPU is
// the device's out-of-memory answer.

#include "iteragpu/measure_configuration.hpp"

#include <limits>
#include <string>

#include "iteragpu/error.hpp"
#include "mechanics/quantity_parser.hpp"

namespace iteragpu {
namespace {

constexpr std::int64_t kMaxDimension = kMaxModelDimension;
constexpr std::int64_t kMaxElements = std::int64_t{1} << 40;   // per tensor
constexpr int kMaxForwards = 100000;                           // warmup, repeats

struct DtypeSize {
  const char* name;
  int bytes;
};
constexpr DtypeSize kDtypes[] = {{"float32", 4}, {"float16", 2}, {"bfloat16", 2}};

void check_dimension(std::int64_t value, const char* field, std::int64_t minimum) {
  if (value < minimum)
    throw UsageError(field, std::to_string(value) + " is too small; expected an integer from " +
                                std::to_string(minimum) + " to " + std::to_string(kMaxDimension));
  if (value > kMaxDimension)
    throw UsageError(field, std::to_string(value) + " is too large; expected an integer from " +
                                std::to_string(minimum) + " to " + std::to_string(kMaxDimension) +
                                " (this is a bounded measurement)");
}

void check_count(int value, const char* field, int minimum) {
  if (value < minimum || value > kMaxForwards)
    throw UsageError(field, std::to_string(value) + " is out of range; expected an integer from " +
                                std::to_string(minimum) + " to " + std::to_string(kMaxForwards));
}

// a × b × c elements, refused beyond kMaxElements (which also rules out overflow).
std::int64_t bounded_elements(std::int64_t a, std::int64_t b, std::int64_t c, const char* what) {
  std::int64_t ab = 0, abc = 0;
  if (__builtin_mul_overflow(a, b, &ab) || __builtin_mul_overflow(ab, c, &abc) || abc > kMaxElements)
    throw UsageError("", "the " + std::string(what) + " would exceed " + std::to_string(kMaxElements) +
                             " elements; reduce the batch, context, width or hidden size");
  return abc;
}


}  // namespace

MeasureConfiguration MeasureConfiguration::parse(const MeasureRequest& request) {
  MeasureConfiguration configuration;
  configuration.device = request.device;
  configuration.batch = parse_whole_number(request.batch, "batch", 1, kMaxDimension);
  configuration.context = parse_whole_number(request.context, "context", 1, kMaxDimension);
  configuration.width = parse_whole_number(request.width, "width", 1, kMaxDimension);
  configuration.hidden = request.hidden.empty() ? 0 : parse_whole_number(request.hidden, "hidden", 1, kMaxDimension);
  configuration.dtype = request.dtype;
  configuration.warmup = static_cast<int>(parse_whole_number(request.warmup, "warmup", 0, kMaxForwards));
  configuration.repeats = static_cast<int>(parse_whole_number(request.repeats, "repeats", 1, kMaxForwards));
  configuration.seed = parse_whole_number_up_to_uint64(request.seed, "seed");
  configuration.output = request.output;
  configuration.backend_path = request.backend_path;
  return configuration.checked();
}

MeasureConfiguration MeasureConfiguration::checked() const {
  MeasureConfiguration configuration = *this;
  if (hidden == 0) configuration.hidden_is_default = true;
  configuration.hidden = SyntheticModel::from(configuration).hidden;  // checks the rest
  return configuration;
}

SyntheticModel SyntheticModel::from(const MeasureConfiguration& request) {
  SyntheticModel model;
  check_dimension(request.batch, "batch", 1);
  check_dimension(request.context, "context", 1);
  check_dimension(request.width, "width", 1);
  if (request.hidden != 0) check_dimension(request.hidden, "hidden", 1);
  check_count(request.warmup, "warmup", 0);
  check_count(request.repeats, "repeats", 1);
  for (const auto& dtype : kDtypes)
    if (request.dtype == dtype.name) model.dtype_bytes = dtype.bytes;
  if (model.dtype_bytes == 0)
    throw UsageError("dtype", "'" + request.dtype + "' is not a supported dtype; expected float32, "
                              "float16 or bfloat16");
  model.dtype = request.dtype;
  model.batch = request.batch;
  model.context = request.context;
  model.width = request.width;
  model.hidden = request.hidden != 0 ? request.hidden : 4 * request.width;
  if (model.hidden > kMaxDimension)
    throw UsageError("width", std::to_string(request.width) + " gives a default hidden size 4 × width "
                              "above " + std::to_string(kMaxDimension) + "; give the hidden size or reduce the width");
  // Linear(width→hidden) weight and bias, Linear(hidden→width) weight and bias.
  const std::int64_t weights = bounded_elements(2, model.width, model.hidden, "model's weights");
  model.parameter_count = weights + model.hidden + model.width;
  model.parameter_bytes = model.parameter_count * model.dtype_bytes;
  model.input_bytes = bounded_elements(model.batch, model.context, model.width, "input") * model.dtype_bytes;
  bounded_elements(model.batch, model.context, model.hidden, "hidden activation");
  return model;
}

}  // namespace iteragpu
