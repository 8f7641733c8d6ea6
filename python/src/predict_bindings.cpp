// MemoryPredictor: the counters a measurement will record, before the GPU is touched. Every
// type pickles, since a Measurement (which carries its prediction) crosses back from the
// child process that measured it.

#include <pybind11/stl.h>

#include "bindings.hpp"
#include "iteragpu/memory_predictor.hpp"

namespace iteragpu::python {
namespace {

void register_target(py::module_& m) {
  py::class_<PredictionTarget>(m, "PredictionTarget",
                               "The GPU a prediction is for, and the BLAS workspaces it assumes.")
      .def_readonly("compute_capability_major", &PredictionTarget::compute_capability_major)
      .def_readonly("compute_capability_minor", &PredictionTarget::compute_capability_minor)
      .def_readonly("gpu_name", &PredictionTarget::gpu_name, "'' for a compute capability alone.")
      .def_readonly("cublas_workspace_bytes", &PredictionTarget::cublas_workspace_bytes)
      .def_readonly("cublaslt_workspace_bytes", &PredictionTarget::cublaslt_workspace_bytes)
      .def_readonly("workspace_source", &PredictionTarget::workspace_source,
                    "Reported by LibTorch, or the documented table of PyTorch's defaults.")
      .def("__repr__",
           [](const PredictionTarget& t) {
             return "PredictionTarget(compute_capability='" +
                    std::to_string(t.compute_capability_major) + "." +
                    std::to_string(t.compute_capability_minor) + "', cublas_workspace_bytes=" +
                    std::to_string(t.cublas_workspace_bytes) + ", cublaslt_workspace_bytes=" +
                    std::to_string(t.cublaslt_workspace_bytes) + ")";
           })
      .def(py::pickle(
          [](const PredictionTarget& t) {
            return py::make_tuple(t.compute_capability_major, t.compute_capability_minor,
                                  t.gpu_name, t.cublas_workspace_bytes,
                                  t.cublaslt_workspace_bytes, t.workspace_source);
          },
          [](const py::tuple& t) {
            PredictionTarget target;
            target.compute_capability_major = t[0].cast<int>();
            target.compute_capability_minor = t[1].cast<int>();
            target.gpu_name = t[2].cast<std::string>();
            target.cublas_workspace_bytes = t[3].cast<std::uint64_t>();
            target.cublaslt_workspace_bytes = t[4].cast<std::uint64_t>();
            target.workspace_source = t[5].cast<std::string>();
            return target;
          }));
}

void register_prediction(py::module_& m) {
  py::class_<PhasePrediction>(m, "PhasePrediction",
                              "Predicted counters of one phase row (as PhaseRow's).")
      .def_readonly("phase", &PhasePrediction::phase)
      .def_readonly("repeat", &PhasePrediction::repeat, "1-based for warm_forward, 0 otherwise.")
      .def_readonly("forwards", &PhasePrediction::forwards)
      .def_readonly("sequence", &PhasePrediction::sequence, "A checkpoint's rows: cold, warmup or warm; '' otherwise.")
      .def_readonly("step", &PhasePrediction::step, "A checkpoint's rows: 0 for the prefill, then each decode step.")
      .def_readonly("baseline", &PhasePrediction::baseline, "AllocatorCounters before the phase.")
      .def_readonly("end", &PhasePrediction::end,
                    "AllocatorCounters after the phase, with the peaks during it.")
      .def_readonly("uncertain_counters", &PhasePrediction::uncertain_counters,
                    "The counters a caveat leaves unchecked, named as in the JSON ('peak_reserved_bytes', "
                    "'reserved_bytes.end', ...); [] when every counter is exact by the rules.")
      .def_readonly("lower_bound", &PhasePrediction::lower_bound,
                    "True when the unchecked counters can only be higher than predicted.")
      .def_readonly("recorded_bound_bytes", &PhasePrediction::recorded_bound_bytes,
                    "Where every caveat reaching the row was checked against recorded measurements: the "
                    "sum of the most each moved a counter there; 0 otherwise.")
      .def("__repr__",
           [](const PhasePrediction& p) {
             return "PhasePrediction(phase='" + p.phase + "', repeat=" + std::to_string(p.repeat) +
                    ", allocated_end=" + std::to_string(p.end.allocated_bytes) +
                    ", reserved_end=" + std::to_string(p.end.reserved_bytes) + ")";
           })
      .def(py::pickle(
          [](const PhasePrediction& p) {
            return py::make_tuple(p.phase, p.repeat, p.forwards, p.baseline, p.end, p.sequence, p.step,
                                  p.uncertain_counters, p.lower_bound, p.recorded_bound_bytes);
          },
          [](const py::tuple& t) {
            PhasePrediction p;
            p.phase = t[0].cast<std::string>();
            p.repeat = t[1].cast<int>();
            p.forwards = t[2].cast<int>();
            p.baseline = t[3].cast<AllocatorCounters>();
            p.end = t[4].cast<AllocatorCounters>();
            p.sequence = t[5].cast<std::string>();
            p.step = t[6].cast<std::optional<int>>();
            if (t.size() > 8) {  // pickled before the unchecked counters were kept: none
              p.uncertain_counters = t[7].cast<std::vector<std::string>>();
              p.lower_bound = t[8].cast<bool>();
            }
            if (t.size() > 9) p.recorded_bound_bytes = t[9].cast<std::uint64_t>();
            return p;
          }));

  py::class_<MemoryPrediction> prediction(m, "MemoryPrediction", R"pbdoc(
    The caching-allocator counters `measure` will record for the same options, phase by
    phase, predicted from PyTorch's allocator rules without touching a GPU.
  )pbdoc");
  prediction.def_readonly("configuration", &MemoryPrediction::configuration)
      .def_readonly("model", &MemoryPrediction::model)
      .def_readonly("target", &MemoryPrediction::target)
      .def_readonly("parameter_bytes", &MemoryPrediction::parameter_bytes,
                    "Bytes the weights take on the GPU, in the run's dtype.")
      .def_readonly("input_bytes", &MemoryPrediction::input_bytes)
      .def_readonly("cublaslt_used", &MemoryPrediction::cublaslt_used,
                    "Whether the bias-fused cuBLASLt GEMM (and its workspace) is used.")
      .def_readonly("heading", &MemoryPrediction::heading,
                    "What was predicted: the synthetic MLP, or the checkpoint's architecture, and the input.")
      .def_readonly("phases", &MemoryPrediction::phases, "PhasePrediction list, in order.")
      .def_readonly("caveats", &MemoryPrediction::caveats,
                    "Why the prediction may not hold here; empty when every rule applies.")
      .def("__repr__",
           [](const MemoryPrediction& p) {
             return "MemoryPrediction(phases=" + std::to_string(p.phases.size()) + ")";
           })
      .def(py::pickle(
          [](const MemoryPrediction& p) {
            // The configuration as the text it parses from; the MLP follows from it. A
            // checkpoint's folder is not read again (it need not exist where this is loaded).
            const MeasureConfiguration& c = p.configuration;
            std::vector<std::string> texts{c.device, std::to_string(c.batch), std::to_string(c.context),
                                           std::to_string(c.width), std::to_string(c.hidden), c.dtype,
                                           std::to_string(c.warmup), std::to_string(c.repeats),
                                           std::to_string(c.seed), c.model};
            for (const auto& [name, value] : c.workload_options.values())  // the workload's own, name=value
              texts.push_back(name + "=" + WorkloadOptions::text_of(value));
            return py::make_tuple(py::cast(texts), p.target, p.cublaslt_used, p.phases, p.caveats, p.parameter_bytes,
                                  p.input_bytes, p.heading);
          },
          [](const py::tuple& t) {
            MemoryPrediction p;
            const auto c = t[0].cast<std::vector<std::string>>();
            MeasureRequest request;
            request.device = c.at(0), request.batch = c.at(1), request.context = c.at(2);
            request.width = c.at(3), request.hidden = c.at(4), request.dtype = c.at(5);
            request.warmup = c.at(6), request.repeats = c.at(7), request.seed = c.at(8);
            if (c.at(9).empty()) {
              p.configuration = MeasureConfiguration::parse(request);
              p.model = SyntheticModel::from(p.configuration);
            } else {  // the checked values of a checkpoint's configuration, as they were
              MeasureConfiguration& k = p.configuration;
              k.device = c.at(0), k.batch = std::stoll(c.at(1)), k.context = std::stoll(c.at(2));
              k.width = std::stoll(c.at(3)), k.hidden = std::stoll(c.at(4)), k.dtype = c.at(5);
              k.warmup = std::stoi(c.at(6)), k.repeats = std::stoi(c.at(7)), k.seed = std::stoull(c.at(8));
              k.model = c.at(9);
              for (std::size_t i = 10; i < c.size(); ++i) {
                const std::size_t equals = c[i].find('=');
                const std::string name = c[i].substr(0, equals), text = c[i].substr(equals + 1);
                const WorkloadOption* option = declared_workload_option(name);
                if (option && option->type != WorkloadOption::Type::kText)
                  k.workload_options.set(name, std::int64_t{std::stoll(text)});
                else
                  k.workload_options.set(name, text);
              }
            }
            p.target = t[1].cast<PredictionTarget>();
            p.cublaslt_used = t[2].cast<bool>();
            p.phases = t[3].cast<std::vector<PhasePrediction>>();
            p.caveats = t[4].cast<std::vector<std::string>>();
            p.parameter_bytes = t[5].cast<std::uint64_t>();
            p.input_bytes = t[6].cast<std::uint64_t>();
            if (t.size() > 7) p.heading = t[7].cast<std::string>();
            return p;
          }));
  add_report_methods(prediction, "prediction_html");

  m.def(
      "predict_memory",
      [](const MeasureRequest& request, py::handle compute_capability) {
        const PredictionTarget target = PredictionTarget::resolve(
            request.device, text_keyword(compute_capability, "compute_capability"), request.backend_path);
        return MemoryPredictor::predict(MeasureConfiguration::parse(request), target);
      },
      py::arg("request"), py::arg("compute_capability") = py::str(""),
      "MemoryPredictor::predict for request.device (the backend reports the GPU) or a "
      "compute capability ('9.0'); see iteragpu.predict().");
}

}  // namespace

void register_predict(py::module_& m) {
  register_target(m);
  register_prediction(m);
}

}  // namespace iteragpu::python
