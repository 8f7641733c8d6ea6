#pragma once
// The options a workload declares for itself, in its own file (its WorkloadKind): the command
// line, Python and the configuration's JSON offer and write them from the declaration, and a
// checked configuration carries their values (WorkloadOptions), so a new workload's options
// reach every face without a field or a flag written for them elsewhere.

#include <cstdint>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace iteragpu {

// The checked values of a configuration's workload options, by the name the command line
// spells, in the order the workload declares them.
class WorkloadOptions {
 public:
  using Value = std::variant<std::int64_t, std::string>;

  // Replaces the value of `name`, or appends it.
  WorkloadOptions& set(const std::string& name, Value value);
  bool has(const std::string& name) const { return find(name) != nullptr; }
  // Null when `name` has no value.
  const Value* find(const std::string& name) const;
  // The value of `name`; std::logic_error when it has none or one of the other type (a
  // checked configuration has every option its workload declares).
  std::int64_t whole_number(const std::string& name) const;
  const std::string& text(const std::string& name) const;
  const std::vector<std::pair<std::string, Value>>& values() const { return values_; }
  // A value as the command line would write it ("16").
  static std::string text_of(const Value& value);

  friend bool operator==(const WorkloadOptions& a, const WorkloadOptions& b) { return a.values_ == b.values_; }
  friend bool operator!=(const WorkloadOptions& a, const WorkloadOptions& b) { return !(a == b); }

 private:
  std::vector<std::pair<std::string, Value>> values_;
};

// One option as a workload declares it.
struct WorkloadOption {
  enum class Type {
    kWholeNumber,
    kText,
    // Given or not: a flag on the command line, a bool in Python and the configuration's JSON,
    // held as the whole number 1 or 0 (check_switch).
    kSwitch,
  };
  const char* name;          // as the command line spells it ("new-tokens"), and UsageError's field
  const char* keyword;       // the Python keyword and the configuration's JSON member ("new_tokens")
  const char* help;          // the --help line, before " (default <default_text>)"
  // The value when left out, as written; "" for an option that asks for its workload (the
  // kind is chosen only when it is given, so it has no default to show).
  const char* default_text;
  Type type;
  // The value `text` gives, or UsageError(name, what is accepted).
  WorkloadOptions::Value (*check)(const std::string& text);
  // Why a configuration that asks for another workload refuses it ("needs --model (...)").
  const char* elsewhere;
  // Whether `iteragpu sweep --vary <name>` may grow it (a whole number whose memory grows with it).
  bool swept = false;
  // Given while another option of the same workload has another value, it is refused with
  // `elsewhere` (LoRA's rank with --train full): {option, value}, or none.
  const char* only_when_option = nullptr;
  const char* only_when_value = nullptr;
};

// The check of a kSwitch option: "1" or "true" give 1, "0" or "false" 0 (the command line and
// Python write "1" or "0"); UsageError(name, what is accepted) otherwise.
WorkloadOptions::Value check_switch(const std::string& name, const std::string& text);

// Every workload's declared options, in the registry's order: what the command line and
// Python offer besides the options every workload shares.
const std::vector<WorkloadOption>& declared_workload_options();

// The option the command line spells `name`; null when no workload declares it.
const WorkloadOption* declared_workload_option(const std::string& name);

}  // namespace iteragpu
