// Runs the training step's plugin module (libiteragpu/backend_torch/training_module.cpp) on the
// GPU through the backend ABI, row by row as the phase protocol brackets a phase, and writes
// what tests/conformance/training_reference.py writes for the Python loop: the rows with their
// six counters and times, the losses, the parameter counts and the device memory in use. The
// checkpoint is read by the core (its config.json and safetensors headers) as `measure --model`
// reads it. training_conformance.py compares the two.
//
// Usage: training_probe PLUGIN DIR DTYPE full|lora BATCH CONTEXT STEPS SEED RANK ALPHA TARGETS OUT.json

#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "iteragpu/backend.hpp"
#include "iteragpu/measure_configuration.hpp"
#include "workload/decoder_payload.hpp"
#include "workload/training_payload.hpp"
#include "workload/workload.hpp"
#include "workload/workload_steps.hpp"

namespace {

using iteragpu::AllocatorCounters;
using iteragpu::Backend;
using iteragpu::BackendStatus;

void check(const BackendStatus& status, const std::string& what) {
  if (!status.ok()) throw std::runtime_error(what + ": " + status.message);
}

struct Row {
  std::string phase;
  int step = 0;  // 0: none
  AllocatorCounters baseline, end;
  double host_seconds = 0, gpu_seconds = 0;
};

Row bracket(Backend& backend, const std::string& phase, int step, const char* work) {
  Row row{phase, step, {}, {}, 0, 0};
  check(backend.synchronize(), phase);
  check(backend.read_counters(row.baseline), phase);
  check(backend.reset_peaks(), phase);
  check(backend.start_gpu_timer(), phase);
  const auto start = std::chrono::steady_clock::now();
  check(backend.run_step(work), phase);
  check(backend.stop_gpu_timer(), phase);
  check(backend.synchronize(), phase);
  row.host_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  check(backend.read_counters(row.end), phase);
  check(backend.gpu_timer_seconds(row.gpu_seconds), phase);
  return row;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 13) {
    std::cerr << "usage: training_probe PLUGIN DIR DTYPE full|lora BATCH CONTEXT STEPS SEED RANK ALPHA TARGETS OUT.json\n";
    return 2;
  }
  try {
    const std::string plugin = argv[1], folder = argv[2], dtype = argv[3], method = argv[4];
    const int steps = std::stoi(argv[7]);
    iteragpu::MeasureRequest request;
    request.model = folder;
    request.dtype = dtype;
    request.batch = argv[5];
    request.context = argv[6];
    request.seed = argv[8];
    const iteragpu::MeasureConfiguration configuration = iteragpu::MeasureConfiguration::parse(request).checked();
    // The checkpoint as the decoder workload resolves it: its architecture and tensors.
    iteragpu::DecoderPayload checkpoint;
    const std::string problem = iteragpu::decode_decoder_payload(
        iteragpu::workload_for(configuration)->workload_spec(0, configuration.seed).payload, checkpoint);
    if (!problem.empty()) throw std::runtime_error(problem);

    iteragpu::TrainingPayload payload;
    payload.batch = configuration.batch;
    payload.context = configuration.context;
    payload.method = method;
    payload.lora_rank = std::stoi(argv[9]);
    payload.lora_alpha = std::stod(argv[10]);
    payload.lora_targets = argv[11];
    payload.architecture = checkpoint.architecture;
    payload.tensors = checkpoint.tensors;
    iteragpu::WorkloadSpec spec;
    spec.kind = iteragpu::kTrainingKind;
    spec.dtype = configuration.dtype;
    spec.seed = configuration.seed;
    spec.payload = iteragpu::encode_training_payload(payload);

    const iteragpu::BackendLoadResult& loaded = iteragpu::load_torch_backend(plugin);
    if (!loaded.backend) throw std::runtime_error("plugin: " + loaded.error);
    Backend& backend = *loaded.backend;
    check(backend.open(spec), "open");
    std::vector<Row> rows;
    rows.push_back(bracket(backend, "weights_load", 0, iteragpu::kLoadModelStep));
    if (method == "lora") rows.push_back(bracket(backend, "adapters", 0, iteragpu::kAddAdaptersStep));
    rows.push_back(bracket(backend, "inputs", 0, iteragpu::kCreateInputsStep));
    for (int step = 1; step <= steps; ++step) {
      rows.push_back(bracket(backend, "forward", step, iteragpu::kForwardStep));
      rows.push_back(bracket(backend, "backward", step, iteragpu::kBackwardStep));
      rows.push_back(bracket(backend, "optimizer", step, iteragpu::kOptimizerStep));
    }
    backend.close();  // the workload's report is taken as the session closes
    std::string report_text;
    check(backend.run_report(report_text), "report");
    iteragpu::TrainingRunReport report;
    const std::string unreadable = iteragpu::decode_training_run_report(report_text, report);
    if (!unreadable.empty()) throw std::runtime_error("report: " + unreadable);

    std::ofstream out(argv[12]);
    out << "{\"rows\": [";
    for (std::size_t index = 0; index < rows.size(); ++index) {
      const Row& row = rows[index];
      out << (index ? ", " : "") << "{\"phase\": \"" << row.phase << "\", \"step\": "
          << (row.step ? std::to_string(row.step) : "null") << ", \"allocated_baseline\": " << row.baseline.allocated_bytes
          << ", \"allocated_end\": " << row.end.allocated_bytes << ", \"reserved_baseline\": " << row.baseline.reserved_bytes
          << ", \"reserved_end\": " << row.end.reserved_bytes << ", \"peak_allocated\": " << row.end.peak_allocated_bytes
          << ", \"peak_reserved\": " << row.end.peak_reserved_bytes << ", \"host_seconds\": " << row.host_seconds
          << ", \"gpu_event_seconds\": " << row.gpu_seconds << "}";
    }
    out << "], \"losses\": [";
    const std::size_t count = report.losses_float32.size() / sizeof(float);
    for (std::size_t index = 0; index < count; ++index) {
      float loss = 0;
      std::memcpy(&loss, report.losses_float32.data() + index * sizeof(float), sizeof(float));
      char text[64];
      std::snprintf(text, sizeof text, "%.17g", static_cast<double>(loss));
      out << (index ? ", " : "") << text;
    }
    out << "], \"parameters\": " << report.parameters << ", \"trainable_parameters\": " << report.trainable_parameters
        << ", \"attention_backend\": \"" << report.attention_backend << "\", \"device_used_bytes\": "
        << (report.device_used_bytes ? std::to_string(*report.device_used_bytes) : "null") << "}\n";
    return out ? 0 : 1;
  } catch (const std::exception& error) {
    std::cerr << "training_probe: " << error.what() << "\n";
    return 1;
  }
}
