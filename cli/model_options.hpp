#pragma once
// The model options `measure`, `predict` and `sweep` share, and the one place where they
// become a MeasureConfiguration.

#include "command_support.hpp"
#include "iteragpu/measure_configuration.hpp"
#include "iteragpu/model_origin.hpp"

namespace iteragpu::cli {

// --batch, --context, --width, --hidden, --dtype, --warmup, --repeats, --seed.
void add_model_options(po::options_description& options);
// --model (a checkpoint folder instead of the synthetic MLP), then every workload's own
// options as it declares them (--new-tokens), then the Hub's (add_hub_options).
void add_checkpoint_options(po::options_description& options);
// --timeout, --verbose: how a Hub id is read (with --model, or estimate --checkpoint).
void add_hub_options(po::options_description& options);
// --verbose's line on stderr: where the model was read from, and over HTTP what it took.
void print_model_origin(const ModelOrigin& origin);
// --backend.
void add_backend_option(po::options_description& options);

// Absent options keep MeasureRequest's defaults; the text as written is parsed by
// MeasureConfiguration::parse (UsageError naming the option). --output is required where
// `output_required`.
MeasureConfiguration measure_configuration_from(const po::variables_map& values, bool output_required);

}  // namespace iteragpu::cli
