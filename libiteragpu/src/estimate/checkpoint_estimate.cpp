// MemoryEstimator::estimate_checkpoint: weight memory from a safetensors checkpoint's
// headers (checkpoint_files.cpp reads and cross-checks them), with its reports.
#include <algorithm>
#include <map>
#include <sstream>

#include "estimate/checkpoint_files.hpp"
#include "estimate/model_files.hpp"
#include "mechanics/exact_arithmetic.hpp"
#include "iteragpu/error.hpp"
#include "iteragpu/memory_estimator.hpp"
#include "mechanics/json_output.hpp"
#include "estimate/memory_amount.hpp"

namespace iteragpu {
namespace {

const char* kBytesNote =
    "bytes are each tensor's data size as its header declares it (data_offsets), checked against "
    "shape x dtype; the tensors cover every file's data exactly; only headers were read";
const char* kLoadNote =
    "quantization scales and any other tensor stored in the checkpoint are included; a framework "
    "may still convert dtypes, tie, drop or pad weights when it loads them, and allocators round "
    "each tensor up (PyTorch's CUDA allocator to a multiple of 512 bytes)";
const char* kReserveNote = "the reserve is an assumption chosen by the user, not a measurement";
const char* kFitNote = "this estimate does not predict whether a real model fits on a given card";

// Text for one line of the report: control bytes escaped, nothing else changed.
std::string printable(const std::string& text) {
  std::string shown;
  for (char c : text) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) {
      static const char* hex = "0123456789abcdef";
      shown += std::string("\\x") + hex[u >> 4] + hex[u & 15];
    } else {
      shown += c;
    }
  }
  return shown;
}

std::string grouped(std::uint64_t value) { return exact::to_exact(BigInt(value)).grouped(0); }

std::string shape_text(const std::vector<std::uint64_t>& shape) {
  std::string text = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
}

// Columns padded to their widest cell; `right` marks the right-aligned ones.
void write_table(std::ostream& out, const std::vector<std::vector<std::string>>& rows,
                 const std::vector<bool>& right) {
  std::vector<std::size_t> width(right.size(), 0);
  for (const auto& row : rows)
    for (std::size_t i = 0; i < row.size(); ++i) width[i] = std::max(width[i], row[i].size());
  for (const auto& row : rows) {
    std::string line;
    for (std::size_t i = 0; i < row.size(); ++i) {
      const std::string pad(width[i] - row[i].size(), ' ');
      line += "  " + (right[i] ? pad + row[i] : (i + 1 == row.size() ? row[i] : row[i] + pad));
    }
    out << line << "\n";
  }
}

std::string index_total_note(const CheckpointEstimate& e) {
  if (!e.index_total_size || ExactDecimal::parse(std::to_string(*e.index_total_size)) == e.weights.bytes)
    return "";
  return "the index's metadata.total_size (" + std::to_string(*e.index_total_size) +
         " bytes) differs from the tensors' bytes (" + e.weights.bytes.str() +
         "); the figures here come from the shards' headers";
}

std::vector<std::string> notes_of(const CheckpointEstimate& e) {
  std::vector<std::string> notes{kBytesNote, kLoadNote, kReserveNote, kFitNote};
  const std::string index_note = index_total_note(e);
  if (!index_note.empty()) notes.push_back(index_note);
  return notes;
}

}  // namespace

const std::vector<std::string>& CheckpointEstimate::not_included() {
  static const std::vector<std::string> items{"activations", "KV cache", "gradients", "optimizer states",
                                              "libraries and the CUDA context"};
  return items;
}

