#pragma once
// The second workload: a local dense decoder-only checkpoint run as transformers runs it
// (decoder_workload.cpp; its ops in libiteragpu/backend_torch/decoder_module.cpp).

#include <memory>
#include <string>

#include "iteragpu/decoder_architecture.hpp"
#include "iteragpu/decoder_checkpoint.hpp"
#include "iteragpu/measure_configuration.hpp"
#include "mechanics/json_input.hpp"
#include "mechanics/json_output.hpp"
#include "workload/decoder_payload.hpp"
#include "workload/workload.hpp"

namespace iteragpu {

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
// (the checkpoint's when left out), width and hidden (its hidden and intermediate sizes);
// then checks the rest as decoder_workload_for does.
void resolve_decoder_configuration(MeasureConfiguration& configuration);

// The checkpoint a configuration names, read from the files its checked() found (or found
// again, for a configuration read back from JSON).
DecoderCheckpoint checkpoint_of(const MeasureConfiguration& configuration);


}  // namespace iteragpu
