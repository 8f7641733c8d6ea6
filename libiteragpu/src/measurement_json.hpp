#pragma once
// The "configuration" object shared by a measurement file and a multi-device summary.

#include "iteragpu/phase_measurer.hpp"
#include "json_output.hpp"

namespace iteragpu {

// Writes `"configuration": {<device_key>: request.device, batch, ..., seed}`.
inline void write_measure_configuration(JsonWriter& json, const char* device_key,
                                        const MeasureRequest& request, const SyntheticModel& model) {
  json.key("configuration").begin_object()
      .key(device_key).value(request.device)
      .key("batch").value(model.batch)
      .key("context").value(model.context)
      .key("width").value(model.width)
      .key("hidden").value(model.hidden)
      .key("dtype").value(model.dtype)
      .key("warmup").value(request.warmup)
      .key("repeats").value(request.repeats)
      .key("seed").value(request.seed)
      .end_object();
}

}  // namespace iteragpu
