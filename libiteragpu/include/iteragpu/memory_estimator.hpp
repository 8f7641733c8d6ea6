#pragma once
// Weight memory from a parameter count and a storage bit width, exactly (SPEC §1), or from
// the safetensors checkpoint a user actually has (its headers only).

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "iteragpu/exact_decimal.hpp"
#include "iteragpu/model_origin.hpp"

namespace iteragpu {

struct EstimateRequest {
  // Positive integer ("7000000000") or shorthand with K, M, B or T (10^3..10^12):
  // "7B", "1.5M", "70B". The result must be a whole number of parameters.
  std::string parameters;
  // Storage bits per parameter, a positive integer ("16", "4").
  std::string bits;
  // A reserve the user chooses to add, in GiB (non-negative decimal). An assumption, not a
  // measurement.
  std::string reserve_gib = "0";
};

// One amount of memory in three exact units.
struct MemoryAmount {
  ExactDecimal bytes;  // integral for weights; may be fractional for a decimal reserve
  ExactDecimal gib;    // bytes / 2^30
  ExactDecimal gb;     // bytes / 10^9
};

struct MemoryEstimate {
  ExactDecimal parameters;  // the parsed parameter count (integer)
  ExactDecimal bits;        // bits per parameter (integer)
  ExactDecimal total_bits;  // parameters × bits
  MemoryAmount weights;     // ceil(total_bits / 8) bytes
  MemoryAmount reserve;     // the user's assumption
  MemoryAmount total;       // weights + reserve

  // What the estimate leaves out (activations, KV cache, ...).
  static const std::vector<std::string>& not_included();
  // Schema "iteragpu.estimate" (data/schema/estimate.schema.json).
  std::string to_json() const;
  std::string to_text() const;
};

struct CheckpointRequest {
  // A .safetensors file, a sharded checkpoint's *.safetensors.index.json, or a folder that
  // holds exactly one such index (else exactly one .safetensors file); or a Hugging Face Hub
  // id "org/name[@revision]" (iteragpu/model_origin.hpp).
  std::string checkpoint;
  // As EstimateRequest::reserve_gib: a reserve in GiB you choose to add (default none).
  std::string reserve_gib = "0";
  // Keep every tensor in CheckpointEstimate::tensors and list them in the reports.
  bool by_tensor = false;
  // With a Hub id: seconds per HTTP request, a decimal above 0, at most 600.
  std::string timeout = "10";
};

// One tensor as its shard's header declares it (checked: shape × dtype = its data size).
struct CheckpointTensor {
  std::string name;
  std::string dtype;                  // as written in the header: "BF16", "F8_E4M3", "F4"
  std::vector<std::uint64_t> shape;   // [] for a scalar
  std::uint64_t parameters = 0;       // elements: the product of the shape
  std::uint64_t bytes = 0;            // data_offsets end − begin
  std::string shard;                  // the file that holds it (as the index names it)
  std::uint64_t offset = 0;           // data_offsets begin, from the first data byte
};

// All tensors of one dtype.
struct CheckpointDtypeTotal {
  std::string dtype;
  unsigned bits_per_element = 0;  // 4 (F4), 6 (F6_*), 8, 16, 32, 64
  std::uint64_t tensors = 0;
  ExactDecimal parameters;        // integer
  MemoryAmount memory;            // integral bytes
};

// One file read: the checkpoint itself, or one shard of it.
struct CheckpointShard {
  std::string name;                 // as the index names it, or the file name
  std::string path;                 // as opened
  std::uint64_t file_bytes = 0;
  std::uint64_t header_bytes = 0;   // N, the JSON header after the 8-byte length
  std::uint64_t data_bytes = 0;     // file_bytes − 8 − N: exactly the tensors' bytes
  std::uint64_t tensors = 0;
};

struct CheckpointEstimate {
  std::string checkpoint;        // the path as given
  ModelOrigin origin;            // where a Hub id's files were read from
  std::string resolved;          // the .safetensors file or the index that was read
  bool sharded = false;          // read through an index
  // The index's metadata.total_size when it is an integer; it is not trusted (the figures
  // come from the shards' headers), only compared.
  std::optional<std::uint64_t> index_total_size;
  std::vector<CheckpointShard> shards;      // sorted by name
  std::vector<CheckpointDtypeTotal> dtypes;  // most bytes first, then by name
  std::uint64_t tensor_count = 0;
  ExactDecimal parameters;       // all elements (integer)
  MemoryAmount weights;          // the sum of the tensors' bytes
  MemoryAmount reserve;          // the user's assumption
  MemoryAmount total;            // weights + reserve
  bool by_tensor = false;
  std::vector<CheckpointTensor> tensors;  // when by_tensor: by shard, then offset in it

  // What the estimate leaves out (activations, KV cache, ...).
  static const std::vector<std::string>& not_included();
  // Schema "iteragpu.checkpoint-estimate" (data/schema/checkpoint-estimate.schema.json).
  std::string to_json() const;
  std::string to_text() const;
};

class MemoryEstimator {
 public:
  // Throws UsageError naming the field on malformed input.
  MemoryEstimate estimate(const EstimateRequest& request) const;
  // Reads only the headers of the checkpoint's files (never the tensor data) and validates
  // them strictly. Throws UsageError (empty path, bad reserve) or DataFileError
  // "PATH: reason" (a file that is missing, not a regular file, or not a valid safetensors
  // checkpoint).
  CheckpointEstimate estimate_checkpoint(const CheckpointRequest& request) const;
};

}  // namespace iteragpu
