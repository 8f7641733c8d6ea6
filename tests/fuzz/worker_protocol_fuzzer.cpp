// What a measurement worker reads (its request record) and what the runner reads from a
// worker (progress, error and measurement records), as the runner splits them off a pipe.
#include <string>

#include "iteragpu/error.hpp"
#include "runner/worker_protocol.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  using namespace iteragpu;
  try {
    const worker_protocol::WorkerRequest parsed = worker_protocol::parse_request(text);
    // A request that parses is written back as a record that parses to the same request.
    std::string record = worker_protocol::request_record(parsed.configuration, parsed.task);
    record = record.substr(1, record.size() - 2);  // RS ... LF
    const worker_protocol::WorkerRequest again = worker_protocol::parse_request(record);
    if (again.task != parsed.task || again.configuration.batch != parsed.configuration.batch ||
        again.configuration.hidden != parsed.configuration.hidden ||
        again.configuration.seed != parsed.configuration.seed ||
        again.configuration.device != parsed.configuration.device ||
        again.configuration.output != parsed.configuration.output)
      __builtin_trap();
  } catch (const Error&) {
  }
  try {
    (void)worker_protocol::parse_worker_message(text, "fuzz");
  } catch (const Error&) {
  }
  return 0;
}
