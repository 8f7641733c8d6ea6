#include "mechanics/json_input.hpp"
#include "mechanics/json_text_guard.hpp"

#include <rapidjson/error/en.h>
#include <rapidjson/schema.h>
#include <rapidjson/stringbuffer.h>

#include <map>
#include <memory>
#include <mutex>
#include <set>

#include "mechanics/input_file.hpp"
#include "iteragpu/error.hpp"
#include "mechanics/quantity_parser.hpp"
#include "mechanics/installation.hpp"

namespace iteragpu {
namespace {

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

// Where `value` holds a number RapidJSON 1.1.0's schema validator cannot hash without
// undefined behaviour (it casts every double to a 64-bit integer, schema.h Hasher::Double):
// below -2^63 or from 2^64 up. No iteragpu document holds one. Found by the measurement
// fuzzer ({"schema": 33333333333333333333333333}).
std::string unhashable_number_at(const rapidjson::Value& value, const std::string& where) {
  if (value.IsDouble()) {
    const double number = value.GetDouble();
    if (!(number >= -9223372036854775808.0 && number < 18446744073709551616.0))
      return where.empty() ? "/" : where;
  } else if (value.IsArray()) {
    for (rapidjson::SizeType i = 0; i < value.Size(); ++i) {
      std::string found = unhashable_number_at(value[i], where + "/" + std::to_string(i));
      if (!found.empty()) return found;
    }
  } else if (value.IsObject()) {
    for (const auto& member : value.GetObject()) {
      std::string found = unhashable_number_at(
          member.value, where + "/" + std::string(member.name.GetString(), member.name.GetStringLength()));
      if (!found.empty()) return found;
    }
  }
  return "";
}

}  // namespace

namespace {

// A member name as a JSON Pointer token (RFC 6901): "~" is written "~0", "/" is written "~1".
std::string json_pointer_token(const std::string& name) {
  std::string token;
  for (char c : name) {
    if (c == '~') {
      token += "~0";
    } else if (c == '/') {
      token += "~1";
    } else {
      token += c;
    }
  }
  return token;
}

// The JSON Pointer of the first object member whose name appears twice in its object, or ""
// when every name is unique. Two readers of a document with a duplicate disagree on its
// value (RapidJSON's FindMember takes the first, Python's json the last): it is refused.
std::string duplicate_member_at(const rapidjson::Value& value, const std::string& where) {
  if (value.IsArray()) {
    for (rapidjson::SizeType i = 0; i < value.Size(); ++i) {
      std::string found = duplicate_member_at(value[i], where + "/" + std::to_string(i));
      if (!found.empty()) return found;
    }
  } else if (value.IsObject()) {
    std::set<std::string> names;
    for (const auto& member : value.GetObject()) {
      std::string name(member.name.GetString(), member.name.GetStringLength());
      const std::string path = where + "/" + json_pointer_token(name);
      if (!names.insert(std::move(name)).second) return path;
      std::string found = duplicate_member_at(member.value, path);
      if (!found.empty()) return found;
    }
  }
  return "";
}

}  // namespace

std::string parse_json(const std::string& text, rapidjson::Document& document) {
  const std::string refused = json_text_refusal(text);
  if (!refused.empty()) return refused;
  // Strings must be valid UTF-8: what iteragpu writes always is, and RapidJSON 1.1.0 reads
  // past the end of an invalid sequence when it later names the member in a message (found
  // by the measurement fuzzer: a key ending in a truncated multi-byte character).
  document.Parse<rapidjson::kParseIterativeFlag | rapidjson::kParseValidateEncodingFlag |
                 rapidjson::kParseFullPrecisionFlag>(text.c_str(), text.size());
  if (document.HasParseError())
    return std::string("not valid JSON (") + rapidjson::GetParseError_En(document.GetParseError()) +
           " at offset " + std::to_string(document.GetErrorOffset()) + ")";
  const std::string duplicate = duplicate_member_at(document, "");
  if (!duplicate.empty())
    return "ambiguous JSON: the member " + quoted_for_message(duplicate, 200) +
           " is named twice in its object, and JSON readers disagree on which value counts";
  return "";
}

std::string schema_violation_of(const rapidjson::Value& value, const std::string& schema_file) {
  const std::string huge = unhashable_number_at(value, "");
  if (!huge.empty()) return "at " + huge + " (a number beyond the 64-bit integer range)";
  rapidjson::SchemaValidator validator(shipped_schema(schema_file));
  if (value.Accept(validator)) return "";
  rapidjson::StringBuffer where;
  validator.GetInvalidDocumentPointer().StringifyUriFragment(where);
  std::string at = where.GetString();
  if (at.size() > 1 && at[0] == '#') at.erase(0, 1);
  return "at " + (at.empty() ? std::string("/") : at) + " (keyword " +
         validator.GetInvalidSchemaKeyword() + ")";
}

std::string parse_schema_document(const std::string& text, const std::string& schema,
                                  const std::string& schema_file, rapidjson::Document& document) {
  const std::string problem = parse_json(text, document);
  if (!problem.empty()) return problem;
  if (!document.IsObject() || !document.HasMember("schema") || !document["schema"].IsString())
    return "it has no \"schema\" member; expected \"" + schema + "\"";
  const std::string actual(document["schema"].GetString(), document["schema"].GetStringLength());
  if (actual != schema)
    return "its \"schema\" is " + quoted_for_message(actual) + ", not \"" + schema + "\"";
  const std::string violation = schema_violation_of(document, schema_file);
  return violation.empty() ? "" : "invalid " + violation;
}

JsonObjectReader::JsonObjectReader(const rapidjson::Value& object, std::string source, std::string path)
    : object_(&object), source_(std::move(source)), path_(std::move(path)) {
  if (!object.IsObject()) fail("", "not an object");
}

void JsonObjectReader::fail(const std::string& name, const std::string& reason) const {
  const std::string where = name.empty() ? path_ : path_ + "/" + name;
  throw DataFileError(source_ + ": at " + (where.empty() ? "/" : where) + ": " + reason);
}

const rapidjson::Value& JsonObjectReader::member(const char* name) const {
  const auto found = object_->FindMember(name);
  if (found == object_->MemberEnd()) fail(name, "missing");
  return found->value;
}

bool JsonObjectReader::has(const char* name) const { return object_->HasMember(name); }

bool JsonObjectReader::is_null(const char* name) const { return member(name).IsNull(); }

std::string JsonObjectReader::text(const char* name) const {
  const rapidjson::Value& value = member(name);
  if (!value.IsString()) fail(name, "not a string");
  return std::string(value.GetString(), value.GetStringLength());
}

std::optional<std::string> JsonObjectReader::text_or_null(const char* name) const {
  if (is_null(name)) return std::nullopt;
  return text(name);
}

bool JsonObjectReader::flag(const char* name) const {
  const rapidjson::Value& value = member(name);
  if (!value.IsBool()) fail(name, "not true or false");
  return value.GetBool();
}

int JsonObjectReader::integer(const char* name) const {
  const rapidjson::Value& value = member(name);
  if (!value.IsInt()) fail(name, "not an integer within ±2^31");
  return value.GetInt();
}

std::int64_t JsonObjectReader::int64(const char* name) const {
  const rapidjson::Value& value = member(name);
  if (!value.IsInt64()) fail(name, "not an integer within ±2^63");
  return value.GetInt64();
}

std::uint64_t JsonObjectReader::uint64(const char* name) const {
  const rapidjson::Value& value = member(name);
  if (!value.IsUint64()) fail(name, "not an integer from 0 to 2^64 - 1");
  return value.GetUint64();
}

std::optional<std::uint64_t> JsonObjectReader::uint64_or_null(const char* name) const {
  if (is_null(name)) return std::nullopt;
  return uint64(name);
}

double JsonObjectReader::number(const char* name) const {
  const rapidjson::Value& value = member(name);
  if (!value.IsNumber()) fail(name, "not a number");
  return value.GetDouble();
}

std::optional<double> JsonObjectReader::number_or_null(const char* name) const {
  if (is_null(name)) return std::nullopt;
  return number(name);
}

std::vector<std::string> JsonObjectReader::texts(const char* name) const {
  const rapidjson::Value& value = member(name);
  if (!value.IsArray()) fail(name, "not an array");
  std::vector<std::string> texts;
  for (const rapidjson::Value& item : value.GetArray()) {
    if (!item.IsString()) fail(name, "not an array of strings");
    texts.emplace_back(item.GetString(), item.GetStringLength());
  }
  return texts;
}

std::vector<std::int64_t> JsonObjectReader::int64s(const char* name) const {
  const rapidjson::Value& value = member(name);
  if (!value.IsArray()) fail(name, "not an array");
  std::vector<std::int64_t> numbers;
  for (const rapidjson::Value& item : value.GetArray()) {
    if (!item.IsInt64()) fail(name, "not an array of integers");
    numbers.push_back(item.GetInt64());
  }
  return numbers;
}

JsonObjectReader JsonObjectReader::object(const char* name) const {
  return JsonObjectReader(member(name), source_, path_ + "/" + name);
}

std::vector<JsonObjectReader> JsonObjectReader::objects(const char* name) const {
  const rapidjson::Value& value = member(name);
  if (!value.IsArray()) fail(name, "not an array");
  std::vector<JsonObjectReader> objects;
  for (rapidjson::SizeType index = 0; index < value.Size(); ++index)
    objects.emplace_back(value[index], source_, path_ + "/" + name + "/" + std::to_string(index));
  return objects;
}

}  // namespace iteragpu
