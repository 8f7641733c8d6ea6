#include "mechanics/json_output.hpp"

#include <charconv>
#include <cmath>

namespace iteragpu {

JsonWriter::JsonWriter(const char* schema, int schema_version) : writer_(buffer_) {
  writer_.SetIndent(' ', 2);
  writer_.StartObject();
  key("schema").value(schema);
  key("schema_version").value(schema_version);
}

JsonWriter& JsonWriter::key(const char* name) {
  writer_.Key(name);
  return *this;
}
JsonWriter& JsonWriter::begin_object() {
  writer_.StartObject();
  return *this;
}
JsonWriter& JsonWriter::end_object() {
  writer_.EndObject();
  return *this;
}
JsonWriter& JsonWriter::begin_array() {
  writer_.StartArray();
  return *this;
}
JsonWriter& JsonWriter::end_array() {
  writer_.EndArray();
  return *this;
}
JsonWriter& JsonWriter::value(const std::string& text) {
  writer_.String(text.data(), static_cast<rapidjson::SizeType>(text.size()));
  return *this;
}
JsonWriter& JsonWriter::value(const char* text) { return value(std::string(text)); }
JsonWriter& JsonWriter::value(const ExactDecimal& number) { return value(number.str()); }
JsonWriter& JsonWriter::value(bool flag) {
  writer_.Bool(flag);
  return *this;
}
JsonWriter& JsonWriter::value(int number) {
  writer_.Int(number);
  return *this;
}
JsonWriter& JsonWriter::value(std::int64_t number) {
  writer_.Int64(number);
  return *this;
}
JsonWriter& JsonWriter::value(std::uint64_t number) {
  writer_.Uint64(number);
  return *this;
}
JsonWriter& JsonWriter::value(double number) {
  // JSON has no NaN or infinity; RapidJSON would refuse it after the key was written.
  if (!std::isfinite(number)) return null();
  // RapidJSON writes 1e18 <= |x| < 1e21 as all its digits and ".0" ("100000000000000000000.0"):
  // 20 significant digits or more, beyond what the bounded readers take (json_input.cpp).
  // Those are written in the shortest exponent form ("1e20"), which reads back as the same
  // double; every other number as RapidJSON writes it.
  const double magnitude = std::fabs(number);
  if (magnitude >= 1e18 && magnitude < 1e21) {
    char text[40];
    const std::to_chars_result end = std::to_chars(text, text + sizeof text, number, std::chars_format::scientific);
    std::string token(text, end.ptr);
    const std::size_t plus = token.find("e+");
    if (plus != std::string::npos) token.erase(plus + 1, 1);
    writer_.RawValue(token.data(), token.size(), rapidjson::kNumberType);
    return *this;
  }
  writer_.Double(number);
  return *this;
}
JsonWriter& JsonWriter::null() {
  writer_.Null();
  return *this;
}
JsonWriter& JsonWriter::text_or_null(const std::string& text) { return text.empty() ? null() : value(text); }
JsonWriter& JsonWriter::value(const std::vector<std::string>& texts) {
  begin_array();
  for (const auto& text : texts) value(text);
  return end_array();
}

std::string JsonWriter::finish() {
  writer_.EndObject();
  return std::string(buffer_.GetString(), buffer_.GetSize()) + "\n";
}

std::string JsonWriter::finish_on_one_line() {
  // Strings escape their line breaks, so every raw line break is layout: dropping it with the
  // indentation after it leaves the same document.
  const std::string pretty = finish();
  std::string line;
  line.reserve(pretty.size());
  for (std::size_t i = 0; i < pretty.size(); ++i) {
    if (pretty[i] != '\n') {
      line += pretty[i];
      continue;
    }
    while (i + 1 < pretty.size() && pretty[i + 1] == ' ') ++i;
  }
  return line + "\n";
}

}  // namespace iteragpu
