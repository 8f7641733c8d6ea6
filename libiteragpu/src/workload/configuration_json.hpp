#pragma once
// The configuration section of every document that describes a measurement (a measurement
// file, a multi-device summary, a prediction, a sweep) and of a worker's request: one list
// of members, written and read in measure_configuration.cpp only.

#include "iteragpu/measure_configuration.hpp"
#include "mechanics/json_input.hpp"
#include "mechanics/json_output.hpp"

namespace iteragpu {

// The members after the device, in the order they are written. `visit(name, member)` is
// called for each; a const configuration gives const members.
template <typename Configuration, typename Visit>
void for_each_configuration_member(Configuration& configuration, Visit&& visit) {
  visit("batch", configuration.batch);
  visit("context", configuration.context);
  visit("width", configuration.width);
  visit("hidden", configuration.hidden);
  visit("dtype", configuration.dtype);
  visit("warmup", configuration.warmup);
  visit("repeats", configuration.repeats);
  visit("seed", configuration.seed);
}

// Writes `"configuration": {<device_key>: the device (null when empty), batch, ..., seed}`,
// then the model and the workload's own options at their keywords, as its kind declares them
// (WorkloadKind::options: "model", "new_tokens" for a checkpoint; none for the synthetic MLP).
void write_measure_configuration(JsonWriter& json, const char* device_key,
                                 const MeasureConfiguration& configuration);

// Reads back what write_measure_configuration wrote under "device" (output and backend path
// are not part of it); DataFileError naming a missing or mistyped member. The values are
// checked by the caller (SyntheticModel::from), as for a parsed request.
MeasureConfiguration read_measure_configuration(const JsonObjectReader& json);

}  // namespace iteragpu
