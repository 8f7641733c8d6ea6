#pragma once
// The text a workload's two sides exchange through the backend: the payload its core side
// writes into WorkloadSpec and its plugin module reads, and the report the module writes and
// the core side reads. Each is one compact JSON object, written and read through the same
// list of fields: a payload's codec names its fields once, in a function template that takes
// either a PayloadWriter or a PayloadReader, so the two sides cannot drift apart.
// Compiled into the core and into every backend plugin; reading never throws, so a malformed
// text from the other side becomes a one-line reason, never an exception across the plugin
// boundary.

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace iteragpu {

class PayloadWriter {
 public:
  PayloadWriter();

  void field(const char* name, const std::string& text);
  void field(const char* name, bool flag);
  void field(const char* name, int number);
  void field(const char* name, std::int64_t number);
  void field(const char* name, std::uint64_t number);
  void field(const char* name, double number);
  void field(const char* name, const std::vector<std::int64_t>& numbers);
  void field(const char* name, const std::optional<std::uint64_t>& number);  // null when absent
  // Arbitrary bytes (raw tensor contents), as hexadecimal text.
  void bytes_field(const char* name, const std::string& bytes);

  // A nested object, its fields written by `fields(writer, value)`.
  template <typename Value, typename Fields>
  void object(const char* name, const Value& value, Fields&& fields) {
    begin_object(name);
    fields(*this, value);
    end_object();
  }
  // An array of objects, each written by `fields(writer, element)`.
  template <typename Value, typename Fields>
  void objects(const char* name, const std::vector<Value>& values, Fields&& fields) {
    begin_array(name);
    for (const Value& value : values) {
      begin_object(nullptr);
      fields(*this, value);
      end_object();
    }
    end_array();
  }

  // The document, once every field is written.
  std::string text();

 private:
  void begin_object(const char* name);  // name null: an array's element
  void end_object();
  void begin_array(const char* name);
  void end_array();

  rapidjson::StringBuffer buffer_;
  rapidjson::Writer<rapidjson::StringBuffer, rapidjson::UTF8<>, rapidjson::UTF8<>, rapidjson::CrtAllocator,
                    rapidjson::kWriteNanAndInfFlag>
      writer_;
};

class PayloadReader {
 public:
  // Parses `text`; problem() says why when it is not one JSON object.
  explicit PayloadReader(const std::string& text);

  void field(const char* name, std::string& text);
  void field(const char* name, bool& flag);
  void field(const char* name, int& number);
  void field(const char* name, std::int64_t& number);
  void field(const char* name, std::uint64_t& number);
  void field(const char* name, double& number);
  void field(const char* name, std::vector<std::int64_t>& numbers);
  void field(const char* name, std::optional<std::uint64_t>& number);
  void bytes_field(const char* name, std::string& bytes);

  template <typename Value, typename Fields>
  void object(const char* name, Value& value, Fields&& fields) {
    if (const rapidjson::Value* found = member(name, &rapidjson::Value::IsObject, "not an object")) {
      PayloadReader nested(*this, *found, path_ + "/" + name);
      fields(nested, value);
    }
  }
  template <typename Value, typename Fields>
  void objects(const char* name, std::vector<Value>& values, Fields&& fields) {
    const rapidjson::Value* found = member(name, &rapidjson::Value::IsArray, "not an array");
    if (!found) return;
    values.clear();
    for (rapidjson::SizeType index = 0; index < found->Size() && problem_->empty(); ++index) {
      const std::string path = path_ + "/" + name + "/" + std::to_string(index);
      if (!(*found)[index].IsObject()) {
        fail_at(path, "not an object");
        return;
      }
      PayloadReader nested(*this, (*found)[index], path);
      values.emplace_back();
      fields(nested, values.back());
    }
  }

  // "" when every field read so far was there and of its type, else the first problem in one
  // line: "at /tensors/3/shape: not an array of integers".
  const std::string& problem() const { return *problem_; }

 private:
  PayloadReader(const PayloadReader& parent, const rapidjson::Value& object, std::string path);
  // The member `name` when it is there and `is` its type; else null and the problem recorded.
  const rapidjson::Value* member(const char* name, bool (rapidjson::Value::*is)() const, const char* expected);
  void fail(const char* name, const std::string& reason);
  void fail_at(const std::string& path, const std::string& reason);

  std::shared_ptr<rapidjson::Document> document_;  // shared with the nested readers
  std::shared_ptr<std::string> problem_;
  const rapidjson::Value* object_;
  std::string path_;
};

// `value` written by its field list: `fields(codec, value)` names each member once, for both
// directions.
template <typename Value, typename Fields>
std::string encode_fields(const Value& value, Fields fields) {
  PayloadWriter writer;
  fields(writer, value);
  return writer.text();
}

// `value` read back by the same field list; the reader's one-line problem, "" when it read.
template <typename Value, typename Fields>
std::string decode_fields(const std::string& text, Value& value, Fields fields) {
  PayloadReader reader(text);
  fields(reader, value);
  return reader.problem();
}

}  // namespace iteragpu
