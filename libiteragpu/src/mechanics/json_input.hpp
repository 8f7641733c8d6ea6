#pragma once
// How every JSON document the core reads is parsed (measurements, kit manifests, the
// multi-device children's results, checkpoint headers) and checked against a shipped schema.
// Nesting is bounded before parsing, so neither RapidJSON's parser nor anything that walks
// the document afterwards (schema validation, Accept) can exhaust the stack; the parse itself
// is RapidJSON's iterative one, and strings must be valid UTF-8.

#include <rapidjson/document.h>

#include <string>

namespace iteragpu {

// Deeper than any document iteragpu writes (a measurement is 5 levels deep).
inline constexpr int kMaxJsonDepth = 64;

// Parses `text` into `document`. Returns "" on success, else the reason in a few words:
// "not valid JSON (Invalid value. at offset 3)", "nested more than 64 levels deep".
std::string parse_json(const std::string& text, rapidjson::Document& document);

// "" when `document` is valid against data/schema/<schema_file> (the shipped schema), else
// where and why it is not ("at /phases/0 (keyword required)").
std::string schema_violation_of(const rapidjson::Document& document, const std::string& schema_file);

}  // namespace iteragpu
