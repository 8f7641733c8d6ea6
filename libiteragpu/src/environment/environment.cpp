#include "iteragpu/environment.hpp"

#include <cstdio>

#include "mechanics/atomic_output_file.hpp"
#include "environment/environment_json.hpp"
#include "iteragpu/error.hpp"
#include "iteragpu/printable_text.hpp"
#include "iteragpu/version.hpp"
#include "mechanics/quantity_parser.hpp"
#include "mechanics/wording.hpp"
#include "environment/system_info.hpp"

namespace iteragpu {
namespace {

// c10::DeviceIndex is an 8-bit signed integer in LibTorch 2.x.
constexpr int kMaxDeviceIndex = 127;

std::vector<std::string> environment_notes() {
  return {
      "cuda_build_version is the CUDA runtime version LibTorch was built with, not the NVIDIA "
      "driver version; nvidia_kernel_driver, when present, is the kernel driver's own version "
      "and names the file it was read from.",
      "ROCm builds of LibTorch reuse the cuda:N device names; a GPU listed under a ROCm build "
      "does not prove that a given AMD installation works.",
      "The GPU list and the free/total memory are what the GPU runtime reported to this "
      "process when the report was made; other processes may use the same GPUs.",
      "No environment variable values, host names or user names are collected; paths under "
      "the user's home directory are written with ~.",
  };
}

std::string compute_capability(const GpuDevice& gpu) {
  return std::to_string(gpu.compute_capability_major) + "." +
         std::to_string(gpu.compute_capability_minor);
}

std::string or_none(const std::optional<std::string>& text, const char* none) {
  return text ? *text : std::string(none);
}

}  // namespace

std::string no_gpu_reason(const StackReport& stack) {
  if (!stack.cuda_build_version && !stack.hip_build_version)
    return "LibTorch " + stack.torch_version +
           " was built without CUDA or ROCm (a CPU-only build), so it cannot use any GPU; build "
           "iteragpu against the LibTorch of a CUDA PyTorch (" + std::string(kGpuBuildGuide) + ")";
  return "LibTorch " + stack.torch_version + " (built with " +
         (stack.cuda_build_version ? "CUDA " + *stack.cuda_build_version : "HIP " + *stack.hip_build_version) +
         ") reports no usable GPU: no device is visible to this process, or no driver";
}

int parse_device_index(const std::string& device, const std::string& field) {
  const std::string accepted = "expected cuda:N with N a GPU index from 0 to " +
                               std::to_string(kMaxDeviceIndex) + ", such as cuda:0";
  if (device == "cpu")
    throw UsageError(field, "'cpu' is not accepted: only GPUs are measured; " + accepted);
  if (device == "cuda")
    throw UsageError(field, "'cuda' names no device; write the index explicitly, " + accepted);
  const std::string prefix = "cuda:";
  const std::string digits = device.compare(0, prefix.size(), prefix) == 0 ? device.substr(prefix.size()) : "";
  const bool well_formed = !digits.empty() && digits.size() <= 3 &&
                           digits.find_first_not_of("0123456789") == std::string::npos &&
                           (digits.size() == 1 || digits[0] != '0');
  if (!well_formed || std::stoi(digits) > kMaxDeviceIndex)
    throw UsageError(field, quoted_for_message(device) + " is not a device; " + accepted);
  return std::stoi(digits);
}

Environment::Environment() = default;
Environment::Environment(std::shared_ptr<Backend> backend) : backend_(std::move(backend)) {}

namespace {

// Everything but the stack: facts of this library and of the operating system.
EnvironmentReport system_report(const std::string& device, int device_index) {
  EnvironmentReport report;
  report.selected_device = device;
  report.selected_index = device_index;
  report.iteragpu_version = version();
  report.iteragpu_build = build_description();
  const SystemInfo system = collect_system_info();
  report.os_name = system.os_name;
  report.os_distribution = system.os_distribution;
  report.kernel_release = system.kernel_release;
  report.architecture = system.architecture;
  report.libc = system.libc;
  report.nvidia_driver_version = system.nvidia_driver_version;
  report.nvidia_driver_source = system.nvidia_driver_source;
  return report;
}

// Adds what the backend (the caller's, or the plugin loaded now) knows of the stack.
void add_stack(EnvironmentReport& report, std::shared_ptr<Backend> backend,
               const std::string& backend_path) {
  if (!backend) {
    const BackendLoadResult& loaded = load_torch_backend(backend_path);
    report.backend_path = without_home_directory(loaded.path);
    if (!loaded.backend) {
      report.backend_error = without_home_directory(loaded.error);
      return;
    }
    backend = loaded.backend;
  }
  report.backend_available = true;
  StackReport stack;
  const BackendStatus status = backend->describe(report.selected_index, stack);
  if (!status.ok()) {
    report.backend_error = "the LibTorch backend could not describe the stack: " + status.message;
    return;
  }
  for (const auto& gpu : stack.gpus)
    if (stack.gpu_runtime_available && gpu.index == report.selected_index) report.selected_present = true;
  if (!report.selected_present) {  // free/total belong to the selected device only
    stack.selected_free_bytes.reset();
    stack.selected_total_bytes.reset();
  }
  report.stack = std::move(stack);
}

}  // namespace

EnvironmentReport Environment::collect(const EnvironmentRequest& request) const {
  const int device_index = parse_device_index(request.device, "device");
  if (!request.output.empty()) ensure_output_absent(request.output, "output");
  EnvironmentReport report = system_report(request.device, device_index);
  add_stack(report, backend_, request.backend_path);
  if (!request.output.empty()) publish_exclusively(request.output, report.to_json());
  return report;
}

void write_environment_members(JsonWriter& json, const EnvironmentReport& report) {
  json.key("iteragpu").begin_object()
      .key("version").value(report.iteragpu_version)
      .key("build").value(report.iteragpu_build)
      .end_object();
  json.key("system").begin_object()
      .key("os_name").value(report.os_name)
      .key("os_distribution").value(report.os_distribution)
      .key("kernel_release").value(report.kernel_release)
      .key("architecture").value(report.architecture)
      .key("libc").value(report.libc)
      .key("nvidia_kernel_driver").begin_object()
      .key("version").value(report.nvidia_driver_version)
      .key("source");
  if (report.nvidia_driver_version) {
    json.value(report.nvidia_driver_source);
  } else {
    json.null();
  }
  json.end_object().end_object();

  json.key("backend").begin_object()
      .key("available").value(report.backend_available)
      .key("plugin_path");
  json.text_or_null(report.backend_path);
  json.key("error");
  json.text_or_null(report.backend_error);
  // What produced the figures (absent from files written before it was recorded).
  if (!report.stack) {
    json.key("identity").null();
  } else if (!report.stack->backend_identity.empty()) {  // empty: read from a file without it
    json.key("identity").value(report.stack->backend_identity);
  }
  json.end_object();

  json.key("libtorch");
  if (!report.stack) {
    json.null();
  } else {
    const StackReport& stack = *report.stack;
    json.begin_object()
        .key("version").value(stack.torch_version)
        .key("cuda_build_version").value(stack.cuda_build_version)
        .key("hip_build_version").value(stack.hip_build_version)
        .key("cudnn_version").value(stack.cudnn_version)
        .key("gpu_runtime_available").value(stack.gpu_runtime_available)
        .end_object();
  }
  // null: unknown (no backend); []: the runtime sees no GPU.
  json.key("gpus");
  if (!report.stack) {
    json.null();
  } else {
    json.begin_array();
    for (const auto& gpu : report.stack->gpus) {
      json.begin_object()
          .key("index").value(gpu.index)
          .key("device").value("cuda:" + std::to_string(gpu.index))
          .key("name").value(gpu.name)
          .key("compute_capability").value(compute_capability(gpu))
          .key("total_memory_bytes").value(gpu.total_memory_bytes)
          .key("multiprocessors").value(gpu.multiprocessors)
          .end_object();
    }
    json.end_array();
  }
  const bool have_stack = report.stack.has_value();
  json.key("selected_device").begin_object()
      .key("device").value(report.selected_device)
      .key("index").value(report.selected_index)
      .key("present").value(report.selected_present)
      .key("runtime_free_bytes").value(have_stack ? report.stack->selected_free_bytes : std::nullopt)
      .key("runtime_total_bytes").value(have_stack ? report.stack->selected_total_bytes : std::nullopt)
      .end_object();
  json.key("notes").value(environment_notes());
}

EnvironmentReport read_environment_members(const JsonObjectReader& json) {
  EnvironmentReport report;
  const JsonObjectReader iteragpu = json.object("iteragpu");
  report.iteragpu_version = iteragpu.text("version");
  report.iteragpu_build = iteragpu.text("build");

  const JsonObjectReader system = json.object("system");
  report.os_name = system.text("os_name");
  report.os_distribution = system.text_or_null("os_distribution");
  report.kernel_release = system.text("kernel_release");
  report.architecture = system.text("architecture");
  report.libc = system.text("libc");
  const JsonObjectReader driver = system.object("nvidia_kernel_driver");
  report.nvidia_driver_version = driver.text_or_null("version");
  if (report.nvidia_driver_version) report.nvidia_driver_source = driver.text("source");

  const JsonObjectReader backend = json.object("backend");
  report.backend_available = backend.flag("available");
  report.backend_path = backend.text_or_null("plugin_path").value_or("");
  report.backend_error = backend.text_or_null("error").value_or("");

  const JsonObjectReader selected = json.object("selected_device");
  report.selected_device = selected.text("device");
  report.selected_index = selected.integer("index");
  report.selected_present = selected.flag("present");

  // The stack is described by "libtorch" and "gpus" together: both null or both present.
  if (json.is_null("libtorch") != json.is_null("gpus"))
    json.fail("gpus", "must be null exactly when \"libtorch\" is");
  if (!json.is_null("libtorch")) {
    const JsonObjectReader libtorch = json.object("libtorch");
    StackReport stack;
    stack.torch_version = libtorch.text("version");
    stack.cuda_build_version = libtorch.text_or_null("cuda_build_version");
    stack.hip_build_version = libtorch.text_or_null("hip_build_version");
    stack.cudnn_version = libtorch.text_or_null("cudnn_version");
    stack.gpu_runtime_available = libtorch.flag("gpu_runtime_available");
    if (backend.has("identity") && !backend.is_null("identity")) stack.backend_identity = backend.text("identity");
    for (const JsonObjectReader& entry : json.objects("gpus")) {
      GpuDevice gpu;
      gpu.index = entry.integer("index");
      gpu.name = entry.text("name");
      if (!parse_compute_capability(entry.text("compute_capability"), gpu.compute_capability_major,
                                    gpu.compute_capability_minor))
        entry.fail("compute_capability", "not MAJOR.MINOR");
      gpu.total_memory_bytes = entry.uint64("total_memory_bytes");
      gpu.multiprocessors = entry.integer("multiprocessors");
      if (entry.text("device") != "cuda:" + std::to_string(gpu.index))
        entry.fail("device", "does not match the index");
      stack.gpus.push_back(std::move(gpu));
    }
    stack.selected_free_bytes = selected.uint64_or_null("runtime_free_bytes");
    stack.selected_total_bytes = selected.uint64_or_null("runtime_total_bytes");
    report.stack = std::move(stack);
  }
  return report;
}

std::string EnvironmentReport::to_json() const {
  JsonWriter json(kEnvironmentSchema, kEnvironmentSchemaVersion);
  write_environment_members(json, *this);
  return json.finish();
}

std::string EnvironmentReport::to_text() const {
  std::string text = "iteragpu " + iteragpu_version + " (" + iteragpu_build + ")\n";
  text += "System: " + printable(os_name) + " " + printable(kernel_release) + " " + printable(architecture) +
          (os_distribution ? ", " + printable(*os_distribution) : "") + ", " + printable(libc) + "\n";
  text += "NVIDIA kernel driver: " +
          (nvidia_driver_version ? printable(*nvidia_driver_version) + " (read from " + printable(nvidia_driver_source) + ")"
                                 : std::string("not exposed by this system")) + "\n";
  if (!backend_available) {
    text += "LibTorch backend: not available: " + printable(backend_error) + "\n";
  } else {
    text += "LibTorch backend: " + (backend_path.empty() ? std::string("supplied by the caller") : printable(backend_path)) + "\n";
    if (from_test_double()) text += std::string(kTestDoubleMark) + "\n";
  }
  if (!stack) {
    if (backend_available) text += "LibTorch stack: unknown: " + printable(backend_error) + "\n";
    text += "GPUs: unknown (no LibTorch backend)\n";
  } else {
    text += "LibTorch: " + printable(stack->torch_version) + "\n";
    text += "  CUDA runtime LibTorch was built with (not the driver): " +
            printable(or_none(stack->cuda_build_version, "none")) + "\n";
    text += "  HIP version LibTorch was built with: " + printable(or_none(stack->hip_build_version, "none")) + "\n";
    text += "  cuDNN: " + printable(or_none(stack->cudnn_version, "none")) + "\n";
    text += std::string("GPU runtime available: ") + (stack->gpu_runtime_available ? "yes" : "no") + "\n";
    if (stack->gpus.empty()) {
      text += "GPUs: none visible (no GPU available): " + printable(no_gpu_reason(*stack)) + "\n";
    } else {
      text += "GPUs (" + std::to_string(stack->gpus.size()) + " visible):\n";
      for (const auto& gpu : stack->gpus)
        text += "  cuda:" + std::to_string(gpu.index) + "  " + printable(gpu.name) + ", compute capability " +
                compute_capability(gpu) + ", " + bytes_and_size(gpu.total_memory_bytes) + ", " +
                std::to_string(gpu.multiprocessors) +
                " multiprocessors\n";
    }
  }
  text += "Selected device " + printable(selected_device) + ": ";
  if (!stack) {
    text += "unknown\n";
  } else if (!selected_present) {
    text += stack->gpus.empty() ? "not present (no GPU available)\n" : "not present among the visible GPUs\n";
  } else if (stack->selected_free_bytes && stack->selected_total_bytes) {
    text += "the runtime reports " + bytes_and_size(*stack->selected_free_bytes) + " free of " +
            bytes_and_size(*stack->selected_total_bytes) + "\n";
  } else {
    text += "present; free/total memory not reported\n";
  }
  text += "Notes:\n";
  for (const auto& note : environment_notes()) text += "  - " + note + "\n";
  return text;
}

}  // namespace iteragpu
