#pragma once
// Validates a JSON document against one of the schemas shipped in data/schema/, so every
// JSON output the tests see is checked against its published contract.

#include <string>

namespace iteragpu::testing {

// Empty when `json_text` parses and is valid against data/schema/<schema_file>;
// otherwise a description of the first problem (parse error or schema violation).
std::string schema_violation(const std::string& json_text, const std::string& schema_file);

}  // namespace iteragpu::testing
