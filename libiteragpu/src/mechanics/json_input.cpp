#include "mechanics/json_input.hpp"

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

// Whether a number token would reach RapidJSON 1.1.0's full-precision strtod with a zero
// significand, which it normalises with undefined behaviour (DiyFp::Normalize of zero; found
// by the checkpoint header fuzzer on 0.000…0): a zero written with an exponent or with more
// than 22 fractional digits. iteragpu writes zero as 0 or 0.0.
bool zero_beyond_fast_path(const std::string& token) {
  // The number as RapidJSON reads it: -? digits (. digits)? ([eE] ...)?
  std::size_t i = token.size() > 0 && token[0] == '-' ? 1 : 0;
  std::size_t fraction_digits = 0;
  for (; i < token.size() && token[i] >= '0' && token[i] <= '9'; ++i)
    if (token[i] != '0') return false;
  if (i < token.size() && token[i] == '.')
    for (++i; i < token.size() && token[i] >= '0' && token[i] <= '9'; ++i) {
      if (token[i] != '0') return false;
      ++fraction_digits;
    }
  const bool exponent = i < token.size() && (token[i] == 'e' || token[i] == 'E');
  return exponent || fraction_digits > 22;
}

// Whether a fraction or exponent number token has more than 19 significant digits: its
// significand no longer fits RapidJSON 1.1.0's 64-bit fast path and reaches the same
// full-precision strtod, which normalised a zero there with undefined behaviour (found by the
// checkpoint header fuzzer on 0.0000000000000184467440737095516159999). iteragpu writes at
// most 17 significant digits. An integer keeps to RapidJSON's 64-bit integer path up to 20
// digits (2^64 - 1 has 20); a longer one is read as a double by the same strtod, where
// 18446744073709551615 followed by a digit from 5 up rounds the significand over to zero
// (found by the checkpoint config fuzzer on 18446744073709551615551615). iteragpu writes no
// integer beyond 2^64 - 1.
bool significand_beyond_fast_path(const std::string& token) {
  const bool integer = token.find_first_of(".eE") == std::string::npos;
  std::size_t significant = 0;
  bool leading = true;
  for (char c : token) {
    if (c == 'e' || c == 'E') break;
    if (c < '0' || c > '9') continue;
    if (leading && c == '0') continue;
    leading = false;
    ++significant;
  }
  return significant > (integer ? 20 : 19);
}

// Offset of the first number token that is longer than `limit` characters or a zero or a
// significand beyond the fast path, or npos. Long runs of digits also take RapidJSON's full-precision paths;
// iteragpu writes no number longer than 25 characters.
std::size_t unsafe_number_offset(const std::string& text, std::size_t limit) {
  bool in_string = false, escaped = false;
  std::size_t start = std::string::npos;
  for (std::size_t i = 0; i <= text.size(); ++i) {
    const char c = i < text.size() ? text[i] : ' ';
    if (in_string) {
      if (escaped) escaped = false;
      else if (c == '\\') escaped = true;
      else if (c == '"') in_string = false;
      continue;
    }
    const bool number_char = (c >= '0' && c <= '9') || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-';
    // A number starts with a digit or a minus sign ("true" and "false" hold an e).
    const bool starts_number = (c >= '0' && c <= '9') || c == '-';
    if (start != std::string::npos ? number_char : starts_number) {
      if (start == std::string::npos) start = i;
      continue;
    }
    if (start != std::string::npos) {
      const std::string token = text.substr(start, i - start);
      if (token.size() > limit || zero_beyond_fast_path(token) || significand_beyond_fast_path(token))
        return start;
      start = std::string::npos;
    }
    if (c == '"') in_string = true;
  }
  return std::string::npos;
}

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
  if (nesting_depth(text, kMaxJsonDepth) > kMaxJsonDepth)
    return "nested more than " + std::to_string(kMaxJsonDepth) + " levels deep";
  const std::size_t unsafe_number = unsafe_number_offset(text, kMaxJsonNumberLength);
  if (unsafe_number != std::string::npos)
    return "a number at offset " + std::to_string(unsafe_number) + " that is longer than " +
           std::to_string(kMaxJsonNumberLength) + " characters or a zero with an exponent (iteragpu "
           "writes neither)";
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
