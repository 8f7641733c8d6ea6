#include "iteragpu/decoder_checkpoint.hpp"

#include <errno.h>
#include <sys/stat.h>

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <cmath>
#include <cstring>
#include <unordered_map>

#include "estimate/checkpoint_files.hpp"
#include "estimate/model_files.hpp"
#include "estimate/safetensors_header.hpp"
#include "iteragpu/error.hpp"
#include "mechanics/input_file.hpp"
#include "mechanics/json_input.hpp"
#include "mechanics/quantity_parser.hpp"
#include "workload/decoder_config.hpp"

namespace iteragpu {
namespace {

// Bounds on config.json's integers: far beyond any real model, small enough that a tensor's
// shape (a product of two of them) stays exact in 64 bits. What a run forms from them with the
// batch and context is a CheckedCount, exact or refused (tests/cpp/prediction_arithmetic_test.cpp
// drives the widest shapes to that limit).
constexpr std::int64_t kMaxDimension = std::int64_t{1} << 24;
constexpr std::int64_t kMaxLayers = 4096;

constexpr const char* kAcceptedArchitectures =
    "LlamaForCausalLM, MistralForCausalLM, Qwen2ForCausalLM, Qwen3ForCausalLM (dense decoder-only)";

enum class Family { kLlama, kMistral, kQwen2, kQwen3 };

struct KnownArchitecture {
  const char* architecture;
  const char* model_type;
  const char* config_class;
  Family family;
};

constexpr KnownArchitecture kKnown[] = {
    {"LlamaForCausalLM", "llama", "LlamaConfig", Family::kLlama},
    {"MistralForCausalLM", "mistral", "MistralConfig", Family::kMistral},
    {"Qwen2ForCausalLM", "qwen2", "Qwen2Config", Family::kQwen2},
    {"Qwen3ForCausalLM", "qwen3", "Qwen3Config", Family::kQwen3},
};

// A JSON value as a message shows it: a string quoted, anything else compact and cut short.
std::string shown(const rapidjson::Value& value) {
  if (value.IsString()) return quoted_for_message(std::string(value.GetString(), value.GetStringLength()));
  if (value.IsObject()) return "an object";
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
  value.Accept(writer);
  std::string text = buffer.GetString();
  if (text.size() > 40) text = text.substr(0, 40) + "...";
  return text;
}

std::string shape_text(const std::vector<std::int64_t>& shape) {
  std::string text = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
}

std::string shape_text(const std::vector<std::uint64_t>& shape) {
  std::string text = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
}

std::string number_text(double value) {
  rapidjson::Value number(value);
  return shown(number);
}

// config.json, read member by member: a member of the wrong JSON type (or a required one
// missing) is a DataFileError "PATH: at /field: reason" (JsonObjectReader); a value that is
// well-formed but not supported is UsageError("model", "PATH: field ...; accepted: ...").
class ConfigJson {
 public:
  ConfigJson(const rapidjson::Value& root, std::string path)
      : root_(root), path_(std::move(path)), json_(root, path_) {}

  const std::string& path() const { return path_; }
  const JsonObjectReader& json() const { return json_; }

  // The member, or nullptr when absent or null (transformers treats both as "not given").
  const rapidjson::Value* given(const char* name) const {
    const auto found = root_.FindMember(name);
    if (found == root_.MemberEnd() || found->value.IsNull()) return nullptr;
    return &found->value;
  }
  bool present(const char* name) const { return root_.HasMember(name); }

  [[noreturn]] void unsupported(const std::string& reason) const {
    throw UsageError("model", path_ + ": " + reason);
  }

  std::int64_t integer(const char* name) const { return json_.int64(name); }
  std::int64_t integer_or(const char* name, std::int64_t otherwise) const {
    return given(name) ? json_.int64(name) : otherwise;
  }
  double number_or(const char* name, double otherwise) const {
    return given(name) ? json_.number(name) : otherwise;
  }
  bool flag_or(const char* name, bool otherwise) const { return given(name) ? json_.flag(name) : otherwise; }
  std::string text_or(const char* name, const std::string& otherwise) const {
    return given(name) ? json_.text(name) : otherwise;
  }

