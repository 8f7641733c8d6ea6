#pragma once
// The second workload: a local dense decoder-only checkpoint run as transformers runs it
// (decoder_workload.cpp; its ops in libiteragpu/backend_torch/decoder_module.cpp).

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "iteragpu/decoder_architecture.hpp"
#include "iteragpu/decoder_checkpoint.hpp"
#include "iteragpu/measure_configuration.hpp"
#include "mechanics/json_input.hpp"
#include "mechanics/json_output.hpp"
#include "workload/configuration_bounds.hpp"
#include "workload/decoder_payload.hpp"
#include "workload/workload.hpp"

namespace iteragpu {

// What every workload that runs a checkpoint's decoder (generation, fine-tuning) holds and
// answers alike: the checkpoint's record, its tensors when read from its folder (none for a
// checkpoint recorded in a measurement file: described, not runnable), the token ids' shape
// and the run's dtype (the checkpoint's when the configuration leaves it out).
class CheckpointWorkload : public Workload {
 public:
  // UsageError for an unknown dtype or a batch or context out of bounds.
  CheckpointWorkload(CheckpointRecord checkpoint, std::vector<DecoderTensor> tensors,
                     const MeasureConfiguration& configuration);

  std::optional<CheckpointRecord> checkpoint_record() const override { return checkpoint_; }
  // from_pretrained's allocations, and the token ids (int64).
  void allocate_model(AllocationRecorder& allocator) const override;
  void allocate_inputs(AllocationRecorder& allocator) const override { allocator.allocate(input_bytes()); }
  std::uint64_t parameter_bytes() const override;
  std::uint64_t input_bytes() const override { return static_cast<std::uint64_t>(batch_ * context_) * 8; }
  // A bias-fused projection takes addmm's cuBLASLt path.
  bool uses_cublaslt() const override;

 protected:
  // The spec of a run of `kind` on `device_index`, its payload still to set (UsageError for a
  // recorded checkpoint: it cannot run).
  WorkloadSpec checkpoint_spec(const char* kind, int device_index, std::uint64_t seed) const;
  std::uint64_t dtype_bytes() const { return static_cast<std::uint64_t>(dtype_bytes_of(dtype_)); }
  // Refuses (UsageError) the sequences this bounded measurement does not run or the
  // checkpoint cannot describe: batch × (context + new tokens) token ids past 2³¹, positions
  // past max_position_embeddings, a sliding window no longer than them.
  void check_positions(std::int64_t new_tokens) const;
  // `key` and the value, or null when there is none (a run record's optional figures).
  template <typename Number>
  static void write_optional(JsonWriter& json, const char* key, const std::optional<Number>& value) {
    json.key(key);
    if (value) {
      json.value(*value);
    } else {
      json.null();
    }
  }
  // "LlamaForCausalLM (16 layers, hidden 2048, ...)", as headings name the model.
  std::string architecture_text() const;
  // Why this checkpoint cannot be predicted, or empty: a checkpoint recorded in a measurement
  // file (no folder to read), or SDPA outside its grouped-query path (repeat_kv copies and
  // another backend, not modelled). `measure_command` is the command that measures it instead.
  std::string checkpoint_prediction_refusal(const std::string& measure_command) const;

  CheckpointRecord checkpoint_;
  std::vector<DecoderTensor> tensors_;
  std::int64_t batch_, context_;
  std::string dtype_;
};

// The workload of a configuration whose `model` names a checkpoint folder (reads and checks
// config.json and the safetensors headers; UsageError or DataFileError).
std::unique_ptr<const Workload> decoder_workload_for(const MeasureConfiguration& configuration);

// The workload of a measurement file that recorded its checkpoint (`decoder_model`): it
// describes the run without the checkpoint's files and cannot run it.
std::unique_ptr<const Workload> recorded_decoder_workload(const MeasureConfiguration& configuration,
                                                          const CheckpointRecord& record);
// What a measurement file records of a checkpoint (its folder, architecture, files, the run's
// dtype): the members a checkpoint workload's section begins with.
void write_checkpoint_members(JsonWriter& json, const CheckpointRecord& checkpoint, const std::string& dtype);
// The record of a checkpoint read from its files.
CheckpointRecord record_of(const DecoderCheckpoint& checkpoint);
// The record a measurement file wrote in its `decoder_model` section (DataFileError).
CheckpointRecord read_checkpoint_record(const JsonObjectReader& decoder_model);

// Resolves what the checkpoint decides in a configuration whose `model` names one: the dtype
// (the checkpoint's when left out), width and hidden (its hidden and intermediate sizes).
// Returns the checkpoint, for the workload to check the rest.
DecoderCheckpoint resolve_checkpoint_configuration(MeasureConfiguration& configuration);
// That, then the rest checked as decoder_workload_for does.
void resolve_decoder_configuration(MeasureConfiguration& configuration);

// The checkpoint a configuration names, read from the files its checked() found (or found
// again, for a configuration read back from JSON).
DecoderCheckpoint checkpoint_of(const MeasureConfiguration& configuration);


}  // namespace iteragpu
