#pragma once
// config.json of a dense decoder checkpoint, read from its text alone (no file access):
// what DecoderCheckpoint::read (decoder_checkpoint.cpp) does with the file's content, split
// out so that the parsing can be fuzzed (tests/fuzz/decoder_config_fuzzer.cpp).

#include <string>

#include "iteragpu/decoder_architecture.hpp"
#include "iteragpu/decoder_checkpoint.hpp"

namespace iteragpu {

class ModelFiles;

// DecoderCheckpoint::read on any model's files: a folder, a cache snapshot, a Hub snapshot
// of headers (estimate/model_files.hpp). The checkpoint's `directory` is the model as given.
DecoderCheckpoint read_decoder_checkpoint(const ModelFiles& files);

// The architecture `text` (config.json's content) describes, resolved as transformers
// resolves it. `source` names the file in messages ("DIR/config.json"). Not JSON or not an
// object: InputFileError "SOURCE: reason" (a DataFileError); a member of the wrong type or a
// required one missing: DataFileError "SOURCE: at /field: reason"; an architecture or value
// that is not supported: UsageError("model", "SOURCE: field ...; accepted: ..."). `dtype` is
// set only when config.json gives one (dtype or torch_dtype), else left "".
DecoderArchitecture parse_decoder_config(const std::string& text, const std::string& source);

}  // namespace iteragpu
