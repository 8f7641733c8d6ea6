// MemoryEstimator: weight memory from a parameter count and a bit width, exactly.

#include <pybind11/stl.h>

#include <cstdint>
#include <vector>

#include "bindings.hpp"
#include "iteragpu/memory_estimator.hpp"

namespace iteragpu::python {

namespace {

py::tuple shape_tuple(const std::vector<std::uint64_t>& shape) {
  py::tuple result(shape.size());
  for (std::size_t i = 0; i < shape.size(); ++i) result[i] = py::int_(shape[i]);
  return result;
}

void register_checkpoint_estimate(py::module_& m) {
  py::class_<CheckpointTensor>(m, "CheckpointTensor", "One tensor as its shard's header declares it.")
      .def_readonly("name", &CheckpointTensor::name)
      .def_readonly("dtype", &CheckpointTensor::dtype, "As written in the header: 'BF16', 'F8_E4M3'.")
      .def_property_readonly(
          "shape", [](const CheckpointTensor& t) { return shape_tuple(t.shape); }, "tuple of int")
      .def_readonly("parameters", &CheckpointTensor::parameters, "Elements: the product of the shape.")
      .def_readonly("bytes", &CheckpointTensor::bytes, "Its data size (checked against shape x dtype).")
      .def_readonly("shard", &CheckpointTensor::shard, "The file that holds it, as the index names it.")
      .def_readonly("offset", &CheckpointTensor::offset, "Its data offset in the shard, after the header.")
      .def("__repr__", [](const CheckpointTensor& t) {
        return "CheckpointTensor(name=" + py::repr(py::str(t.name)).cast<std::string>() + ", dtype='" +
               t.dtype + "', shape=" + py::repr(shape_tuple(t.shape)).cast<std::string>() +
               ", bytes=" + std::to_string(t.bytes) + ")";
      });

  py::class_<CheckpointDtypeTotal>(m, "CheckpointDtypeTotal", "All tensors of one dtype.")
      .def_readonly("dtype", &CheckpointDtypeTotal::dtype)
      .def_readonly("bits_per_element", &CheckpointDtypeTotal::bits_per_element, "4, 6, 8, 16, 32 or 64.")
      .def_readonly("tensors", &CheckpointDtypeTotal::tensors)
      .def_property_readonly(
          "parameters", [](const CheckpointDtypeTotal& d) { return exact_integer(d.parameters); }, "int")
      .def_readonly("memory", &CheckpointDtypeTotal::memory, "MemoryAmount of these tensors.")
      .def("__repr__", [](const CheckpointDtypeTotal& d) {
        return "CheckpointDtypeTotal(dtype='" + d.dtype + "', tensors=" + std::to_string(d.tensors) +
               ", parameters=" + d.parameters.str() + ", bytes=" + d.memory.bytes.str() + ")";
      });

  py::class_<CheckpointShard>(m, "CheckpointShard", "One file read: the checkpoint, or one shard of it.")
      .def_readonly("name", &CheckpointShard::name, "As the index names it, or the file name.")
      .def_readonly("path", &CheckpointShard::path, "As opened.")
      .def_readonly("file_bytes", &CheckpointShard::file_bytes)
      .def_readonly("header_bytes", &CheckpointShard::header_bytes, "The JSON header after the 8-byte length.")
      .def_readonly("data_bytes", &CheckpointShard::data_bytes, "Exactly the tensors' bytes.")
      .def_readonly("tensors", &CheckpointShard::tensors)
      .def("__repr__", [](const CheckpointShard& s) {
        return "CheckpointShard(name=" + py::repr(py::str(s.name)).cast<std::string>() +
               ", tensors=" + std::to_string(s.tensors) + ", data_bytes=" + std::to_string(s.data_bytes) + ")";
      });

  py::class_<CheckpointEstimate> estimate(m, "CheckpointEstimate", R"pbdoc(
    Weight memory of a safetensors checkpoint, from its headers (no tensor data read).

    Bytes are the tensors' data sizes, checked against shape x dtype. Not included: see
    ``not_included``.
  )pbdoc");
  estimate.def_readonly("checkpoint", &CheckpointEstimate::checkpoint, "The path as given.")
      .def_readonly("resolved", &CheckpointEstimate::resolved, "The .safetensors file or the index read.")
      .def_readonly("sharded", &CheckpointEstimate::sharded, "Read through an index.")
      .def_readonly("index_total_size", &CheckpointEstimate::index_total_size,
                    "The index's metadata.total_size (int) when it has one; compared, not trusted.")
      .def_readonly("shards", &CheckpointEstimate::shards, "list of CheckpointShard, by name.")
      .def_readonly("dtypes", &CheckpointEstimate::dtypes, "list of CheckpointDtypeTotal, most bytes first.")
      .def_readonly("tensor_count", &CheckpointEstimate::tensor_count)
      .def_property_readonly(
          "parameters", [](const CheckpointEstimate& e) { return exact_integer(e.parameters); },
          "All elements (int).")
      .def_readonly("weights", &CheckpointEstimate::weights, "MemoryAmount: the tensors' bytes.")
      .def_readonly("reserve", &CheckpointEstimate::reserve,
                    "MemoryAmount of the reserve: the user's assumption, not a measurement.")
      .def_readonly("total", &CheckpointEstimate::total, "MemoryAmount: weights + reserve.")
      .def_readonly("by_tensor", &CheckpointEstimate::by_tensor)
      .def_readonly("tensors", &CheckpointEstimate::tensors,
                    "list of CheckpointTensor (by shard, then offset) when by_tensor; else empty.")
      .def_property_readonly_static(
          "not_included", [](py::object) { return CheckpointEstimate::not_included(); },
          "What the estimate leaves out (activations, KV cache, ...), as a list of str.")
      .def("__repr__", [](const CheckpointEstimate& e) {
        return "CheckpointEstimate(resolved=" + py::repr(py::str(e.resolved)).cast<std::string>() +
               ", tensors=" + std::to_string(e.tensor_count) + ", parameters=" + e.parameters.str() +
               ", total_gib=Decimal('" + e.total.gib.str() + "'))";
      });
  add_report_methods(estimate, "checkpoint_estimate_html");
}

}  // namespace

void register_estimate(py::module_& m) {
  py::class_<MemoryAmount>(m, "MemoryAmount", "One amount of memory in three exact units.")
      .def_property_readonly(
          "bytes", [](const MemoryAmount& amount) { return exact_number(amount.bytes); },
          "Bytes: an int for weights; a decimal reserve can make it a decimal.Decimal.")
      .def_property_readonly(
          "gib", [](const MemoryAmount& amount) { return exact_decimal(amount.gib); },
          "GiB (2**30 bytes), exact, as decimal.Decimal.")
      .def_property_readonly(
          "gb", [](const MemoryAmount& amount) { return exact_decimal(amount.gb); },
          "GB (10**9 bytes), exact, as decimal.Decimal.")
      .def("__repr__", [](const MemoryAmount& amount) {
        return "MemoryAmount(bytes=" + amount.bytes.str() + ", gib=Decimal('" +
               amount.gib.str() + "'), gb=Decimal('" + amount.gb.str() + "'))";
      });

  py::class_<MemoryEstimate> estimate(m, "MemoryEstimate", R"pbdoc(
    Weight memory for a parameter count at a storage bit width, with the user's reserve.

    Bytes are ceil(parameters * bits / 8). Not included: see ``not_included``.
  )pbdoc");
  estimate
      .def_property_readonly(
          "parameters", [](const MemoryEstimate& e) { return exact_integer(e.parameters); },
          "The parameter count (int).")
      .def_property_readonly(
          "bits", [](const MemoryEstimate& e) { return exact_integer(e.bits); },
          "Storage bits per parameter (int).")
      .def_property_readonly(
          "total_bits", [](const MemoryEstimate& e) { return exact_integer(e.total_bits); },
          "parameters * bits (int).")
      .def_readonly("weights", &MemoryEstimate::weights,
                    "MemoryAmount of the weights: ceil(total_bits / 8) bytes.")
      .def_readonly("reserve", &MemoryEstimate::reserve,
                    "MemoryAmount of the reserve: the user's assumption, not a measurement.")
      .def_readonly("total", &MemoryEstimate::total, "MemoryAmount: weights + reserve.")
      .def_property_readonly_static(
          "not_included", [](py::object) { return MemoryEstimate::not_included(); },
          "What the estimate leaves out (activations, KV cache, ...), as a list of str.")
      .def("__repr__", [](const MemoryEstimate& e) {
        return "MemoryEstimate(parameters=" + e.parameters.str() + ", bits=" + e.bits.str() +
               ", total_gib=Decimal('" + e.total.gib.str() + "'))";
      });
  add_report_methods(estimate, "estimate_html");

  register_checkpoint_estimate(m);

  const EstimateRequest defaults;
  const CheckpointRequest checkpoint_defaults;
  py::class_<MemoryEstimator>(m, "MemoryEstimator",
                              "Weight memory from a parameter count and a bit width, or from a "
                              "safetensors checkpoint's headers (no GPU).")
      .def(py::init<>())
      .def(
          "estimate_checkpoint",
          [](const MemoryEstimator& estimator, py::handle checkpoint, py::handle reserve_gib,
             py::handle by_tensor, py::handle timeout) {
            CheckpointRequest request;
            request.checkpoint = required_path_keyword(checkpoint, "checkpoint");
            request.reserve_gib = numeric_keyword_text(reserve_gib, "reserve_gib");
            request.by_tensor = bool_keyword(by_tensor, "by_tensor");
            if (!timeout.is_none()) request.timeout = numeric_keyword_text(timeout, "timeout");
            py::gil_scoped_release release;  // file reads, or HTTP requests for a Hub id
            return estimator.estimate_checkpoint(request);
          },
          py::arg("checkpoint"), py::arg("reserve_gib") = checkpoint_defaults.reserve_gib,
          py::arg("by_tensor") = py::bool_(checkpoint_defaults.by_tensor), py::arg("timeout") = py::none(),
          R"pbdoc(
            Weight memory of a safetensors checkpoint, from its headers only.

            Args:
                checkpoint: a .safetensors file, a sharded checkpoint's
                    *.safetensors.index.json, or a folder holding exactly one index (else
                    exactly one .safetensors file); str or os.PathLike. Or a Hugging Face
                    Hub id "org/name[@revision]": the cache, else the headers over HTTPS.
                reserve_gib: a reserve to add, in GiB (non-negative). Default "0".
                by_tensor: keep every tensor in ``tensors`` (and list them in the reports).
                timeout: with a Hub id, seconds per HTTP request (None: 10).

            Returns:
                CheckpointEstimate: per dtype tensors, parameters and bytes; the total.

            Raises:
                DataFileError: (a ValueError) "PATH: reason": a missing file, one that is not
                    a regular file, or not a valid safetensors checkpoint.
                UsageError: an empty path or a malformed reserve; a Hub id that names
                    nothing that can be read (no such repository, a gated one).
                HubUnreachable: (a ConnectionError) a Hub id's request failed on the way.
          )pbdoc")
      .def(
          "estimate",
          [](const MemoryEstimator& estimator, py::handle parameters, py::handle bits,
             py::handle reserve_gib) {
            EstimateRequest request;
            request.parameters = numeric_keyword_text(parameters, "parameters");
            request.bits = numeric_keyword_text(bits, "bits");
            request.reserve_gib = numeric_keyword_text(reserve_gib, "reserve_gib");
            return estimator.estimate(request);
          },
          py::arg("parameters"), py::arg("bits"), py::arg("reserve_gib") = defaults.reserve_gib,
          R"pbdoc(
            Estimates weight memory exactly.

            Args:
                parameters: a positive whole count, as an int or a str; a str may use a
                    K/M/B/T shorthand ("7B", "1.5M").
                bits: storage bits per parameter, a positive int (16, 4).
                reserve_gib: a reserve to add, in GiB (non-negative; int, str, Decimal or
                    float). An assumption you choose, not a measurement. Default "0".

            Returns:
                MemoryEstimate: bytes, GiB and GB of the weights, the reserve and the total.

            Raises:
                UsageError: (a ValueError) a malformed value, naming the keyword.
                TypeError: a value of the wrong type.
          )pbdoc");
}

}  // namespace iteragpu::python
