#pragma once
// How every JSON document the core reads is parsed (measurements, kit manifests, the
// multi-device children's results, checkpoint headers) and checked against a shipped schema.
// Nesting is bounded before parsing, so neither RapidJSON's parser nor anything that walks
// the document afterwards (schema validation, Accept) can exhaust the stack; the parse itself
// is RapidJSON's iterative one, and strings must be valid UTF-8.

#include <rapidjson/document.h>

#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "mechanics/json_text_guard.hpp"

namespace iteragpu {


// Parses `text` into `document`. Returns "" on success, else the reason in a few words:
// "not valid JSON (Invalid value. at offset 3)", "nested more than 64 levels deep".
// Numbers are read at full precision, so every double JsonWriter writes (the shortest text
// that rounds back to it) reads back as the same double.
std::string parse_json(const std::string& text, rapidjson::Document& document);

// "" when `value` (a whole document or a section of one) is valid against
// data/schema/<schema_file> (the shipped schema), else where and why it is not
// ("at /phases/0 (keyword required)").
std::string schema_violation_of(const rapidjson::Value& value, const std::string& schema_file);

// Parses `text` as a document of one of iteragpu's schemas: JSON, a "schema" member equal to
// `schema`, valid against data/schema/<schema_file>. Returns "" or the reason: "not valid
// JSON (...)", "its \"schema\" is 'iteragpu.measurement-summary', not
// \"iteragpu.measurement\"", "invalid at /phases (keyword minItems)".
std::string parse_schema_document(const std::string& text, const std::string& schema,
                                  const std::string& schema_file, rapidjson::Document& document);

// Typed reading of one JSON object, for the readers that turn a document back into the
// library's values. A schema cannot say everything and a reader must not trust one to, so
// every access is checked: a member missing or of another type is a DataFileError
// "SOURCE: at /environment/gpus/0/name: missing" (one line).
class JsonObjectReader {
 public:
  // `path` is the object's JSON pointer in the document ("" for the root).
  JsonObjectReader(const rapidjson::Value& object, std::string source, std::string path = "");

  bool has(const char* name) const;
  bool is_null(const char* name) const;  // present and null
  std::string text(const char* name) const;
  std::optional<std::string> text_or_null(const char* name) const;
  bool flag(const char* name) const;
  int integer(const char* name) const;
  std::int64_t int64(const char* name) const;
  std::uint64_t uint64(const char* name) const;
  std::optional<std::uint64_t> uint64_or_null(const char* name) const;
  double number(const char* name) const;
  std::optional<double> number_or_null(const char* name) const;
  std::vector<std::string> texts(const char* name) const;
  std::vector<std::int64_t> int64s(const char* name) const;
  JsonObjectReader object(const char* name) const;
  std::vector<JsonObjectReader> objects(const char* name) const;  // an array of objects

  // The member into `into`, read as its type asks (text, flag, integer, int64, uint64,
  // number, texts). Returns *this, so a section's fields read as one chain, in its order:
  // json.read("min", spread.min).read("max", spread.max).
  template <typename T>
  const JsonObjectReader& read(const char* name, T& into) const {
    if constexpr (std::is_same_v<T, std::string>) {
      into = text(name);
    } else if constexpr (std::is_same_v<T, bool>) {
      into = flag(name);
    } else if constexpr (std::is_same_v<T, int>) {
      into = integer(name);
    } else if constexpr (std::is_same_v<T, std::int64_t>) {
      into = int64(name);
    } else if constexpr (std::is_same_v<T, std::uint64_t>) {
      into = uint64(name);
    } else if constexpr (std::is_same_v<T, double>) {
      into = number(name);
    } else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
      into = texts(name);
    } else {
      static_assert(!std::is_same_v<T, T>, "no JSON reading for this type");
    }
    return *this;
  }

  // Throws the DataFileError for `name` (empty: the object itself).
  [[noreturn]] void fail(const std::string& name, const std::string& reason) const;
  const std::string& source() const { return source_; }

 private:
  const rapidjson::Value& member(const char* name) const;
  const rapidjson::Value* object_;
  std::string source_;
  std::string path_;
};

}  // namespace iteragpu
