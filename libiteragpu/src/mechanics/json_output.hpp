#pragma once
// One JSON writer for every report, so all outputs share indentation, the schema header and
// the rule that exact values are written as strings.

#include <rapidjson/prettywriter.h>
#include <rapidjson/stringbuffer.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "iteragpu/exact_decimal.hpp"

namespace iteragpu {

class JsonWriter {
 public:
  // Opens the top-level object and writes "schema" and "schema_version".
  JsonWriter(const char* schema, int schema_version);

  JsonWriter& key(const char* name);
  JsonWriter& begin_object();
  JsonWriter& end_object();
  JsonWriter& begin_array();
  JsonWriter& end_array();
  JsonWriter& value(const std::string& text);
  JsonWriter& value(const char* text);
  JsonWriter& value(const ExactDecimal& number);  // exact: written as a string
  JsonWriter& value(bool flag);
  JsonWriter& value(int number);
  JsonWriter& value(std::int64_t number);
  JsonWriter& value(std::uint64_t number);
  JsonWriter& value(double number);
  JsonWriter& null();
  // The text, or null when it is empty (a path, an error or a name that is not there).
  JsonWriter& text_or_null(const std::string& text);
  template <typename T>
  JsonWriter& value(const std::optional<T>& maybe) {
    return maybe ? value(*maybe) : null();
  }
  JsonWriter& value(const std::vector<std::string>& texts);

  // Closes the top-level object; the document ends with a newline.
  std::string finish();
  // The same document on a single line (ending with a newline), for line-delimited streams.
  std::string finish_on_one_line();

 private:
  rapidjson::StringBuffer buffer_;
  rapidjson::PrettyWriter<rapidjson::StringBuffer> writer_;
};

}  // namespace iteragpu
