#pragma once
// Where a model's files were read from. `--model` (and `estimate --checkpoint`) take a local
// path, or a Hugging Face Hub id "org/name[@revision]": a path that exists is read as it is;
// an id is read from the Hugging Face cache when its snapshot there is complete, else its
// config.json and safetensors headers are fetched from the Hub (HF_ENDPOINT) by HTTP range
// requests, never the weights. Every output of a model named by an id records the commit read.

#include <cstdint>
#include <string>

namespace iteragpu {

struct ModelOrigin {
  enum class Kind { kPath, kHuggingFaceCache, kHub };
  Kind kind = Kind::kPath;
  std::string given;       // as written: "./llama", "Qwen/Qwen2.5-7B-Instruct@main"
  std::string repository;  // "org/name" (cache, Hub)
  std::string revision;    // as asked; "main" when not given (cache, Hub)
  std::string commit;      // the 40-hex commit whose files were read (cache, Hub)
  std::string location;    // the snapshot folder (cache) or the endpoint (Hub); the path itself
  // Over HTTP (Hub): requests made (redirects included), body bytes read, wall time.
  std::uint64_t requests = 0;
  std::uint64_t bytes = 0;
  double seconds = 0;

  bool is_hub_id() const { return kind != Kind::kPath; }
  // One line naming what was read: "Model: Qwen/Qwen2.5-7B-Instruct, commit a09a354... (the
  // Hugging Face Hub at https://huggingface.co, config.json and safetensors headers only)";
  // empty for a path (the outputs of a path are what they were before ids existed).
  std::string text() const;
  // text() shown printable with its newline, for the heading of a report; empty for a path.
  std::string heading_line() const;
  // For --verbose: the requests and bytes read, and how long it took.
  std::string traffic_text() const;
};

}  // namespace iteragpu
