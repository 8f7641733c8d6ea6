#pragma once
// The environment report's JSON members, shared by the standalone environment document and
// the `environment` section of a measurement, so both have the same shape.

#include "iteragpu/environment.hpp"
#include "mechanics/json_input.hpp"
#include "mechanics/json_output.hpp"

namespace iteragpu {

inline constexpr const char* kEnvironmentSchema = "iteragpu.environment";
inline constexpr int kEnvironmentSchemaVersion = 1;

// Writes the report's members (without "schema"/"schema_version") into the open object.
void write_environment_members(JsonWriter& json, const EnvironmentReport& report);

// Reads back what write_environment_members wrote (the notes are the writer's own and are
// not kept). DataFileError naming the member for anything else.
EnvironmentReport read_environment_members(const JsonObjectReader& json);

}  // namespace iteragpu