CheckpointEstimate MemoryEstimator::estimate_checkpoint(const CheckpointRequest& request) const {
  if (request.checkpoint.empty())
    throw UsageError("checkpoint", "is empty; expected a .safetensors file, a sharded checkpoint's "
                                   "*.safetensors.index.json, or a folder holding one");
  const Decimal reserve_bytes = reserve_bytes_from_gib(request.reserve_gib);
  const long timeout_ms = parse_hub_timeout_ms(request.timeout, "timeout");
  // A path as it always was (a file, an index or a folder); an id through the cache or the Hub.
  const std::shared_ptr<const ModelFiles> model = open_model_files(request.checkpoint, "checkpoint", {timeout_ms});
  const CheckpointFiles files = model->origin().is_hub_id() ? read_checkpoint_files(*model)
                                                            : read_checkpoint_files(request.checkpoint);

  CheckpointEstimate result;
  result.checkpoint = request.checkpoint;
  result.origin = model->origin();
  result.resolved = files.resolved;
  result.sharded = files.sharded;
  result.index_total_size = files.index_total_size;
  result.by_tensor = request.by_tensor;
  struct Sum {
    unsigned bits = 0;
    std::uint64_t tensors = 0;
    BigInt parameters, bytes;
  };
  std::map<std::string, Sum> sums;
  BigInt parameters = 0, bytes = 0;
  for (const auto& shard : files.shards) {
    result.shards.push_back({shard.name, shard.path, shard.file_bytes, shard.header.header_bytes,
                             shard.header.data_bytes, shard.header.tensors.size()});
    for (const auto& tensor : shard.header.tensors) {
      Sum& sum = sums[tensor.dtype];
      sum.bits = tensor.bits;
      ++sum.tensors;
      sum.parameters += tensor.elements;
      sum.bytes += tensor.bytes();
      parameters += tensor.elements;
      bytes += tensor.bytes();
      ++result.tensor_count;
      if (request.by_tensor)
        result.tensors.push_back({tensor.name, tensor.dtype, tensor.shape, tensor.elements, tensor.bytes(),
                                  shard.name, tensor.begin});
    }
  }
  std::vector<std::pair<std::string, Sum>> ordered(sums.begin(), sums.end());
  std::stable_sort(ordered.begin(), ordered.end(),
                   [](const auto& a, const auto& b) { return a.second.bytes > b.second.bytes; });
  for (const auto& [dtype, sum] : ordered)
    result.dtypes.push_back({dtype, sum.bits, sum.tensors, exact::to_exact(sum.parameters),
                             amount_from_bytes(exact::from_integer(sum.bytes))});

  const Decimal weight_bytes = exact::from_integer(bytes);
  result.parameters = exact::to_exact(parameters);
  result.weights = amount_from_bytes(weight_bytes);
  result.reserve = amount_from_bytes(reserve_bytes);
  result.total = amount_from_bytes(exact::add(weight_bytes, reserve_bytes));
  return result;
}

std::string CheckpointEstimate::to_json() const {
  JsonWriter json("iteragpu.checkpoint-estimate", 1);
  json.key("inputs").begin_object();
  json.key("checkpoint").value(checkpoint);
  json.key("reserve_gib").value(reserve.gib);
  json.key("by_tensor").value(by_tensor);
  json.end_object();
  json.key("checkpoint").begin_object();
  json.key("format").value("safetensors");
  json.key("layout").value(sharded ? "sharded" : "single file");
  json.key("file").value(resolved);
  json.key("index_total_size").value(index_total_size);
  if (origin.is_hub_id()) write_model_source(json, origin);
  json.end_object();
  json.key("shards").begin_array();
  for (const auto& shard : shards) {
    json.begin_object();
    json.key("name").value(shard.name);
    json.key("path").value(shard.path);
    json.key("file_bytes").value(shard.file_bytes);
    json.key("header_bytes").value(shard.header_bytes);
    json.key("data_bytes").value(shard.data_bytes);
    json.key("tensors").value(shard.tensors);
    json.end_object();
  }
  json.end_array();
  json.key("dtypes").begin_array();
  for (const auto& dtype : dtypes) {
    json.begin_object();
    json.key("dtype").value(dtype.dtype);
    json.key("bits_per_element").value(static_cast<int>(dtype.bits_per_element));
    json.key("tensors").value(dtype.tensors);
    json.key("parameters").value(dtype.parameters);
    write_amount(json, "memory", dtype.memory);
    json.end_object();
  }
  json.end_array();
  json.key("tensor_count").value(tensor_count);
  json.key("parameters").value(parameters);
  write_weight_amounts(json, weights, reserve, total);
  json.key("not_included").value(not_included());
  json.key("notes").value(notes_of(*this));
  if (by_tensor) {
    json.key("tensors").begin_array();
    for (const auto& tensor : tensors) {
      json.begin_object();
      json.key("name").value(tensor.name);
      json.key("dtype").value(tensor.dtype);
      json.key("shape").begin_array();
      for (std::uint64_t dimension : tensor.shape) json.value(dimension);
      json.end_array();
      json.key("parameters").value(tensor.parameters);
      json.key("bytes").value(tensor.bytes);
      json.key("shard").value(tensor.shard);
      json.key("offset").value(tensor.offset);
      json.end_object();
    }
    json.end_array();
  }
  return json.finish();
}