  // `value` of field `name` from 1 to `maximum`, else UsageError naming the field.
  std::int64_t bounded(const std::string& name, std::int64_t value, std::int64_t maximum,
                       const std::string& note = "") const {
    if (value < 1 || value > maximum)
      unsupported(name + " is " + std::to_string(value) + note + "; accepted: a whole number from 1 to " +
                  std::to_string(maximum));
    return value;
  }

 private:
  const rapidjson::Value& root_;
  std::string path_;
  JsonObjectReader json_;
};

// The one architecture config.json names, checked against model_type.
const KnownArchitecture& architecture_of(const ConfigJson& config) {
  const std::string refused = " is not supported; accepted: " + std::string(kAcceptedArchitectures);
  const rapidjson::Value* names = config.given("architectures");
  if (names == nullptr) config.unsupported("architectures (absent)" + refused);
  if (!names->IsArray()) config.unsupported("architectures " + shown(*names) + refused);
  // The names as the file gives them, the first few only: the message stays one short line.
  constexpr rapidjson::SizeType kNamesShown = 3;
  std::string listed = "[";
  for (rapidjson::SizeType i = 0; i < names->Size() && i < kNamesShown; ++i) listed += (i ? ", " : "") + shown((*names)[i]);
  if (names->Size() > kNamesShown) listed += ", ... (" + std::to_string(names->Size()) + " names)";
  listed += "]";
  const KnownArchitecture* known = nullptr;
  if (names->Size() == 1 && (*names)[0].IsString())
    for (const KnownArchitecture& candidate : kKnown)
      if ((*names)[0].GetString() == std::string(candidate.architecture)) known = &candidate;
  if (known == nullptr) config.unsupported("architectures " + listed + refused);
  if (config.given("model_type") != nullptr) {
    const std::string model_type = config.json().text("model_type");
    if (model_type != known->model_type)
      config.unsupported("model_type " + quoted_for_message(model_type) + " does not agree with architectures " +
                         listed + " (model_type \"" + known->model_type + "\"); accepted: " +
                         kAcceptedArchitectures);
  }
  return *known;
}

// Fields whose presence means arithmetic the decoder workload does not reproduce.
void refuse_unsupported_features(const ConfigJson& config) {
  if (const auto* value = config.given("quantization_config"))
    config.unsupported("quantization_config is " + shown(*value) +
                       ": quantized checkpoints are not supported; accepted: unquantized bfloat16, float16 or "
                       "float32 weights (no quantization_config)");
  for (const char* name : {"num_experts", "num_local_experts", "n_routed_experts", "moe_intermediate_size"}) {
    const auto* value = config.given(name);
    if (value != nullptr && !(value->IsNumber() && value->GetDouble() == 0))
      config.unsupported(std::string(name) + " is " + shown(*value) +
                         ": mixture-of-experts models are not supported; accepted: a dense MLP in every layer "
                         "(no " + name + ")");
  }
  for (const char* name : {"kv_lora_rank", "q_lora_rank"})
    if (const auto* value = config.given(name))
      config.unsupported(std::string(name) + " is " + shown(*value) +
                         ": latent (low-rank) attention is not supported; accepted: q/k/v projections of full "
                         "rank (no " + name + ")");
  for (const char* name : {"vision_config", "text_config", "audio_config"})
    if (config.given(name) != nullptr)
      config.unsupported(std::string(name) +
                         " is present: multimodal models are not supported; accepted: a text-only decoder "
                         "(no vision_config, text_config or audio_config)");
  const std::string act = config.text_or("hidden_act", "silu");
  if (act != "silu")
    config.unsupported("hidden_act " + quoted_for_message(act) + " is not supported; accepted: \"silu\"");
  for (const char* name : {"attn_logit_softcapping", "final_logit_softcapping"})
    if (const auto* value = config.given(name))
      config.unsupported(std::string(name) + " is " + shown(*value) +
                         ": logit soft-capping is not supported; accepted: null or absent");
  if (config.given("layer_types") != nullptr) {
    const std::vector<std::string> types = config.json().texts("layer_types");
    for (std::size_t i = 0; i < types.size(); ++i)
      if (types[i] != "full_attention")
        config.unsupported("layer_types[" + std::to_string(i) + "] is " + quoted_for_message(types[i]) +
                           "; accepted: \"full_attention\" in every layer");
  }
  if (config.given("pretraining_tp") != nullptr) {
    const std::int64_t tp = config.integer("pretraining_tp");
    if (tp != 1)
      config.unsupported("pretraining_tp is " + std::to_string(tp) +
                         ": sliced tensor-parallel projections are not supported; accepted: 1 or absent");
  }
  for (const char* name : {"embedding_multiplier", "logits_scaling", "residual_multiplier", "attention_multiplier"})
    if (const auto* value = config.given(name))
      config.unsupported(std::string(name) + " is " + shown(*value) +
                         ": Granite-style scaling multipliers are not supported; accepted: no " + name);
  if (config.given("partial_rotary_factor") != nullptr) {
    const double factor = config.json().number("partial_rotary_factor");
    if (factor != 1.0)
      config.unsupported("partial_rotary_factor is " + number_text(factor) +
                         ": partial rotary embeddings are not supported; accepted: 1 or absent");
  }
}

// The RoPE parameters: transformers 5's rope_parameters, or the older rope_scaling with
// rope_theta at the top level (rope_scaling, when given, wins, as in transformers).
void read_rope(const ConfigJson& config, DecoderArchitecture& a) {
  const char* field = "rope_scaling";
  const rapidjson::Value* scaling = config.given(field);
  if (scaling == nullptr) {
    field = "rope_parameters";
    scaling = config.given(field);
  }
  a.rope_theta = config.number_or("rope_theta", 10000.0);
  std::string theta_field = "rope_theta";
  a.rope_type = "default";
  if (scaling != nullptr) {
    std::string where = field;
    JsonObjectReader rope(*scaling, config.path(), std::string("/") + field);
    // One dict per layer type (transformers 5, where layer types differ): only full attention.
    if (rope.has("full_attention") && scaling->MemberCount() == 1) {
      rope = rope.object("full_attention");
      scaling = &(*scaling)["full_attention"];
      where += ".full_attention";
    }
    const auto given = [&](const char* name) {
      const auto found = scaling->FindMember(name);
      return found != scaling->MemberEnd() && !found->value.IsNull();
    };
    std::string type_key = "rope_type";
    if (!given("rope_type") && given("type")) type_key = "type";
    const std::string type = given(type_key.c_str()) ? rope.text(type_key.c_str()) : "default";
    if (type != "default" && type != "llama3")
      config.unsupported(where + "." + type_key + " " + quoted_for_message(type) +
                         " is not supported; accepted: \"default\" (no scaling) or \"llama3\"");
    if (given("rope_theta")) {
      a.rope_theta = rope.number("rope_theta");
      theta_field = where + ".rope_theta";
    }
    if (given("partial_rotary_factor")) {
      const double factor = rope.number("partial_rotary_factor");
      if (factor != 1.0)
        config.unsupported(where + ".partial_rotary_factor is " + number_text(factor) +
                           ": partial rotary embeddings are not supported; accepted: 1 or absent");
    }
    a.rope_type = type;
    if (type == "llama3") {
      a.rope_factor = rope.number("factor");
      a.rope_low_freq_factor = rope.number("low_freq_factor");
      a.rope_high_freq_factor = rope.number("high_freq_factor");
      if (!(a.rope_factor >= 1.0))
        config.unsupported(where + ".factor is " + number_text(a.rope_factor) + "; accepted: a number from 1 up");
      if (!(a.rope_low_freq_factor > 0.0))
        config.unsupported(where + ".low_freq_factor is " + number_text(a.rope_low_freq_factor) +
                           "; accepted: a positive number");
      if (!(a.rope_high_freq_factor > a.rope_low_freq_factor))
        config.unsupported(where + ".high_freq_factor is " + number_text(a.rope_high_freq_factor) +
                           "; accepted: a number above low_freq_factor (" + number_text(a.rope_low_freq_factor) +
                           ")");
      // transformers: a top-level original_max_position_embeddings wins, then the dict's,
      // then max_position_embeddings.
      if (config.given("original_max_position_embeddings") != nullptr)
        a.rope_original_max_position_embeddings = config.bounded(
            "original_max_position_embeddings", config.integer("original_max_position_embeddings"), kMaxDimension);
      else if (given("original_max_position_embeddings"))
        a.rope_original_max_position_embeddings =
            config.bounded(where + ".original_max_position_embeddings",
                           rope.int64("original_max_position_embeddings"), kMaxDimension);
      else
        a.rope_original_max_position_embeddings = a.max_position_embeddings;
    }
  }
  if (!(a.rope_theta > 0.0))
    config.unsupported(theta_field + " is " + number_text(a.rope_theta) + "; accepted: a positive number");
}

// The sliding window: Mistral's applies to every layer (absent: MistralConfig's 4096, null:
// none); Qwen2's and Qwen3's only with use_sliding_window, and then to the layers from
// max_window_layers on (transformers' layer_types).
void read_sliding_window(const ConfigJson& config, Family family, DecoderArchitecture& a) {
  a.sliding_window = 0;
  if (family == Family::kMistral) {
    if (!config.present("sliding_window")) {
      a.sliding_window = 4096;
    } else if (config.given("sliding_window") != nullptr) {
      a.sliding_window = config.bounded("sliding_window", config.integer("sliding_window"), kMaxDimension);
    }
    return;
  }
  if (family != Family::kQwen2 && family != Family::kQwen3) return;
  if (!config.flag_or("use_sliding_window", false)) return;
  // Explicit layer_types (all "full_attention" by now) decide alone.
  if (config.given("layer_types") != nullptr) return;
  std::int64_t window = 4096;
  if (config.present("sliding_window")) {
    if (config.given("sliding_window") == nullptr) return;  // null: no window
    window = config.bounded("sliding_window", config.integer("sliding_window"), kMaxDimension);
  }
  const std::int64_t full_layers = config.integer_or("max_window_layers", 28);
  if (full_layers < 0)
    config.unsupported("max_window_layers is " + std::to_string(full_layers) + "; accepted: a whole number from 0");
  if (full_layers >= a.layers) return;  // every layer below max_window_layers: full attention
  if (full_layers == 0) {
    a.sliding_window = window;  // every layer slides
    return;
  }
  config.unsupported("max_window_layers is " + std::to_string(full_layers) +
                     " with use_sliding_window true and num_hidden_layers " + std::to_string(a.layers) +
                     ": layers " + std::to_string(full_layers) + " to " + std::to_string(a.layers - 1) +
                     " would use sliding-window attention and the others full attention; accepted: "
                     "use_sliding_window false, or max_window_layers 0 (every layer slides) or at least "
                     "num_hidden_layers (none does)");
}

// config.json's dtype as a safetensors dtype, or "" when it gives none.
std::string read_dtype(const ConfigJson& config, DecoderArchitecture& a) {
  const char* field = config.given("dtype") != nullptr ? "dtype" : "torch_dtype";
  if (config.given(field) == nullptr) return "";
  const std::string dtype = config.json().text(field);
  if (dtype == "bfloat16") {
    a.dtype = dtype;
    return "BF16";
  }
  if (dtype == "float16") {
    a.dtype = dtype;
    return "F16";
  }
  if (dtype == "float32") {
    a.dtype = dtype;
    return "F32";
  }
  config.unsupported(std::string(field) + " " + quoted_for_message(dtype) +
                     " is not supported; accepted: \"bfloat16\", \"float16\" or \"float32\"");
}

DecoderArchitecture read_architecture(const ConfigJson& config, Family& family, std::string& tensor_dtype) {
  const KnownArchitecture& known = architecture_of(config);
  family = known.family;
  refuse_unsupported_features(config);

  DecoderArchitecture a;
  a.architecture = known.architecture;
  a.model_type = known.model_type;
  a.hidden_size = config.bounded("hidden_size", config.integer("hidden_size"), kMaxDimension);
  a.intermediate_size = config.bounded("intermediate_size", config.integer("intermediate_size"), kMaxDimension);
  a.layers = config.bounded("num_hidden_layers", config.integer("num_hidden_layers"), kMaxLayers);
  a.attention_heads =
      config.bounded("num_attention_heads", config.integer("num_attention_heads"), kMaxDimension);
  a.vocab_size = config.bounded("vocab_size", config.integer("vocab_size"), kMaxDimension);

  // num_key_value_heads: null means num_attention_heads in every class; absent, each
  // class's own default.
  const std::string class_name = known.config_class;
  std::int64_t kv_default = a.attention_heads;
  std::string kv_note;
  if (family == Family::kMistral) kv_default = 8;
  if (family == Family::kQwen2 || family == Family::kQwen3) kv_default = 32;
  if (!config.present("num_key_value_heads") && kv_default != a.attention_heads)
    kv_note = " (absent: " + class_name + "'s default)";
  a.kv_heads = config.present("num_key_value_heads") && config.given("num_key_value_heads") == nullptr
                   ? a.attention_heads
                   : config.integer_or("num_key_value_heads", kv_default);
  config.bounded("num_key_value_heads", a.kv_heads, kMaxDimension, kv_note);
  if (a.attention_heads % a.kv_heads != 0)
    config.unsupported("num_key_value_heads is " + std::to_string(a.kv_heads) + kv_note +
                       ", which does not divide num_attention_heads " + std::to_string(a.attention_heads) +
                       "; accepted: a divisor of num_attention_heads");

  const bool head_dim_given = config.given("head_dim") != nullptr;
  if (head_dim_given) {
    a.head_dim = config.bounded("head_dim", config.integer("head_dim"), kMaxDimension);
  } else if (family == Family::kQwen3) {
    a.head_dim = 128;  // Qwen3Config's default
  } else {
    if (a.hidden_size % a.attention_heads != 0)
      config.unsupported("hidden_size " + std::to_string(a.hidden_size) + " is not a multiple of num_attention_heads " +
                         std::to_string(a.attention_heads) + " and head_dim is absent; accepted: a multiple, or a head_dim");
    a.head_dim = a.hidden_size / a.attention_heads;
  }
  // LlamaConfig.validate_architecture refuses this even with a head_dim.
  if (family == Family::kLlama && a.hidden_size % a.attention_heads != 0)
    config.unsupported("hidden_size " + std::to_string(a.hidden_size) + " is not a multiple of num_attention_heads " +
                       std::to_string(a.attention_heads) + ", which LlamaConfig refuses; accepted: a multiple");
  if (a.head_dim % 2 != 0)
    config.unsupported(std::string(head_dim_given ? "head_dim" : "hidden_size / num_attention_heads") + " is " +
                       std::to_string(a.head_dim) + ", odd; accepted: an even head dimension (rotary embeddings)");

  std::int64_t max_positions = 2048;
  if (family == Family::kMistral) max_positions = 4096 * 32;
  if (family == Family::kQwen2 || family == Family::kQwen3) max_positions = 32768;
  a.max_position_embeddings = config.bounded(
      "max_position_embeddings", config.integer_or("max_position_embeddings", max_positions), kMaxDimension);

  a.rms_norm_eps = config.number_or("rms_norm_eps", 1e-6);
  if (!(a.rms_norm_eps > 0.0))
    config.unsupported("rms_norm_eps is " + number_text(a.rms_norm_eps) + "; accepted: a positive number");
  read_rope(config, a);

  switch (family) {
    case Family::kLlama:
      a.qkv_bias = a.o_proj_bias = config.flag_or("attention_bias", false);
      a.mlp_bias = config.flag_or("mlp_bias", false);
      break;
    case Family::kMistral:
      break;  // MistralAttention and MistralMLP have no bias
    case Family::kQwen2:
      a.qkv_bias = true;  // Qwen2Attention: q, k, v always with bias, o without
      break;
    case Family::kQwen3:
      a.qkv_bias = a.o_proj_bias = config.flag_or("attention_bias", false);
      a.qk_norm = true;
      break;
  }
  a.tie_word_embeddings = config.flag_or("tie_word_embeddings", false);
  read_sliding_window(config, family, a);
  tensor_dtype = read_dtype(config, a);
  return a;
}

// config.json's text: the architecture, its family and the safetensors dtype config.json
// gives ("" when none).
DecoderArchitecture read_config(const std::string& text, const std::string& source, Family& family,
                                std::string& tensor_dtype) {
  rapidjson::Document document;
  const std::string problem = parse_json(text, document);
  if (!problem.empty()) throw InputFileError(source, problem);
  if (!document.IsObject()) throw InputFileError(source, "is not a JSON object; expected a model configuration");
  return read_architecture(ConfigJson(document, source), family, tensor_dtype);
}

struct ExpectedTensor {
  std::string name;
  std::vector<std::int64_t> shape;
};

std::vector<ExpectedTensor> expected_tensors(const DecoderArchitecture& a) {
  std::vector<ExpectedTensor> tensors;
  const auto add = [&](const std::string& name, std::vector<std::int64_t> shape) {
    tensors.push_back({name, std::move(shape)});
  };
  const auto linear = [&](const std::string& name, std::int64_t out, std::int64_t in, bool bias) {
    add(name + ".weight", {out, in});
    if (bias) add(name + ".bias", {out});
  };
  const std::int64_t q = a.attention_heads * a.head_dim, kv = a.kv_heads * a.head_dim;
  add("model.embed_tokens.weight", {a.vocab_size, a.hidden_size});
  for (std::int64_t i = 0; i < a.layers; ++i) {
    const std::string layer = "model.layers." + std::to_string(i) + ".";
    linear(layer + "self_attn.q_proj", q, a.hidden_size, a.qkv_bias);
    linear(layer + "self_attn.k_proj", kv, a.hidden_size, a.qkv_bias);
    linear(layer + "self_attn.v_proj", kv, a.hidden_size, a.qkv_bias);
    linear(layer + "self_attn.o_proj", a.hidden_size, q, a.o_proj_bias);
    if (a.qk_norm) {
      add(layer + "self_attn.q_norm.weight", {a.head_dim});
      add(layer + "self_attn.k_norm.weight", {a.head_dim});
    }
    linear(layer + "mlp.gate_proj", a.intermediate_size, a.hidden_size, a.mlp_bias);
    linear(layer + "mlp.up_proj", a.intermediate_size, a.hidden_size, a.mlp_bias);
    linear(layer + "mlp.down_proj", a.hidden_size, a.intermediate_size, a.mlp_bias);
    add(layer + "input_layernorm.weight", {a.hidden_size});
    add(layer + "post_attention_layernorm.weight", {a.hidden_size});
  }
  add("model.norm.weight", {a.hidden_size});
  if (!a.tie_word_embeddings) add("lm_head.weight", {a.vocab_size, a.hidden_size});
  return tensors;
}

// "LlamaForCausalLM with 2 layers, attention_bias false, mlp_bias false, tie_word_embeddings
// false": what decides the tensor list, for messages.
std::string model_text(const DecoderArchitecture& a, Family family) {
  std::string text = a.architecture + " with " + std::to_string(a.layers) + " layers";
  const auto flag = [](bool value) { return value ? std::string("true") : std::string("false"); };
  if (family == Family::kLlama)
    text += ", attention_bias " + flag(a.qkv_bias) + ", mlp_bias " + flag(a.mlp_bias);
  if (family == Family::kQwen3) text += ", attention_bias " + flag(a.qkv_bias);
  return text + ", tie_word_embeddings " + flag(a.tie_word_embeddings);
}

// A rotary buffer some conversions saved (model.layers.N.self_attn.rotary_emb.inv_freq):
// not a parameter, and transformers does not load it.
bool is_rotary_buffer(const std::string& name) {
  const std::string prefix = "model.layers.", suffix = ".self_attn.rotary_emb.inv_freq";
  if (name.size() <= prefix.size() + suffix.size() || name.compare(0, prefix.size(), prefix) != 0 ||
      name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0)
    return false;
  const std::string index = name.substr(prefix.size(), name.size() - prefix.size() - suffix.size());
  return index.find_first_not_of("0123456789") == std::string::npos;
}

std::string dtype_name(const std::string& safetensors_dtype) {
  if (safetensors_dtype == "BF16") return "bfloat16";
  if (safetensors_dtype == "F16") return "float16";
  if (safetensors_dtype == "F32") return "float32";
  return "";
}

}  // namespace

DecoderArchitecture parse_decoder_config(const std::string& text, const std::string& source) {
  Family family = Family::kLlama;
  std::string tensor_dtype;
  return read_config(text, source, family, tensor_dtype);
}

// What every refusal of a model folder says is accepted.
constexpr const char* kExpectedFolder = "expected a model folder holding config.json and safetensors weights";

DecoderCheckpoint DecoderCheckpoint::read(const std::string& directory) {
  const std::string expected_folder = kExpectedFolder;
  if (directory.empty()) throw DataFileError("(empty name): the model folder is empty; " + expected_folder);
  struct stat info {};
  if (::stat(directory.c_str(), &info) != 0)
    throw DataFileError(directory + ": cannot be read: " + std::strerror(errno) + "; " + expected_folder);
  if (!S_ISDIR(info.st_mode)) throw DataFileError(directory + ": is not a folder; " + expected_folder);
  ModelOrigin origin;
  origin.given = origin.location = directory;
  return read_decoder_checkpoint(*local_model_files(directory, origin));
}

DecoderCheckpoint read_decoder_checkpoint(const ModelFiles& files_of_model) {
  if (!files_of_model.has("config.json"))
    throw DataFileError(files_of_model.display_whole() + ": has no config.json; " + kExpectedFolder);

  DecoderCheckpoint checkpoint;
  checkpoint.directory = files_of_model.origin().given;
  Family family = Family::kLlama;
  std::string dtype;  // safetensors dtype every tensor must have; "" until known
  checkpoint.architecture = read_config(files_of_model.read_text("config.json", "model configuration", kMaxJsonDocumentBytes),
                                        files_of_model.display("config.json"), family, dtype);
  DecoderArchitecture& a = checkpoint.architecture;
  const bool config_gives_dtype = !dtype.empty();  // config.json's dtype or torch_dtype

  // The weights: every tensor of every shard by name.
  const CheckpointFiles files = read_checkpoint_files(files_of_model);
  struct Found {
    const CheckpointShardFile* shard;
    const SafetensorsTensor* tensor;
    bool used;
  };
  std::unordered_map<std::string, Found> found;
  for (const CheckpointShardFile& shard : files.shards)
    for (const SafetensorsTensor& tensor : shard.header.tensors)
      found.emplace(tensor.name, Found{&shard, &tensor, false});

  const std::vector<ExpectedTensor> expected = expected_tensors(a);
  if (dtype.empty()) {
    // No dtype in config.json: the checkpoint's own, that of its first tensor.
    const auto first = found.find(expected.front().name);
    if (first != found.end()) {
      dtype = first->second.tensor->dtype;
      a.dtype = dtype_name(dtype);
      if (a.dtype.empty())
        throw DataFileError(first->second.shard->path + ": tensor " + quoted_tensor_name(first->first) + " is " +
                            dtype + " and config.json gives no dtype; accepted: BF16, F16 or F32 weights "
                            "(bfloat16, float16, float32)");
    }
  }
  const std::string dtype_source =
      config_gives_dtype ? "config.json's dtype " + a.dtype
          : "the checkpoint's dtype (config.json gives none; " + expected.front().name + " is " + dtype + ")";

  for (const ExpectedTensor& want : expected) {
    const auto where = found.find(want.name);
    if (where == found.end())
      throw DataFileError(files.resolved + ": tensor " + quoted_tensor_name(want.name) + " is missing; config.json (" +
                          model_text(a, family) + ") expects it with shape " + shape_text(want.shape));
    Found& have = where->second;
    const SafetensorsTensor& tensor = *have.tensor;
    const std::string& file = have.shard->path;
    bool same_shape = tensor.shape.size() == want.shape.size();
    for (std::size_t i = 0; same_shape && i < want.shape.size(); ++i)
      same_shape = tensor.shape[i] == static_cast<std::uint64_t>(want.shape[i]);
    if (!same_shape)
      throw DataFileError(file + ": tensor " + quoted_tensor_name(want.name) + " has shape " +
                          shape_text(tensor.shape) + "; config.json gives " + shape_text(want.shape));
    if (tensor.dtype != dtype)
      throw DataFileError(file + ": tensor " + quoted_tensor_name(want.name) + " is " + tensor.dtype + "; " +
                          dtype_source + " makes every tensor " + dtype);
    have.used = true;
    DecoderTensor out;
    out.name = want.name;
    out.file = file;
    out.offset = kSafetensorsLengthBytes + have.shard->header.header_bytes + tensor.begin;
    out.bytes = tensor.bytes();
    out.dtype = tensor.dtype;
    out.shape = want.shape;
    checkpoint.parameter_count += static_cast<std::int64_t>(tensor.elements);
    checkpoint.parameter_bytes += tensor.bytes();
    checkpoint.tensors.push_back(std::move(out));
  }
  for (const CheckpointShardFile& shard : files.shards)
    for (const SafetensorsTensor& tensor : shard.header.tensors) {
      if (found.at(tensor.name).used || is_rotary_buffer(tensor.name)) continue;
      if (a.tie_word_embeddings && tensor.name == "lm_head.weight") continue;  // tied: embed_tokens' weight
      throw DataFileError(shard.path + ": tensor " + quoted_tensor_name(tensor.name) + " is not a parameter of " +
                          model_text(a, family) + " as config.json describes it; accepted: exactly the model's "
                          "tensors");
    }
  return checkpoint;
}

}  // namespace iteragpu
