#include "runner/worker_protocol.hpp"

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "protocol/phase_row_json.hpp"
#include "workload/configuration_json.hpp"
#include "mechanics/json_input.hpp"
#include "mechanics/json_output.hpp"

namespace iteragpu::worker_protocol {
namespace {

constexpr const char* kRequestSchema = "iteragpu.worker-request";
constexpr int kRequestSchemaVersion = 2;  // 2: the configuration typed, as in a measurement

std::string text_of(const rapidjson::Value& value) {
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
  value.Accept(writer);
  return std::string(buffer.GetString(), buffer.GetSize());
}

const rapidjson::Value* member(const rapidjson::Value& object, const char* name) {
  if (!object.IsObject()) return nullptr;
  const auto found = object.FindMember(name);
  return found == object.MemberEnd() ? nullptr : &found->value;
}

std::string string_member(const rapidjson::Value& object, const char* name) {
  const rapidjson::Value* value = member(object, name);
  return value && value->IsString() ? std::string(value->GetString(), value->GetStringLength()) : std::string();
}

}  // namespace

std::string record(const std::string& json) {
  // One line per record: JSON strings hold no raw line breaks, so dropping the layout's
  // changes nothing else, and the reader can take a record as soon as its LF arrives.
  std::string text(1, kRecordSeparator);
  for (char c : json)
    if (c != '\n') text += c;
  return text + '\n';
}

std::string request_record(const MeasureConfiguration& configuration, Task task) {
  JsonWriter json(kRequestSchema, kRequestSchemaVersion);
  json.key("task").value(task == Task::kPlan ? "plan" : "measure");
  write_measure_configuration(json, "device", configuration);
  json.key("output").value(configuration.output).key("backend_path").value(configuration.backend_path);
  return record(json.finish());
}

WorkerRequest parse_request(const std::string& text) {
  const std::string source = "measurement worker request";
  rapidjson::Document document;
  const std::string problem = parse_json(text, document);
  if (!problem.empty()) throw DataFileError(source + ": " + problem);
  const JsonObjectReader json(document, source);
  if (json.text("schema") != kRequestSchema) json.fail("schema", std::string("is not \"") + kRequestSchema + "\"");
  if (json.integer("schema_version") != kRequestSchemaVersion)
    json.fail("schema_version", "is not " + std::to_string(kRequestSchemaVersion));
  WorkerRequest parsed;
  const std::string task = json.text("task");
  if (task != "measure" && task != "plan") json.fail("task", "is neither measure nor plan");
  parsed.task = task == "plan" ? Task::kPlan : Task::kMeasure;
  parsed.configuration = read_measure_configuration(json.object("configuration"));
  json.read("output", parsed.configuration.output).read("backend_path", parsed.configuration.backend_path);
  return parsed;
}

std::string progress_record(const PhaseRow& row, int rows_done, int rows_total) {
  return record("{\"progress\":{\"rows_done\":" + std::to_string(rows_done) +
                ",\"rows_total\":" + std::to_string(rows_total) + ",\"row\":" + phase_row_to_json(row) + "}}");
}

std::string plan_record(const std::vector<DeviceTarget>& targets) {
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
  writer.StartObject();
  writer.Key("plan");
  writer.StartArray();
  for (const DeviceTarget& target : targets) {
    writer.StartObject();
    writer.Key("device");
    writer.String(target.device.c_str(), static_cast<rapidjson::SizeType>(target.device.size()));
    writer.Key("index");
    writer.Int(target.index);
    writer.Key("result_file");
    writer.String(target.result_file.c_str(), static_cast<rapidjson::SizeType>(target.result_file.size()));
    writer.EndObject();
  }
  writer.EndArray();
  writer.EndObject();
  return record(std::string(buffer.GetString(), buffer.GetSize()));
}

std::string error_record(const ErrorRecord& error) {
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
  writer.StartObject();
  writer.Key("error");
  writer.StartObject();
  writer.Key("type");
  writer.String(error.type.c_str(), static_cast<rapidjson::SizeType>(error.type.size()));
  writer.Key("field");
  writer.String(error.field.c_str(), static_cast<rapidjson::SizeType>(error.field.size()));
  writer.Key("message");
  writer.String(error.message.c_str(), static_cast<rapidjson::SizeType>(error.message.size()));
  writer.EndObject();
  writer.EndObject();
  return record(std::string(buffer.GetString(), buffer.GetSize()));
}

WorkerMessage parse_worker_message(const std::string& text, const std::string& worker) {
  rapidjson::Document document;
  const std::string problem = parse_json(text, document);
  if (!problem.empty()) throw DataFileError(worker + " sent a record that is " + problem);
  WorkerMessage message;
  if (const rapidjson::Value* progress = member(document, "progress")) {
    const rapidjson::Value* done = member(*progress, "rows_done");
    const rapidjson::Value* total = member(*progress, "rows_total");
    const rapidjson::Value* row = member(*progress, "row");
    if (!done || !done->IsInt() || !total || !total->IsInt() || !row)
      throw DataFileError(worker + " sent a malformed progress record");
    message.kind = WorkerMessage::Kind::kProgress;
    message.rows_done = done->GetInt();
    message.rows_total = total->GetInt();
    message.row = phase_row_from_json(text_of(*row));
    return message;
  }
  if (const rapidjson::Value* plan = member(document, "plan")) {
    if (!plan->IsArray()) throw DataFileError(worker + " sent a malformed plan record");
    message.kind = WorkerMessage::Kind::kPlan;
    for (const rapidjson::Value& target : plan->GetArray()) {
      const rapidjson::Value* index = member(target, "index");
      const std::string device = string_member(target, "device");
      if (!index || !index->IsInt() || device != "cuda:" + std::to_string(index->GetInt()))
        throw DataFileError(worker + " sent a malformed plan record");
      message.targets.push_back({device, index->GetInt(), string_member(target, "result_file")});
    }
    return message;
  }
  if (const rapidjson::Value* error = member(document, "error")) {
    message.kind = WorkerMessage::Kind::kError;
    message.error = {string_member(*error, "type"), string_member(*error, "field"), string_member(*error, "message")};
    if (message.error.type.empty()) throw DataFileError(worker + " sent an error record without a type");
    return message;
  }
  message.kind = WorkerMessage::Kind::kMeasurement;
  message.measurement = Measurement::from_json(text, worker);
  return message;
}

}  // namespace iteragpu::worker_protocol