std::string CheckpointEstimate::to_text() const {
  std::ostringstream out;
  out << "Weight memory of a safetensors checkpoint (headers only; no tensor data read)\n"
      << "  checkpoint       " << printable(resolved)
      << (sharded ? " (sharded: " + std::to_string(shards.size()) + " shard" + (shards.size() == 1 ? "" : "s") + ")"
                  : std::string())
      << "\n";
  out << origin.heading_line();
  std::vector<std::vector<std::string>> files{{"file", "tensors", "header bytes", "data bytes"}};
  for (const auto& shard : shards)
    files.push_back({printable(shard.name), grouped(shard.tensors), grouped(shard.header_bytes),
                     grouped(shard.data_bytes)});
  out << "\n";
  write_table(out, files, {false, true, true, true});

  if (by_tensor) {
    std::vector<std::vector<std::string>> rows{{"tensor", "dtype", "shape", "bytes", "shard"}};
    for (const auto& tensor : tensors)
      rows.push_back({printable(tensor.name), tensor.dtype, shape_text(tensor.shape), grouped(tensor.bytes),
                      printable(tensor.shard)});
    out << "\nTensors (" << grouped(tensors.size()) << ", by shard, then by offset in the shard)\n";
    write_table(out, rows, {false, false, false, true, false});
  }

  std::vector<std::vector<std::string>> rows{{"dtype", "bits", "tensors", "parameters", "bytes", "GiB", "GB"}};
  const auto add_row = [&rows](const std::string& name, const std::string& bits, std::uint64_t count,
                               const ExactDecimal& elements, const MemoryAmount& memory) {
    rows.push_back({name, bits, grouped(count), elements.grouped(0), memory.bytes.grouped(0),
                    memory.gib.readable(2), memory.gb.readable(2)});
  };
  for (const auto& dtype : dtypes)
    add_row(dtype.dtype, std::to_string(dtype.bits_per_element), dtype.tensors, dtype.parameters, dtype.memory);
  add_row("all", "", tensor_count, parameters, weights);
  out << "\n";
  write_table(out, rows, {false, true, true, true, true, true, true});

  out << "\n"
      << weight_amount_lines(weights, reserve, total) << "\n"
      << "Bytes: each tensor's data size as its header declares it, checked against shape x dtype;\n"
      << "the tensors cover every file's data exactly. Quantization scales and any other tensor in\n"
      << "the checkpoint are included; a framework may still convert, tie or drop weights on load.\n"
      << kAmountRoundingNote;
  const std::string index_note = index_total_note(*this);
  if (!index_note.empty()) out << "Note: " << index_note << ".\n";
  out << "Not included: ";
  const auto& items = not_included();
  for (std::size_t i = 0; i < items.size(); ++i) out << (i ? ", " : "") << items[i];
  out << ".\nThis estimate does not predict whether a real model fits on a given card.\n";
  return out.str();
}

}  // namespace iteragpu
