#include "mechanics/json_input.hpp"

#include <rapidjson/error/en.h>
#include <rapidjson/schema.h>
#include <rapidjson/stringbuffer.h>

#include <map>
#include <memory>
#include <mutex>

#include "mechanics/input_file.hpp"
#include "iteragpu/error.hpp"
#include "mechanics/shipped_data.hpp"

namespace iteragpu {
namespace {

// The deepest nesting of arrays and objects in `text`, counting brackets outside strings;
// stops early once past `limit`.
int nesting_depth(const std::string& text, int limit) {
  int depth = 0, deepest = 0;
  bool in_string = false, escaped = false;
  for (char c : text) {
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > deepest && (deepest = depth) > limit) return deepest;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return deepest;
}

// Shipped schemas, parsed once per process.
const rapidjson::SchemaDocument& shipped_schema(const std::string& schema_file) {
  static std::mutex mutex;
  static std::map<std::string, std::pair<std::unique_ptr<rapidjson::Document>,
                                         std::unique_ptr<rapidjson::SchemaDocument>>> schemas;
  std::lock_guard<std::mutex> lock(mutex);
  auto found = schemas.find(schema_file);
  if (found == schemas.end()) {
    const std::string path = shipped_data_path("schema/" + schema_file, "JSON schema " + schema_file);
    auto json = std::make_unique<rapidjson::Document>();
    const std::string problem = parse_json(read_input_file(path, "JSON schema", kMaxJsonDocumentBytes), *json);
    if (!problem.empty()) throw DataFileError(path + ": " + problem);
    auto schema = std::make_unique<rapidjson::SchemaDocument>(*json);
    found = schemas.emplace(schema_file, std::make_pair(std::move(json), std::move(schema))).first;
  }
  return *found->second.second;
}

}  // namespace

std::string parse_json(const std::string& text, rapidjson::Document& document) {
  if (nesting_depth(text, kMaxJsonDepth) > kMaxJsonDepth)
    return "nested more than " + std::to_string(kMaxJsonDepth) + " levels deep";
  // Strings must be valid UTF-8: what iteragpu writes always is, and RapidJSON 1.1.0 reads
  // past the end of an invalid sequence when it later names the member in a message (found
  // by the measurement fuzzer: a key ending in a truncated multi-byte character).
  document.Parse<rapidjson::kParseIterativeFlag | rapidjson::kParseValidateEncodingFlag |
                 rapidjson::kParseFullPrecisionFlag>(text.c_str(), text.size());
  if (document.HasParseError())
    return std::string("not valid JSON (") + rapidjson::GetParseError_En(document.GetParseError()) +
           " at offset " + std::to_string(document.GetErrorOffset()) + ")";
  return "";
}

std::string schema_violation_of(const rapidjson::Document& document, const std::string& schema_file) {
  rapidjson::SchemaValidator validator(shipped_schema(schema_file));
  if (document.Accept(validator)) return "";
  rapidjson::StringBuffer where;
  validator.GetInvalidDocumentPointer().StringifyUriFragment(where);
  std::string at = where.GetString();
  if (at.size() > 1 && at[0] == '#') at.erase(0, 1);
  return "at " + (at.empty() ? std::string("/") : at) + " (keyword " +
         validator.GetInvalidSchemaKeyword() + ")";
}

}  // namespace iteragpu
