#include "schema_check.hpp"

#include <rapidjson/document.h>
#include <rapidjson/error/en.h>
#include <rapidjson/schema.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "process_runner.hpp"

namespace iteragpu::testing {

std::string schema_violation(const std::string& json_text, const std::string& schema_file) {
  rapidjson::Document schema_json;
  const std::string schema_text = read_file(std::string(ITERAGPU_DATA_DIR) + "/schema/" + schema_file);
  if (schema_json.Parse(schema_text.c_str()).HasParseError())
    return "schema " + schema_file + " does not parse: " +
           rapidjson::GetParseError_En(schema_json.GetParseError());
  rapidjson::SchemaDocument schema(schema_json);

  rapidjson::Document document;
  if (document.Parse(json_text.c_str()).HasParseError())
    return std::string("output is not JSON: ") + rapidjson::GetParseError_En(document.GetParseError()) +
           " at offset " + std::to_string(document.GetErrorOffset());
  rapidjson::SchemaValidator validator(schema);
  if (document.Accept(validator)) return "";
  rapidjson::StringBuffer where, keyword_path;
  validator.GetInvalidDocumentPointer().StringifyUriFragment(where);
  validator.GetInvalidSchemaPointer().StringifyUriFragment(keyword_path);
  return std::string("invalid at ") + where.GetString() + " (schema " + keyword_path.GetString() +
         ", keyword " + validator.GetInvalidSchemaKeyword() + ")";
}

}  // namespace iteragpu::testing
