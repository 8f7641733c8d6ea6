// Environment: a diagnostic of the LibTorch/CUDA/GPU stack. The reports pickle so that a
// measurement made in a child process comes back whole.

#include <pybind11/stl.h>

#include "bindings.hpp"
#include "iteragpu/environment.hpp"

namespace iteragpu::python {
namespace {

void register_stack_types(py::module_& m) {
  py::class_<GpuDevice>(m, "GpuDevice", "One visible GPU.")
      .def_readonly("index", &GpuDevice::index, "Device index (cuda:N).")
      .def_readonly("name", &GpuDevice::name, "The name the runtime reports.")
      .def_readonly("compute_capability_major", &GpuDevice::compute_capability_major)
      .def_readonly("compute_capability_minor", &GpuDevice::compute_capability_minor)
      .def_readonly("total_memory_bytes", &GpuDevice::total_memory_bytes, "Total memory, bytes.")
      .def_readonly("multiprocessors", &GpuDevice::multiprocessors)
      .def("__repr__",
           [](const GpuDevice& d) {
             return "GpuDevice(index=" + std::to_string(d.index) + ", name='" + d.name + "')";
           })
      .def(py::pickle(
          [](const GpuDevice& d) {
            return py::make_tuple(d.index, d.name, d.compute_capability_major,
                                  d.compute_capability_minor, d.total_memory_bytes,
                                  d.multiprocessors);
          },
          [](const py::tuple& t) {
            GpuDevice d;
            d.index = t[0].cast<int>();
            d.name = t[1].cast<std::string>();
            d.compute_capability_major = t[2].cast<int>();
            d.compute_capability_minor = t[3].cast<int>();
            d.total_memory_bytes = t[4].cast<std::uint64_t>();
            d.multiprocessors = t[5].cast<int>();
            return d;
          }));

  py::class_<StackReport>(m, "StackReport", "What the LibTorch backend knows of the stack.")
      .def_readonly("backend_identity", &StackReport::backend_identity,
                    "What described the stack: 'libtorch', or 'test-double' for the scripted "
                    "stand-in of the tests (its figures are not a GPU's).")
      .def_readonly("torch_version", &StackReport::torch_version, "LibTorch version.")
      .def_readonly("cuda_build_version", &StackReport::cuda_build_version,
                    "CUDA runtime LibTorch was built with (not the driver version), or None.")
      .def_readonly("hip_build_version", &StackReport::hip_build_version,
                    "HIP version of a ROCm build, or None.")
      .def_readonly("cudnn_version", &StackReport::cudnn_version, "cuDNN version, or None.")
      .def_readonly("gpu_runtime_available", &StackReport::gpu_runtime_available)
      .def_property_readonly(
          "no_gpu_reason",
          [](const StackReport& s) -> std::optional<std::string> {
            if (s.gpu_runtime_available && !s.gpus.empty()) return std::nullopt;
            return no_gpu_reason(s);
          },
          "Why no GPU can be measured, in the words of the CLI's environment report (a CPU-only "
          "LibTorch, or a runtime that sees no device), or None when GPUs are visible.")
      .def_readonly("gpus", &StackReport::gpus, "Visible GPUs (list of GpuDevice).")
      .def_readonly("selected_free_bytes", &StackReport::selected_free_bytes,
                    "Free memory of the selected device as the runtime reports it, or None.")
      .def_readonly("selected_total_bytes", &StackReport::selected_total_bytes,
                    "Total memory of the selected device as the runtime reports it, or None.")
      .def_readonly("cublas_workspace_bytes", &StackReport::cublas_workspace_bytes,
                    "cuBLAS workspace LibTorch chose for the selected device, or None.")
      .def_readonly("cublaslt_workspace_bytes", &StackReport::cublaslt_workspace_bytes,
                    "cuBLASLt workspace LibTorch chose for the selected device, or None.")
      .def(py::pickle(
          [](const StackReport& s) {
            return py::make_tuple(s.torch_version, s.cuda_build_version, s.hip_build_version,
                                  s.cudnn_version, s.gpu_runtime_available, s.gpus,
                                  s.selected_free_bytes, s.selected_total_bytes,
                                  s.cublas_workspace_bytes, s.cublaslt_workspace_bytes,
                                  s.backend_identity);
          },
          [](const py::tuple& t) {
            StackReport s;
            s.torch_version = t[0].cast<std::string>();
            s.cuda_build_version = t[1].cast<std::optional<std::string>>();
            s.hip_build_version = t[2].cast<std::optional<std::string>>();
            s.cudnn_version = t[3].cast<std::optional<std::string>>();
            s.gpu_runtime_available = t[4].cast<bool>();
            s.gpus = t[5].cast<std::vector<GpuDevice>>();
            s.selected_free_bytes = t[6].cast<std::optional<std::uint64_t>>();
            s.selected_total_bytes = t[7].cast<std::optional<std::uint64_t>>();
            s.cublas_workspace_bytes = t[8].cast<std::optional<std::uint64_t>>();
            s.cublaslt_workspace_bytes = t[9].cast<std::optional<std::uint64_t>>();
            s.backend_identity = t[10].cast<std::string>();
            return s;
          }));
}

void register_report(py::module_& m) {
  py::class_<EnvironmentReport> report(m, "EnvironmentReport", R"pbdoc(
    A diagnostic of the LibTorch/CUDA/GPU stack. Reporting that no GPU (or no LibTorch
    backend) is available is a valid report. Collects no environment-variable values and no
    host or user names.
  )pbdoc");
  report.def_readonly("iteragpu_version", &EnvironmentReport::iteragpu_version)
      .def_readonly("iteragpu_build", &EnvironmentReport::iteragpu_build)
      .def_readonly("os_name", &EnvironmentReport::os_name)
      .def_readonly("os_distribution", &EnvironmentReport::os_distribution,
                    "The distribution's name ('Debian GNU/Linux 12 (bookworm)'), or None.")
      .def_readonly("kernel_release", &EnvironmentReport::kernel_release)
      .def_readonly("architecture", &EnvironmentReport::architecture)
      .def_readonly("libc", &EnvironmentReport::libc)
      .def_readonly("backend_available", &EnvironmentReport::backend_available,
                    "Whether the LibTorch backend plugin could be loaded.")
      .def_readonly("backend_path", &EnvironmentReport::backend_path, "The plugin file tried.")
      .def_readonly("backend_error", &EnvironmentReport::backend_error,
                    "The loader's reason when the backend is not available.")
      .def_property_readonly("from_test_double", &EnvironmentReport::from_test_double,
                             "Whether the figures come from the test double (scripted), not "
                             "from LibTorch on a GPU.")
      .def_readonly("stack", &EnvironmentReport::stack,
                    "StackReport, or None when the backend is not available.")
      .def_readonly("selected_device", &EnvironmentReport::selected_device)
      .def_readonly("selected_index", &EnvironmentReport::selected_index)
      .def_readonly("selected_present", &EnvironmentReport::selected_present,
                    "Whether the selected index exists among the visible GPUs.")
      .def_readonly("nvidia_driver_version", &EnvironmentReport::nvidia_driver_version,
                    "The NVIDIA kernel driver's version, or None; see nvidia_driver_source.")
      .def_readonly("nvidia_driver_source", &EnvironmentReport::nvidia_driver_source)
      .def("__repr__",
           [](const EnvironmentReport& r) {
             return "EnvironmentReport(backend_available=" +
                    std::string(r.backend_available ? "True" : "False") +
                    ", gpu_runtime_available=" +
                    std::string(r.stack && r.stack->gpu_runtime_available ? "True" : "False") +
                    ", selected_device='" + r.selected_device + "')";
           })
      .def(py::pickle(
          [](const EnvironmentReport& r) {
            return py::make_tuple(r.iteragpu_version, r.iteragpu_build, r.os_name,
                                  r.os_distribution, r.kernel_release, r.architecture, r.libc, r.backend_available,
                                  r.backend_path, r.backend_error, r.stack, r.selected_device,
                                  r.selected_index, r.selected_present, r.nvidia_driver_version,
                                  r.nvidia_driver_source);
          },
          [](const py::tuple& t) {
            EnvironmentReport r;
            r.iteragpu_version = t[0].cast<std::string>();
            r.iteragpu_build = t[1].cast<std::string>();
            r.os_name = t[2].cast<std::string>();
            r.os_distribution = t[3].cast<std::optional<std::string>>();
            r.kernel_release = t[4].cast<std::string>();
            r.architecture = t[5].cast<std::string>();
            r.libc = t[6].cast<std::string>();
            r.backend_available = t[7].cast<bool>();
            r.backend_path = t[8].cast<std::string>();
            r.backend_error = t[9].cast<std::string>();
            r.stack = t[10].cast<std::optional<StackReport>>();
            r.selected_device = t[11].cast<std::string>();
            r.selected_index = t[12].cast<int>();
            r.selected_present = t[13].cast<bool>();
            r.nvidia_driver_version = t[14].cast<std::optional<std::string>>();
            r.nvidia_driver_source = t[15].cast<std::string>();
            return r;
          }));
  add_report_methods(report, "environment_html");
}

}  // namespace

void register_environment(py::module_& m) {
  register_stack_types(m);
  register_report(m);

  const EnvironmentRequest defaults;
  py::class_<Environment>(m, "Environment", "Collects a diagnostic of the LibTorch/GPU stack.")
      .def(py::init<>(), "The LibTorch backend plugin is loaded on the first collect().")
      .def(
          "collect",
          [](const Environment& environment, py::handle device_text, py::handle output,
             py::handle backend_path) {
            EnvironmentRequest request;
            request.device = text_keyword(device_text, "device");
            request.output = path_keyword_text(output, "output");
            request.backend_path = path_keyword_text(backend_path, "backend_path");
            // Loading LibTorch and querying the driver take a while: let other threads run.
            py::gil_scoped_release no_gil;
            return environment.collect(request);
          },
          py::arg("device") = py::str(defaults.device), py::arg("output") = py::none(),
          py::arg("backend_path") = py::none(), R"pbdoc(
            Collects the report. Loads the LibTorch backend plugin into this process on
            first use (about half a second).

            Args:
                device: the device to describe, "cuda:N" (default "cuda:0").
                output: a JSON file to create with the report (str or os.PathLike); it
                    must not exist and is published atomically. None: no file.
                backend_path: an explicit plugin file; None searches beside the module
                    (or the ITERAGPU_BACKEND environment variable).

            Returns:
                EnvironmentReport: a missing backend or GPU is a valid report.

            Raises:
                UsageError: (a ValueError) a malformed device name.
                OutputExists: (a FileExistsError) output already exists.
          )pbdoc");
}

}  // namespace iteragpu::python
