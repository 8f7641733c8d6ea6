#include "workload/payload_codec.hpp"

#include "mechanics/json_text_guard.hpp"

#include <rapidjson/error/en.h>

#include <utility>

namespace iteragpu {
namespace {

constexpr char kHexDigits[] = "0123456789abcdef";

int hex_value(char digit) {
  if (digit >= '0' && digit <= '9') return digit - '0';
  if (digit >= 'a' && digit <= 'f') return digit - 'a' + 10;
  return -1;
}

}  // namespace

PayloadWriter::PayloadWriter() : writer_(buffer_) { writer_.StartObject(); }

void PayloadWriter::field(const char* name, const std::string& text) {
  writer_.Key(name);
  writer_.String(text.data(), static_cast<rapidjson::SizeType>(text.size()));
}
void PayloadWriter::field(const char* name, bool flag) {
  writer_.Key(name);
  writer_.Bool(flag);
}
void PayloadWriter::field(const char* name, int number) {
  writer_.Key(name);
  writer_.Int(number);
}
void PayloadWriter::field(const char* name, std::int64_t number) {
  writer_.Key(name);
  writer_.Int64(number);
}
void PayloadWriter::field(const char* name, std::uint64_t number) {
  writer_.Key(name);
  writer_.Uint64(number);
}
void PayloadWriter::field(const char* name, double number) {
  writer_.Key(name);
  writer_.Double(number);  // the shortest text that reads back as the same double
}
void PayloadWriter::field(const char* name, const std::vector<std::int64_t>& numbers) {
  writer_.Key(name);
  writer_.StartArray();
  for (const std::int64_t number : numbers) writer_.Int64(number);
  writer_.EndArray();
}
void PayloadWriter::field(const char* name, const std::optional<std::uint64_t>& number) {
  if (number) {
    field(name, *number);
  } else {
    writer_.Key(name);
    writer_.Null();
  }
}
void PayloadWriter::bytes_field(const char* name, const std::string& bytes) {
  std::string hex;
  hex.reserve(bytes.size() * 2);
  for (const char byte : bytes) {
    const auto value = static_cast<unsigned char>(byte);
    hex += kHexDigits[value >> 4];
    hex += kHexDigits[value & 0xf];
  }
  field(name, hex);
}

void PayloadWriter::begin_object(const char* name) {
  if (name) writer_.Key(name);
  writer_.StartObject();
}
void PayloadWriter::end_object() { writer_.EndObject(); }
void PayloadWriter::begin_array(const char* name) {
  writer_.Key(name);
  writer_.StartArray();
}
void PayloadWriter::end_array() { writer_.EndArray(); }

std::string PayloadWriter::text() {
  writer_.EndObject();
  return std::string(buffer_.GetString(), buffer_.GetSize());
}

PayloadReader::PayloadReader(const std::string& text)
    : document_(std::make_shared<rapidjson::Document>()), problem_(std::make_shared<std::string>()) {
  // Iterative: no nesting, however deep, can exhaust the stack. Full precision, NaN and
  // infinities: every double reads back as the one written.
  constexpr unsigned kFlags =
      rapidjson::kParseIterativeFlag | rapidjson::kParseFullPrecisionFlag | rapidjson::kParseNanAndInfFlag;
  *problem_ = json_text_refusal(text);  // what RapidJSON would read with undefined behaviour
  if (!problem_->empty()) {
    document_->SetObject();
  } else if (document_->Parse<kFlags>(text.data(), text.size()).HasParseError()) {
    *problem_ = std::string("not valid JSON (") + rapidjson::GetParseError_En(document_->GetParseError()) +
                " at offset " + std::to_string(document_->GetErrorOffset()) + ")";
  } else if (!document_->IsObject()) {
    *problem_ = "not a JSON object";
  }
  object_ = document_.get();
}

PayloadReader::PayloadReader(const PayloadReader& parent, const rapidjson::Value& object, std::string path)
    : document_(parent.document_), problem_(parent.problem_), object_(&object), path_(std::move(path)) {}

void PayloadReader::fail_at(const std::string& path, const std::string& reason) {
  if (problem_->empty()) *problem_ = "at " + path + ": " + reason;
}

void PayloadReader::fail(const char* name, const std::string& reason) { fail_at(path_ + "/" + name, reason); }

const rapidjson::Value* PayloadReader::member(const char* name, bool (rapidjson::Value::*is)() const,
                                              const char* expected) {
  if (!problem_->empty()) return nullptr;
  const auto found = object_->FindMember(name);
  if (found == object_->MemberEnd()) {
    fail(name, "missing");
    return nullptr;
  }
  if (!(found->value.*is)()) {
    fail(name, expected);
    return nullptr;
  }
  return &found->value;
}

void PayloadReader::field(const char* name, std::string& text) {
  if (const rapidjson::Value* value = member(name, &rapidjson::Value::IsString, "not a string"))
    text.assign(value->GetString(), value->GetStringLength());
}
void PayloadReader::field(const char* name, bool& flag) {
  if (const rapidjson::Value* value = member(name, &rapidjson::Value::IsBool, "not true or false"))
    flag = value->GetBool();
}
void PayloadReader::field(const char* name, int& number) {
  if (const rapidjson::Value* value = member(name, &rapidjson::Value::IsInt, "not an integer of 32 bits"))
    number = value->GetInt();
}
void PayloadReader::field(const char* name, std::int64_t& number) {
  if (const rapidjson::Value* value = member(name, &rapidjson::Value::IsInt64, "not an integer of 64 bits"))
    number = value->GetInt64();
}
void PayloadReader::field(const char* name, std::uint64_t& number) {
  if (const rapidjson::Value* value = member(name, &rapidjson::Value::IsUint64, "not an unsigned integer of 64 bits"))
    number = value->GetUint64();
}
void PayloadReader::field(const char* name, double& number) {
  if (const rapidjson::Value* value = member(name, &rapidjson::Value::IsNumber, "not a number"))
    number = value->GetDouble();
}
void PayloadReader::field(const char* name, std::vector<std::int64_t>& numbers) {
  const rapidjson::Value* value = member(name, &rapidjson::Value::IsArray, "not an array");
  if (!value) return;
  numbers.clear();
  for (const rapidjson::Value& element : value->GetArray()) {
    if (!element.IsInt64()) {
      fail(name, "not an array of integers of 64 bits");
      return;
    }
    numbers.push_back(element.GetInt64());
  }
}
void PayloadReader::field(const char* name, std::optional<std::uint64_t>& number) {
  if (!problem_->empty()) return;
  const auto found = object_->FindMember(name);
  if (found != object_->MemberEnd() && found->value.IsNull()) {
    number.reset();
    return;
  }
  std::uint64_t present = 0;
  field(name, present);
  if (problem_->empty()) number = present;
}
void PayloadReader::bytes_field(const char* name, std::string& bytes) {
  std::string hex;
  field(name, hex);
  if (!problem_->empty()) return;
  if (hex.size() % 2 != 0) return fail(name, "not hexadecimal bytes (an odd number of digits)");
  bytes.clear();
  bytes.reserve(hex.size() / 2);
  for (std::size_t index = 0; index < hex.size(); index += 2) {
    const int high = hex_value(hex[index]), low = hex_value(hex[index + 1]);
    if (high < 0 || low < 0) return fail(name, "not hexadecimal bytes (digits 0-9 and a-f)");
    bytes += static_cast<char>(high * 16 + low);
  }
}

}  // namespace iteragpu
