// libFuzzer target for a checkpoint's config.json (libiteragpu/src/workload/decoder_checkpoint.cpp,
// through parse_decoder_config of workload/decoder_config.hpp): the input is config.json's
// text. A refused input must end in an iteragpu::Error (UsageError("model", "SOURCE: ...") or
// DataFileError "SOURCE: ...", one line), never in a crash, a hang, UB or another exception;
// an accepted one must be within the bounds the parser promises.
//
// The combined path, cheaply: an accepted config (a small share of the inputs) is also
// written as config.json into one of two fixed tiny checkpoint folders made at start-up
// (a 1-layer Llama, untied; a 1-layer Qwen3, tied, with a rotary buffer) and the folder read
// with DecoderCheckpoint::read, so the cross-check of config.json against the safetensors
// headers runs too; what read() resolves must agree with the text-only parse.
// Seeds: tests/fuzz/corpus/decoder_config_fuzzer/ (tiny-*-checkpoint.json match the folders).
// ITERAGPU_FUZZ_VERBOSE=1 prints each input's outcome (for triage: bin/decoder_config_fuzzer FILE...).
#include <stdlib.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "iteragpu/decoder_checkpoint.hpp"
#include "iteragpu/error.hpp"
#include "workload/decoder_config.hpp"

namespace {

using iteragpu::DecoderArchitecture;

constexpr std::int64_t kMaxDimension = std::int64_t{1} << 24;
constexpr std::int64_t kMaxLayers = 4096;
const std::string kSource = "fuzz/config.json";

const bool kVerbose = std::getenv("ITERAGPU_FUZZ_VERBOSE") != nullptr;

void say(const char* what, const std::string& detail) {
  if (kVerbose) std::fprintf(stderr, "%s: %s\n", what, detail.c_str());
}

void require(bool condition) {
  if (!condition) std::abort();
}

bool starts_with(const std::string& text, const std::string& prefix) {
  return text.compare(0, prefix.size(), prefix) == 0;
}

// A BF16 safetensors file holding `tensors` (name, shape), zero data, offsets in order.
void write_safetensors(const std::string& path,
                       const std::vector<std::pair<std::string, std::vector<std::int64_t>>>& tensors) {
  std::string header = "{";
  std::uint64_t offset = 0;
  for (const auto& [name, shape] : tensors) {
    std::uint64_t elements = 1;
    std::string dims;
    for (const std::int64_t d : shape) {
      elements *= static_cast<std::uint64_t>(d);
      dims += (dims.empty() ? "" : ",") + std::to_string(d);
    }
    header += (header.size() > 1 ? "," : "") + std::string("\"") + name + "\":{\"dtype\":\"BF16\",\"shape\":[" +
              dims + "],\"data_offsets\":[" + std::to_string(offset) + "," + std::to_string(offset + 2 * elements) +
              "]}";
    offset += 2 * elements;
  }
  header += "}";
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  std::uint64_t length = header.size();
  for (int i = 0; i < 8; ++i) out.put(static_cast<char>((length >> (8 * i)) & 0xff));
  out << header << std::string(offset, '\0');
}

// The two checkpoint folders: hidden 8, intermediate 16, 2 heads, 1 kv head, head_dim 4,
// vocab 16, 1 layer, BF16.
struct Folders {
  std::string root, llama, qwen3;
};

// The folders' root, in a plain array: still there when the atexit handler removes it (after
// the static Folders is destroyed).
char root_pattern[] = "/tmp/iteragpu-fuzz-decoder-XXXXXX";

const Folders& folders() {
  static const Folders made = [] {
    const char* root = mkdtemp(root_pattern);
    require(root != nullptr);
    Folders f{root, std::string(root) + "/llama", std::string(root) + "/qwen3"};
    std::filesystem::create_directory(f.llama);
    std::filesystem::create_directory(f.qwen3);
    const auto layer = [](bool qk_norm) {
      std::vector<std::pair<std::string, std::vector<std::int64_t>>> t = {{"model.embed_tokens.weight", {16, 8}}};
      const std::string l = "model.layers.0.";
      t.push_back({l + "self_attn.q_proj.weight", {8, 8}});
      t.push_back({l + "self_attn.k_proj.weight", {4, 8}});
      t.push_back({l + "self_attn.v_proj.weight", {4, 8}});
      t.push_back({l + "self_attn.o_proj.weight", {8, 8}});
      if (qk_norm) {
        t.push_back({l + "self_attn.q_norm.weight", {4}});
        t.push_back({l + "self_attn.k_norm.weight", {4}});
      }
      t.push_back({l + "mlp.gate_proj.weight", {16, 8}});
      t.push_back({l + "mlp.up_proj.weight", {16, 8}});
      t.push_back({l + "mlp.down_proj.weight", {8, 16}});
      t.push_back({l + "input_layernorm.weight", {8}});
      t.push_back({l + "post_attention_layernorm.weight", {8}});
      t.push_back({"model.norm.weight", {8}});
      return t;
    };
    auto llama = layer(false);
    llama.push_back({"lm_head.weight", {16, 8}});
    write_safetensors(f.llama + "/model.safetensors", llama);
    auto qwen3 = layer(true);
    qwen3.push_back({"model.layers.0.self_attn.rotary_emb.inv_freq", {2}});
    write_safetensors(f.qwen3 + "/model.safetensors", qwen3);
    std::atexit([] {
      std::error_code ignored;
      std::filesystem::remove_all(root_pattern, ignored);
    });
    return f;
  }();
  return made;
}

void check_refusal(const iteragpu::Error& error, const std::string& source) {
  const std::string message = error.what();
  require(message.find('\n') == std::string::npos);
  if (const auto* usage = dynamic_cast<const iteragpu::UsageError*>(&error)) {
    require(usage->field() == "model" && starts_with(usage->reason(), source + ": "));
  } else {
    require(dynamic_cast<const iteragpu::DataFileError*>(&error) != nullptr && starts_with(message, source + ": "));
  }
}

void check_accepted(const DecoderArchitecture& a) {
  const auto within = [](std::int64_t v, std::int64_t max) { return v >= 1 && v <= max; };
  const bool known = (a.architecture == "LlamaForCausalLM" && a.model_type == "llama") ||
                     (a.architecture == "MistralForCausalLM" && a.model_type == "mistral") ||
                     (a.architecture == "Qwen2ForCausalLM" && a.model_type == "qwen2") ||
                     (a.architecture == "Qwen3ForCausalLM" && a.model_type == "qwen3");
  require(known);
  require(within(a.layers, kMaxLayers));
  for (const std::int64_t v : {a.hidden_size, a.intermediate_size, a.attention_heads, a.kv_heads, a.head_dim,
                               a.vocab_size, a.max_position_embeddings})
    require(within(v, kMaxDimension));
  require(a.attention_heads % a.kv_heads == 0 && a.head_dim % 2 == 0);
  require(a.sliding_window >= 0 && a.sliding_window <= kMaxDimension);
  require(std::isfinite(a.rms_norm_eps) && a.rms_norm_eps > 0);
  require(std::isfinite(a.rope_theta) && a.rope_theta > 0);
  if (a.rope_type == "llama3") {
    require(std::isfinite(a.rope_factor) && a.rope_factor >= 1);
    require(a.rope_low_freq_factor > 0 && std::isfinite(a.rope_high_freq_factor) &&
            a.rope_high_freq_factor > a.rope_low_freq_factor);
    require(within(a.rope_original_max_position_embeddings, kMaxDimension));
  } else {
    require(a.rope_type == "default");
  }
  require(a.dtype.empty() || a.dtype == "bfloat16" || a.dtype == "float16" || a.dtype == "float32");
}

bool same(const DecoderArchitecture& x, const DecoderArchitecture& y) {
  return x.architecture == y.architecture && x.model_type == y.model_type && x.layers == y.layers &&
         x.hidden_size == y.hidden_size && x.intermediate_size == y.intermediate_size &&
         x.attention_heads == y.attention_heads && x.kv_heads == y.kv_heads && x.head_dim == y.head_dim &&
         x.vocab_size == y.vocab_size && x.max_position_embeddings == y.max_position_embeddings &&
         x.sliding_window == y.sliding_window && x.rms_norm_eps == y.rms_norm_eps && x.rope_theta == y.rope_theta &&
         x.rope_type == y.rope_type && x.rope_factor == y.rope_factor &&
         x.rope_low_freq_factor == y.rope_low_freq_factor && x.rope_high_freq_factor == y.rope_high_freq_factor &&
         x.rope_original_max_position_embeddings == y.rope_original_max_position_embeddings &&
         x.qkv_bias == y.qkv_bias && x.o_proj_bias == y.o_proj_bias && x.mlp_bias == y.mlp_bias &&
         x.qk_norm == y.qk_norm && x.tie_word_embeddings == y.tie_word_embeddings;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const Folders& f = folders();
  const std::string text(reinterpret_cast<const char*>(data), size);
  DecoderArchitecture parsed;
  try {
    parsed = iteragpu::parse_decoder_config(text, kSource);
  } catch (const iteragpu::Error& error) {
    say("refused", error.what());
    check_refusal(error, kSource);  // the expected outcome for most inputs
    return 0;
  }
  say("accepted", parsed.architecture + " " + std::to_string(parsed.layers) + " layers, dtype \"" + parsed.dtype + "\"");
  check_accepted(parsed);

  // The combined path, for the accepted configs only.
  const std::string folder = parsed.model_type == "qwen3" ? f.qwen3 : f.llama;
  std::ofstream(folder + "/config.json", std::ios::binary | std::ios::trunc)
      .write(text.data(), static_cast<std::streamsize>(text.size()));
  try {
    const iteragpu::DecoderCheckpoint checkpoint = iteragpu::DecoderCheckpoint::read(folder);
    const DecoderArchitecture& a = checkpoint.architecture;
    require(same(a, parsed));
    require(a.dtype == (parsed.dtype.empty() ? "bfloat16" : parsed.dtype));
    require(a.layers == 1 && a.hidden_size == 8 && a.vocab_size == 16);
    std::uint64_t bytes = 0;
    std::int64_t elements = 0;
    for (const auto& tensor : checkpoint.tensors) {
      std::int64_t count = 1;
      for (const std::int64_t d : tensor.shape) count *= d;
      require(tensor.dtype == "BF16" && tensor.bytes == static_cast<std::uint64_t>(2 * count));
      bytes += tensor.bytes;
      elements += count;
    }
    require(bytes == checkpoint.parameter_bytes && elements == checkpoint.parameter_count);
    say("read", folder + ": " + std::to_string(checkpoint.tensors.size()) + " tensors");
  } catch (const iteragpu::Error& error) {
    // Refused by the headers' cross-check: a DataFileError naming a file of the folder.
    const std::string message = error.what();
    say("read refused", message);
    require(message.find('\n') == std::string::npos);
    require(dynamic_cast<const iteragpu::DataFileError*>(&error) != nullptr && starts_with(message, folder + "/"));
  }
  return 0;
}
