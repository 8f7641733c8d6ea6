#pragma once
// The model options `measure` and `predict` share, and the one place where they become a
// MeasureRequest.

#include "command_support.hpp"
#include "iteragpu/measure_configuration.hpp"

namespace iteragpu::cli {

// --batch, --context, --width, --hidden, --dtype, --warmup, --repeats, --seed.
void add_model_options(po::options_description& options);
// --backend.
void add_backend_option(po::options_description& options);

// Absent options keep MeasureRequest's defaults; values stay text as written (the core
// parses them and names the option). --output is required where `output_required`.
MeasureRequest measure_request_from(const po::variables_map& values, bool output_required);

}  // namespace iteragpu::cli
