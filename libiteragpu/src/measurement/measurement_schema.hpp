#pragma once
// The schema a measurement file declares (data/schema/measurement.schema.json).

namespace iteragpu {

inline constexpr const char* kMeasurementSchema = "iteragpu.measurement";
inline constexpr int kMeasurementSchemaVersion = 1;

}  // namespace iteragpu
