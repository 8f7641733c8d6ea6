// The options workloads declare for themselves (WorkloadKind::options): their values in a
// configuration, the declarations the command line and Python offer, and the refusal of an
// option the configuration's workload does not have.

#include "iteragpu/workload_options.hpp"

#include <stdexcept>

#include "iteragpu/error.hpp"
#include "iteragpu/printable_text.hpp"
#include "workload/workload.hpp"

namespace iteragpu {

WorkloadOptions& WorkloadOptions::set(const std::string& name, Value value) {
  for (auto& [existing, held] : values_)
    if (existing == name) {
      held = std::move(value);
      return *this;
    }
  values_.emplace_back(name, std::move(value));
  return *this;
}

const WorkloadOptions::Value* WorkloadOptions::find(const std::string& name) const {
  for (const auto& [existing, value] : values_)
    if (existing == name) return &value;
  return nullptr;
}

std::int64_t WorkloadOptions::whole_number(const std::string& name) const {
  const Value* value = find(name);
  if (!value || !std::holds_alternative<std::int64_t>(*value))
    throw std::logic_error("workload option " + name + ": no whole number (an unchecked configuration?)");
  return std::get<std::int64_t>(*value);
}

const std::string& WorkloadOptions::text(const std::string& name) const {
  const Value* value = find(name);
  if (!value || !std::holds_alternative<std::string>(*value))
    throw std::logic_error("workload option " + name + ": no text (an unchecked configuration?)");
  return std::get<std::string>(*value);
}

std::string WorkloadOptions::text_of(const Value& value) {
  if (const auto* number = std::get_if<std::int64_t>(&value)) return std::to_string(*number);
  return std::get<std::string>(value);
}

WorkloadOptions::Value check_switch(const std::string& name, const std::string& text) {
  if (text == "1" || text == "true") return std::int64_t{1};
  if (text == "0" || text == "false") return std::int64_t{0};
  throw UsageError(name, "'" + printable(text) + "' is not on or off; accepted: the flag alone (on), or in Python "
                         "and JSON true or false");
}

const std::vector<WorkloadOption>& declared_workload_options() {
  static const std::vector<WorkloadOption> options = [] {
    std::vector<WorkloadOption> all;
    for (const WorkloadKind& kind : workload_kinds()) all.insert(all.end(), kind.options.begin(), kind.options.end());
    return all;
  }();
  return options;
}

const WorkloadOption* declared_workload_option(const std::string& name) {
  for (const WorkloadOption& option : declared_workload_options())
    if (name == option.name) return &option;
  return nullptr;
}

namespace {

bool declares(const WorkloadKind& kind, const std::string& name) {
  for (const WorkloadOption& option : kind.options)
    if (name == option.name) return true;
  return false;
}

}  // namespace

void require_declared_by(const WorkloadKind& kind, const std::string& name) {
  if (declares(kind, name)) return;
  if (const WorkloadOption* option = declared_workload_option(name)) throw UsageError(name, option->elsewhere);
  throw UsageError(name, "is not an option of any workload");
}

WorkloadOptions completed_options(const WorkloadKind& kind, const WorkloadOptions& given) {
  for (const auto& value : given.values()) require_declared_by(kind, value.first);
  WorkloadOptions options;
  for (const WorkloadOption& option : kind.options) {
    const WorkloadOptions::Value* value = given.find(option.name);
    options.set(option.name, value ? *value : option.check(option.default_text));
  }
  return options;
}

}  // namespace iteragpu
