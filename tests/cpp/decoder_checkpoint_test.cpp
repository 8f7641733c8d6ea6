// DecoderCheckpoint::read: model folders the tests write themselves (config.json and
// safetensors files of zeros, single or sharded). The four accepted architectures with
// transformers' defaults resolved, the tensor list in registration order with its files and
// offsets, and every refusal: UsageError("model", "DIR/config.json: FIELD ...") for what is
// not supported, DataFileError "PATH: ..." for a folder, file or tensor that does not fit.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "expect_error.hpp"
#include "iteragpu/decoder_checkpoint.hpp"
#include "iteragpu/error.hpp"
#include "process_runner.hpp"
#include "safetensors_writer.hpp"

namespace iteragpu {
namespace {

using testing::TensorSpec;

// config.json as member name → JSON text of its value.
using Config = std::map<std::string, std::string>;

Config llama_config() {
  return {{"architectures", "[\"LlamaForCausalLM\"]"},
          {"model_type", "\"llama\""},
          {"hidden_size", "64"},
          {"intermediate_size", "128"},
          {"num_hidden_layers", "2"},
          {"num_attention_heads", "4"},
          {"num_key_value_heads", "2"},
          {"vocab_size", "100"}};
}

Config config_of(const std::string& architecture, const std::string& model_type) {
  Config config = llama_config();
  config["architectures"] = "[\"" + architecture + "\"]";
  config["model_type"] = "\"" + model_type + "\"";
  return config;
}

// What the test expects the model to hold, spelled out independently of the reader.
struct Model {
  std::uint64_t layers = 2, hidden = 64, intermediate = 128, heads = 4, kv_heads = 2, head_dim = 16, vocab = 100;
  bool qkv_bias = false, o_bias = false, mlp_bias = false, qk_norm = false, tied = false;
  std::string dtype = "BF16";
};

std::vector<TensorSpec> tensors_of(const Model& m) {
  std::vector<TensorSpec> t;
  const std::string d = m.dtype;
  t.push_back({"model.embed_tokens.weight", d, {m.vocab, m.hidden}});
  for (std::uint64_t i = 0; i < m.layers; ++i) {
    const std::string p = "model.layers." + std::to_string(i) + ".";
    t.push_back({p + "self_attn.q_proj.weight", d, {m.heads * m.head_dim, m.hidden}});
    if (m.qkv_bias) t.push_back({p + "self_attn.q_proj.bias", d, {m.heads * m.head_dim}});
    t.push_back({p + "self_attn.k_proj.weight", d, {m.kv_heads * m.head_dim, m.hidden}});
    if (m.qkv_bias) t.push_back({p + "self_attn.k_proj.bias", d, {m.kv_heads * m.head_dim}});
    t.push_back({p + "self_attn.v_proj.weight", d, {m.kv_heads * m.head_dim, m.hidden}});
    if (m.qkv_bias) t.push_back({p + "self_attn.v_proj.bias", d, {m.kv_heads * m.head_dim}});
    t.push_back({p + "self_attn.o_proj.weight", d, {m.hidden, m.heads * m.head_dim}});
    if (m.o_bias) t.push_back({p + "self_attn.o_proj.bias", d, {m.hidden}});
    if (m.qk_norm) {
      t.push_back({p + "self_attn.q_norm.weight", d, {m.head_dim}});
      t.push_back({p + "self_attn.k_norm.weight", d, {m.head_dim}});
    }
    t.push_back({p + "mlp.gate_proj.weight", d, {m.intermediate, m.hidden}});
    if (m.mlp_bias) t.push_back({p + "mlp.gate_proj.bias", d, {m.intermediate}});
    t.push_back({p + "mlp.up_proj.weight", d, {m.intermediate, m.hidden}});
    if (m.mlp_bias) t.push_back({p + "mlp.up_proj.bias", d, {m.intermediate}});
    t.push_back({p + "mlp.down_proj.weight", d, {m.hidden, m.intermediate}});
    if (m.mlp_bias) t.push_back({p + "mlp.down_proj.bias", d, {m.hidden}});
    t.push_back({p + "input_layernorm.weight", d, {m.hidden}});
    t.push_back({p + "post_attention_layernorm.weight", d, {m.hidden}});
  }
  t.push_back({"model.norm.weight", d, {m.hidden}});
  if (!m.tied) t.push_back({"lm_head.weight", d, {m.vocab, m.hidden}});
  return t;
}

std::uint64_t elements_of(const TensorSpec& tensor) {
  std::uint64_t n = 1;
  for (std::uint64_t d : tensor.shape) n *= d;
  return n;
}

std::vector<std::string> names_of(const std::vector<TensorSpec>& tensors) {
  std::vector<std::string> names;
  for (const auto& t : tensors) names.push_back(t.name);
  return names;
}

std::vector<std::string> names_of(const std::vector<DecoderTensor>& tensors) {
  std::vector<std::string> names;
  for (const auto& t : tensors) names.push_back(t.name);
  return names;
}

// The header length N a safetensors file begins with.
std::uint64_t header_length(const std::string& path) {
  const std::string bytes = testing::read_file(path);
  std::uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | static_cast<unsigned char>(bytes.at(i));
  return n;
}

class DecoderCheckpointReader : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_EQ(::mkdir(model_.c_str(), 0755), 0); }

  std::string config_path() const { return model_ + "/config.json"; }
  std::string weights_path(const std::string& name = "model.safetensors") const { return model_ + "/" + name; }

  void write_config(const Config& config) {
    std::string json = "{";
    for (const auto& [name, value] : config) json += (json.size() > 1 ? ", \"" : "\"") + name + "\": " + value;
    testing::write_file(config_path(), json + "}");
  }
  void write_weights(const std::vector<TensorSpec>& tensors, const std::string& name = "model.safetensors") {
    testing::write_safetensors(weights_path(name), tensors);
  }
  void write(const Config& config, const Model& model) {
    write_config(config);
    write_weights(tensors_of(model));
  }
  DecoderCheckpoint read() const { return DecoderCheckpoint::read(model_); }

  // Refused with UsageError("model", "DIR/config.json: FIELD..."), one line; returns the reason.
  std::string expect_unsupported(const std::string& field) const {
    std::string reason;
    try {
      read();
      ADD_FAILURE() << "accepted; expected a refusal naming " << field;
    } catch (const UsageError& e) {
      EXPECT_EQ(e.field(), "model");
      reason = e.reason();
    } catch (const std::exception& e) {
      ADD_FAILURE() << "unexpected exception type: " << e.what();
    }
    EXPECT_EQ(reason.rfind(config_path() + ": " + field, 0), 0u) << reason;
    EXPECT_EQ(reason.find('\n'), std::string::npos) << reason;
    return reason;
  }
  // Refused with DataFileError "FILE: ...WHAT...", one line; returns the message.
  std::string expect_bad_file(const std::string& file, const std::string& what) const {
    const std::string message = testing::message_of<DataFileError>([&] { read(); });
    EXPECT_EQ(message.rfind(file + ": ", 0), 0u) << message;
    EXPECT_NE(message.find(what), std::string::npos) << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
    return message;
  }

  testing::TempDir dir_;
  std::string model_ = dir_.file("model");
};

// --- the four architectures ------------------------------------------------------------

TEST_F(DecoderCheckpointReader, LlamaWithLlamaConfigDefaults) {
  Config config = llama_config();
  config.erase("num_key_value_heads");  // LlamaConfig: num_attention_heads
  Model model;
  model.kv_heads = 4;
  write(config, model);
  const DecoderCheckpoint c = read();
  const DecoderArchitecture& a = c.architecture;
  EXPECT_EQ(c.directory, model_);
  EXPECT_EQ(a.architecture, "LlamaForCausalLM");
  EXPECT_EQ(a.model_type, "llama");
  EXPECT_EQ(a.layers, 2);
  EXPECT_EQ(a.hidden_size, 64);
  EXPECT_EQ(a.intermediate_size, 128);
  EXPECT_EQ(a.attention_heads, 4);
  EXPECT_EQ(a.kv_heads, 4);
  EXPECT_EQ(a.head_dim, 16);
  EXPECT_EQ(a.vocab_size, 100);
  EXPECT_EQ(a.max_position_embeddings, 2048);
  EXPECT_EQ(a.sliding_window, 0);
  EXPECT_DOUBLE_EQ(a.rms_norm_eps, 1e-6);
  EXPECT_DOUBLE_EQ(a.rope_theta, 10000.0);
  EXPECT_EQ(a.rope_type, "default");
  EXPECT_FALSE(a.qkv_bias);
  EXPECT_FALSE(a.o_proj_bias);
  EXPECT_FALSE(a.mlp_bias);
  EXPECT_FALSE(a.qk_norm);
  EXPECT_FALSE(a.tie_word_embeddings);
  EXPECT_EQ(a.dtype, "bfloat16");  // no dtype in config.json: the tensors'
}

TEST_F(DecoderCheckpointReader, TensorsInRegistrationOrderWithFilesAndOffsets) {
  Model model;
  write(llama_config(), model);
  const std::vector<TensorSpec> specs = tensors_of(model);
  const DecoderCheckpoint c = read();
  ASSERT_EQ(c.tensors.size(), 1 + 2 * 9 + 2u);
  EXPECT_EQ(names_of(c.tensors), names_of(specs));
  EXPECT_EQ(c.tensors[1].name, "model.layers.0.self_attn.q_proj.weight");
  EXPECT_EQ(c.tensors[5].name, "model.layers.0.mlp.gate_proj.weight");
  EXPECT_EQ(c.tensors[8].name, "model.layers.0.input_layernorm.weight");
  EXPECT_EQ(c.tensors.back().name, "lm_head.weight");

  // The writer lays the tensors out in this order: each begins where the previous ended.
  std::uint64_t offset = 8 + header_length(weights_path());
  std::uint64_t elements = 0;
  for (std::size_t i = 0; i < specs.size(); ++i) {
    const DecoderTensor& t = c.tensors[i];
    EXPECT_EQ(t.file, weights_path()) << t.name;
    EXPECT_EQ(t.offset, offset) << t.name;
    EXPECT_EQ(t.bytes, elements_of(specs[i]) * 2) << t.name;
    EXPECT_EQ(t.dtype, "BF16") << t.name;
    EXPECT_EQ(t.shape, std::vector<std::int64_t>(specs[i].shape.begin(), specs[i].shape.end())) << t.name;
    offset += t.bytes;
    elements += elements_of(specs[i]);
  }
  EXPECT_EQ(c.tensors[1].shape, (std::vector<std::int64_t>{64, 64}));  // 4 heads × 16
  EXPECT_EQ(c.tensors[2].shape, (std::vector<std::int64_t>{32, 64}));  // 2 kv heads × 16
  EXPECT_EQ(c.parameter_count, static_cast<std::int64_t>(elements));
  EXPECT_EQ(c.parameter_bytes, elements * 2);
  struct stat info {};
  ASSERT_EQ(::stat(weights_path().c_str(), &info), 0);
  EXPECT_EQ(offset, static_cast<std::uint64_t>(info.st_size));  // every byte accounted for
}

TEST_F(DecoderCheckpointReader, LlamaAttentionAndMlpBiasesAndExplicitFields) {
  Config config = llama_config();
  config["attention_bias"] = "true";
  config["mlp_bias"] = "true";
  config["rms_norm_eps"] = "1e-05";
  config["rope_theta"] = "500000.0";
  config["max_position_embeddings"] = "4096";
  config["tie_word_embeddings"] = "false";
  config["torch_dtype"] = "\"float16\"";
  config["hidden_act"] = "\"silu\"";
  config["rope_scaling"] = "null";
  Model model;
  model.qkv_bias = model.o_bias = model.mlp_bias = true;
  model.dtype = "F16";
  write(config, model);
  const DecoderCheckpoint c = read();
  const DecoderArchitecture& a = c.architecture;
  EXPECT_TRUE(a.qkv_bias);
  EXPECT_TRUE(a.o_proj_bias);
  EXPECT_TRUE(a.mlp_bias);
  EXPECT_DOUBLE_EQ(a.rms_norm_eps, 1e-5);
  EXPECT_DOUBLE_EQ(a.rope_theta, 500000.0);
  EXPECT_EQ(a.rope_type, "default");
  EXPECT_EQ(a.max_position_embeddings, 4096);
  EXPECT_EQ(a.dtype, "float16");  // from torch_dtype
  EXPECT_EQ(names_of(c.tensors), names_of(tensors_of(model)));
  EXPECT_EQ(c.tensors[1].name, "model.layers.0.self_attn.q_proj.weight");
  EXPECT_EQ(c.tensors[2].name, "model.layers.0.self_attn.q_proj.bias");
  EXPECT_EQ(c.tensors[8].name, "model.layers.0.self_attn.o_proj.bias");
  EXPECT_EQ(c.tensors[8].shape, (std::vector<std::int64_t>{64}));
  EXPECT_EQ(c.tensors[10].name, "model.layers.0.mlp.gate_proj.bias");
  EXPECT_EQ(c.tensors[10].shape, (std::vector<std::int64_t>{128}));
  EXPECT_EQ(c.tensors[1].dtype, "F16");
}

TEST_F(DecoderCheckpointReader, Llama3RopeFromTransformers5RopeParameters) {
  Config config = llama_config();
  config["max_position_embeddings"] = "131072";
  config["rope_theta"] = "10.0";  // rope_parameters' own rope_theta wins, as in transformers
  config["rope_parameters"] =
      "{\"rope_type\": \"llama3\", \"rope_theta\": 500000.0, \"factor\": 8.0, \"low_freq_factor\": 1.0, "
      "\"high_freq_factor\": 4.0, \"original_max_position_embeddings\": 8192}";
  config["dtype"] = "\"bfloat16\"";
  write(config, Model{});
  const DecoderArchitecture a = read().architecture;
  EXPECT_EQ(a.rope_type, "llama3");
  EXPECT_DOUBLE_EQ(a.rope_theta, 500000.0);
  EXPECT_DOUBLE_EQ(a.rope_factor, 8.0);
  EXPECT_DOUBLE_EQ(a.rope_low_freq_factor, 1.0);
  EXPECT_DOUBLE_EQ(a.rope_high_freq_factor, 4.0);
  EXPECT_EQ(a.rope_original_max_position_embeddings, 8192);
  EXPECT_EQ(a.max_position_embeddings, 131072);
  EXPECT_EQ(a.dtype, "bfloat16");
}

TEST_F(DecoderCheckpointReader, Llama3RopeFromOlderRopeScaling) {
  Config config = llama_config();
  config["max_position_embeddings"] = "131072";
  config["rope_theta"] = "500000.0";
  config["rope_scaling"] =
      "{\"factor\": 32.0, \"high_freq_factor\": 4.0, \"low_freq_factor\": 1.0, "
      "\"original_max_position_embeddings\": 8192, \"rope_type\": \"llama3\"}";
  write(config, Model{});
  DecoderArchitecture a = read().architecture;
  EXPECT_EQ(a.rope_type, "llama3");
  EXPECT_DOUBLE_EQ(a.rope_theta, 500000.0);
  EXPECT_DOUBLE_EQ(a.rope_factor, 32.0);
  EXPECT_EQ(a.rope_original_max_position_embeddings, 8192);

  // The older "type" key; without original_max_position_embeddings, max_position_embeddings.
  config["rope_scaling"] = "{\"type\": \"llama3\", \"factor\": 8, \"low_freq_factor\": 2, \"high_freq_factor\": 8}";
  write_config(config);
  a = read().architecture;
  EXPECT_EQ(a.rope_type, "llama3");
  EXPECT_DOUBLE_EQ(a.rope_factor, 8.0);
  EXPECT_DOUBLE_EQ(a.rope_low_freq_factor, 2.0);
  EXPECT_DOUBLE_EQ(a.rope_high_freq_factor, 8.0);
  EXPECT_EQ(a.rope_original_max_position_embeddings, 131072);

  // "default" scaling is no scaling.
  config["rope_scaling"] = "{\"rope_type\": \"default\"}";
  write_config(config);
  EXPECT_EQ(read().architecture.rope_type, "default");
}

TEST_F(DecoderCheckpointReader, MistralDefaultsAndSlidingWindow) {
  Config config = config_of("MistralForCausalLM", "mistral");
  config["hidden_size"] = "128";
  config["num_attention_heads"] = "16";
  config.erase("num_key_value_heads");  // MistralConfig: 8
  Model model;
  model.hidden = 128;
  model.heads = 16;
  model.kv_heads = 8;
  model.head_dim = 8;
  write(config, model);
  DecoderArchitecture a = read().architecture;
  EXPECT_EQ(a.architecture, "MistralForCausalLM");
  EXPECT_EQ(a.model_type, "mistral");
  EXPECT_EQ(a.kv_heads, 8);
  EXPECT_EQ(a.head_dim, 8);
  EXPECT_EQ(a.sliding_window, 4096);  // absent: MistralConfig's default
  EXPECT_EQ(a.max_position_embeddings, 131072);
  EXPECT_FALSE(a.qkv_bias);
  EXPECT_FALSE(a.o_proj_bias);
  EXPECT_FALSE(a.mlp_bias);

  config["sliding_window"] = "null";
  write_config(config);
  EXPECT_EQ(read().architecture.sliding_window, 0);
  config["sliding_window"] = "2048";
  write_config(config);
  EXPECT_EQ(read().architecture.sliding_window, 2048);
  config["num_key_value_heads"] = "null";  // null: num_attention_heads
  write_config(config);
  EXPECT_FALSE(testing::message_of<DataFileError>([&] { read(); }).empty());  // k_proj now [128, 128]
}

TEST_F(DecoderCheckpointReader, MistralHeadDimOverridesHiddenOverHeads) {
  Config config = config_of("MistralForCausalLM", "mistral");
  config["head_dim"] = "32";
  config["sliding_window"] = "null";
  Model model;
  model.head_dim = 32;
  write(config, model);
  const DecoderCheckpoint c = read();
  EXPECT_EQ(c.architecture.head_dim, 32);
  EXPECT_EQ(c.tensors[1].shape, (std::vector<std::int64_t>{128, 64}));  // q_proj: 4 × 32
  EXPECT_EQ(c.tensors[4].shape, (std::vector<std::int64_t>{64, 128}));  // o_proj
}

TEST_F(DecoderCheckpointReader, Qwen2QkvBiasesAlwaysAndTiedEmbeddings) {
  Config config = config_of("Qwen2ForCausalLM", "qwen2");
  config["tie_word_embeddings"] = "true";
  config["attention_bias"] = "false";  // not a Qwen2Config field: q/k/v have biases regardless
  config["use_sliding_window"] = "false";
  config["sliding_window"] = "4096";
  config["max_window_layers"] = "1";
  config["torch_dtype"] = "\"bfloat16\"";
  Model model;
  model.qkv_bias = true;
  model.tied = true;
  write(config, model);
  const DecoderCheckpoint c = read();
  const DecoderArchitecture& a = c.architecture;
  EXPECT_EQ(a.architecture, "Qwen2ForCausalLM");
  EXPECT_EQ(a.model_type, "qwen2");
  EXPECT_TRUE(a.qkv_bias);
  EXPECT_FALSE(a.o_proj_bias);
  EXPECT_FALSE(a.mlp_bias);
  EXPECT_FALSE(a.qk_norm);
  EXPECT_TRUE(a.tie_word_embeddings);
  EXPECT_EQ(a.sliding_window, 0);  // use_sliding_window false
  EXPECT_EQ(a.max_position_embeddings, 32768);
  EXPECT_EQ(names_of(c.tensors), names_of(tensors_of(model)));
  EXPECT_EQ(c.tensors[2].name, "model.layers.0.self_attn.q_proj.bias");
  EXPECT_EQ(c.tensors[7].name, "model.layers.0.self_attn.o_proj.weight");
  EXPECT_EQ(c.tensors[8].name, "model.layers.0.mlp.gate_proj.weight");
  EXPECT_EQ(c.tensors.back().name, "model.norm.weight");  // no lm_head: tied
}

TEST_F(DecoderCheckpointReader, TiedLmHeadInTheFileIsNeitherLoadedNorCounted) {
  Config config = config_of("Qwen2ForCausalLM", "qwen2");
  config["tie_word_embeddings"] = "true";
  Model model;
  model.qkv_bias = true;
  write_config(config);
  write_weights(tensors_of(model));  // with lm_head.weight
  const DecoderCheckpoint c = read();
  EXPECT_EQ(c.tensors.back().name, "model.norm.weight");
  model.tied = true;
  std::uint64_t elements = 0;
  for (const auto& t : tensors_of(model)) elements += elements_of(t);
  EXPECT_EQ(c.parameter_count, static_cast<std::int64_t>(elements));
  EXPECT_EQ(c.parameter_bytes, elements * 2);
}

TEST_F(DecoderCheckpointReader, Qwen2And3KeyValueHeadsDefaultTo32WhenAbsent) {
  for (const char* family : {"qwen2", "qwen3"}) {
    SCOPED_TRACE(family);
    const bool qwen3 = std::string(family) == "qwen3";
    Config config = config_of(qwen3 ? "Qwen3ForCausalLM" : "Qwen2ForCausalLM", family);
    config["hidden_size"] = "128";
    config["num_attention_heads"] = "64";
    config["head_dim"] = "2";
    config.erase("num_key_value_heads");
    Model model;
    model.hidden = 128;
    model.heads = 64;
    model.kv_heads = 32;
    model.head_dim = 2;
    model.qkv_bias = !qwen3;
    model.qk_norm = qwen3;
    write(config, model);
    EXPECT_EQ(read().architecture.kv_heads, 32);
    config["num_key_value_heads"] = "null";  // null: num_attention_heads
    model.kv_heads = 64;
    write(config, model);
    EXPECT_EQ(read().architecture.kv_heads, 64);
  }
}

TEST_F(DecoderCheckpointReader, Qwen2SlidingWindowOnlyWhereTransformersSlides) {
  Config config = config_of("Qwen2ForCausalLM", "qwen2");
  config["use_sliding_window"] = "true";
  Model model;
  model.qkv_bias = true;
  write(config, model);
  EXPECT_EQ(read().architecture.sliding_window, 0);  // max_window_layers 28 ≥ 2 layers: none slides
  config["max_window_layers"] = "0";  // every layer slides
  write_config(config);
  EXPECT_EQ(read().architecture.sliding_window, 4096);
  config["sliding_window"] = "1024";
  write_config(config);
  EXPECT_EQ(read().architecture.sliding_window, 1024);
  config["sliding_window"] = "null";
  write_config(config);
  EXPECT_EQ(read().architecture.sliding_window, 0);
  config["sliding_window"] = "1024";
  config["use_sliding_window"] = "false";
  write_config(config);
  EXPECT_EQ(read().architecture.sliding_window, 0);
}

TEST_F(DecoderCheckpointReader, Qwen3QkNormHeadDim128AndAttentionBiasOnAllFour) {
  Config config = config_of("Qwen3ForCausalLM", "qwen3");
  config["attention_bias"] = "true";
  config["dtype"] = "\"float32\"";
  Model model;
  model.head_dim = 128;  // Qwen3Config's default, not 64 / 4
  model.qkv_bias = model.o_bias = model.qk_norm = true;
  model.dtype = "F32";
  write(config, model);
  const DecoderCheckpoint c = read();
  const DecoderArchitecture& a = c.architecture;
  EXPECT_EQ(a.architecture, "Qwen3ForCausalLM");
  EXPECT_EQ(a.head_dim, 128);
  EXPECT_TRUE(a.qk_norm);
  EXPECT_TRUE(a.qkv_bias);
  EXPECT_TRUE(a.o_proj_bias);
  EXPECT_FALSE(a.mlp_bias);
  EXPECT_EQ(a.dtype, "float32");
  EXPECT_EQ(names_of(c.tensors), names_of(tensors_of(model)));
  EXPECT_EQ(c.tensors[1].shape, (std::vector<std::int64_t>{512, 64}));
  EXPECT_EQ(c.tensors[8].name, "model.layers.0.self_attn.o_proj.bias");
  EXPECT_EQ(c.tensors[9].name, "model.layers.0.self_attn.q_norm.weight");
  EXPECT_EQ(c.tensors[9].shape, (std::vector<std::int64_t>{128}));
  EXPECT_EQ(c.tensors[10].name, "model.layers.0.self_attn.k_norm.weight");
  EXPECT_EQ(c.tensors[11].name, "model.layers.0.mlp.gate_proj.weight");
  EXPECT_EQ(c.tensors[1].bytes, 512u * 64 * 4);
}

TEST_F(DecoderCheckpointReader, Qwen3WithoutAttentionBias) {
  Config config = config_of("Qwen3ForCausalLM", "qwen3");
  config["head_dim"] = "16";
  Model model;
  model.qk_norm = true;
  write(config, model);
  const DecoderArchitecture a = read().architecture;
  EXPECT_FALSE(a.qkv_bias);
  EXPECT_FALSE(a.o_proj_bias);
  EXPECT_EQ(a.head_dim, 16);
}

TEST_F(DecoderCheckpointReader, DtypeWinsOverTorchDtype) {
  Config config = llama_config();
  config["dtype"] = "\"float16\"";
  config["torch_dtype"] = "\"float32\"";
  Model model;
  model.dtype = "F16";
  write(config, model);
  EXPECT_EQ(read().architecture.dtype, "float16");
}

TEST_F(DecoderCheckpointReader, DtypeFromTheTensorsWhenConfigGivesNone) {
  Model model;
  model.dtype = "F32";
  write(llama_config(), model);
  const DecoderCheckpoint c = read();
  EXPECT_EQ(c.architecture.dtype, "float32");
  EXPECT_EQ(c.tensors[0].dtype, "F32");
}

TEST_F(DecoderCheckpointReader, ShardedCheckpointThroughItsIndex) {
  Model model;
  const std::vector<TensorSpec> all = tensors_of(model);
  const std::vector<TensorSpec> first(all.begin(), all.begin() + 10);  // embed_tokens and layer 0
  const std::vector<TensorSpec> second(all.begin() + 10, all.end());
  write_config(llama_config());
  write_weights(first, "model-00001-of-00002.safetensors");
  write_weights(second, "model-00002-of-00002.safetensors");
  std::string index = "{\"metadata\": {\"total_size\": 0}, \"weight_map\": {";
  for (std::size_t i = 0; i < all.size(); ++i)
    index += std::string(i ? ", " : "") + "\"" + all[i].name + "\": \"model-0000" + (i < 10 ? "1" : "2") +
             "-of-00002.safetensors\"";
  testing::write_file(model_ + "/model.safetensors.index.json", index + "}}");

  const DecoderCheckpoint c = read();
  ASSERT_EQ(c.tensors.size(), all.size());
  EXPECT_EQ(names_of(c.tensors), names_of(all));
  const std::string one = weights_path("model-00001-of-00002.safetensors");
  const std::string two = weights_path("model-00002-of-00002.safetensors");
  std::uint64_t offset = 8 + header_length(one);
  for (std::size_t i = 0; i < all.size(); ++i) {
    if (i == 10) offset = 8 + header_length(two);
    EXPECT_EQ(c.tensors[i].file, i < 10 ? one : two) << all[i].name;
    EXPECT_EQ(c.tensors[i].offset, offset) << all[i].name;
    offset += c.tensors[i].bytes;
  }

  // A tensor the index does not map at all is missing, named against the index.
  const std::string index_path = model_ + "/model.safetensors.index.json";
  write_weights(std::vector<TensorSpec>(second.begin(), second.end() - 1), "model-00002-of-00002.safetensors");
  std::string shorter = "{\"weight_map\": {";
  for (std::size_t i = 0; i + 1 < all.size(); ++i)
    shorter += std::string(i ? ", " : "") + "\"" + all[i].name + "\": \"model-0000" + (i < 10 ? "1" : "2") +
               "-of-00002.safetensors\"";
  testing::write_file(index_path, shorter + "}}");
  expect_bad_file(index_path, "tensor 'lm_head.weight' is missing");
}

TEST_F(DecoderCheckpointReader, RotaryBuffersSomeConversionsSavedAreIgnored) {
  Model model;
  std::vector<TensorSpec> tensors = tensors_of(model);
  tensors.insert(tensors.begin() + 5, {"model.layers.0.self_attn.rotary_emb.inv_freq", "F32", {8}});
  write_config(llama_config());
  write_weights(tensors);
  const DecoderCheckpoint c = read();
  EXPECT_EQ(names_of(c.tensors), names_of(tensors_of(model)));
}

// --- the folder and config.json ---------------------------------------------------------

TEST_F(DecoderCheckpointReader, RefusesWhatIsNotAModelFolder) {
  const std::string missing = dir_.file("no-such-folder");
  std::string message = testing::message_of<DataFileError>([&] { DecoderCheckpoint::read(missing); });
  EXPECT_EQ(message.rfind(missing + ": ", 0), 0u) << message;

  const std::string file = dir_.file("model.safetensors");
  testing::write_safetensors(file, tensors_of(Model{}));
  message = testing::message_of<DataFileError>([&] { DecoderCheckpoint::read(file); });
  EXPECT_EQ(message.rfind(file + ": is not a folder", 0), 0u) << message;

  write_weights(tensors_of(Model{}));  // weights but no config.json
  message = testing::message_of<DataFileError>([&] { read(); });
  EXPECT_EQ(message, model_ + ": has no config.json; expected a model folder holding config.json and "
                              "safetensors weights");
}

TEST_F(DecoderCheckpointReader, RefusesAConfigThatIsNotAJsonObject) {
  write_weights(tensors_of(Model{}));
  testing::write_file(config_path(), "{\"architectures\": [");
  expect_bad_file(config_path(), "not valid JSON");
  testing::write_file(config_path(), "[1, 2]");
  expect_bad_file(config_path(), "not a JSON object");
}

TEST_F(DecoderCheckpointReader, RefusesOtherArchitectures) {
  write_weights(tensors_of(Model{}));
  Config config = llama_config();
  config["architectures"] = "[\"GPT2LMHeadModel\"]";
  write_config(config);
  EXPECT_EQ(expect_unsupported("architectures"),
            config_path() + ": architectures ['GPT2LMHeadModel'] is not supported; accepted: LlamaForCausalLM, "
                            "MistralForCausalLM, Qwen2ForCausalLM, Qwen3ForCausalLM (dense decoder-only)");
  EXPECT_EQ(testing::message_of<UsageError>([&] { read(); }).rfind("--model: " + config_path(), 0), 0u);
  for (const char* names : {"[\"MixtralForCausalLM\"]", "[\"LlamaForCausalLM\", \"MistralForCausalLM\"]", "[]",
                            "\"LlamaForCausalLM\"", "null", "[\"LlamaModel\"]"}) {
    SCOPED_TRACE(names);
    config["architectures"] = names;
    write_config(config);
    expect_unsupported("architectures");
  }
  // Thousands of names: the message shows the first three and the count, still one short line.
  std::string many = "[";
  for (int i = 0; i < 5000; ++i) many += std::string(i ? "," : "") + "\"Name" + std::to_string(i) + "\"";
  config["architectures"] = many + "]";
  write_config(config);
  EXPECT_EQ(expect_unsupported("architectures"),
            config_path() + ": architectures ['Name0', 'Name1', 'Name2', ... (5000 names)] is not supported; "
                            "accepted: LlamaForCausalLM, MistralForCausalLM, Qwen2ForCausalLM, Qwen3ForCausalLM "
                            "(dense decoder-only)");
  config.erase("architectures");
  write_config(config);
  expect_unsupported("architectures");
}

TEST_F(DecoderCheckpointReader, RefusesAModelTypeThatDisagrees) {
  write_weights(tensors_of(Model{}));
  Config config = llama_config();
  config["model_type"] = "\"mistral\"";
  write_config(config);
  expect_unsupported("model_type 'mistral'");
  config.erase("model_type");  // absent: the architecture's
  write_config(config);
  EXPECT_EQ(read().architecture.model_type, "llama");
}

TEST_F(DecoderCheckpointReader, RefusesAMissingRequiredField) {
  write_weights(tensors_of(Model{}));
  for (const char* field :
       {"hidden_size", "intermediate_size", "num_hidden_layers", "num_attention_heads", "vocab_size"}) {
    SCOPED_TRACE(field);
    Config config = llama_config();
    config.erase(field);
    write_config(config);
    expect_bad_file(config_path(), std::string("/") + field + ": missing");
  }
}

TEST_F(DecoderCheckpointReader, RefusesAFieldOfTheWrongJsonType) {
  write_weights(tensors_of(Model{}));
  for (const auto& [field, value] : std::vector<std::pair<std::string, std::string>>{
           {"hidden_size", "\"64\""}, {"num_hidden_layers", "2.5"}, {"tie_word_embeddings", "\"yes\""},
           {"rms_norm_eps", "\"1e-6\""}, {"hidden_act", "1"}, {"layer_types", "\"full_attention\""}}) {
    SCOPED_TRACE(field);
    Config config = llama_config();
    config[field] = value;
    write_config(config);
    expect_bad_file(config_path(), "/" + field + ": ");
  }
}

TEST_F(DecoderCheckpointReader, RefusesIntegersOutOfBounds) {
  write_weights(tensors_of(Model{}));
  const std::vector<std::pair<std::string, std::vector<std::string>>> cases = {
      {"hidden_size", {"0", "-64", "16777217"}},
      {"intermediate_size", {"0", "16777217"}},
      {"num_hidden_layers", {"0", "4097"}},
      {"num_attention_heads", {"0", "-1", "16777217"}},
      {"num_key_value_heads", {"0", "16777217"}},
      {"vocab_size", {"0", "16777217"}},
      {"head_dim", {"0", "16777217"}},
      {"max_position_embeddings", {"0", "16777217"}},
  };
  for (const auto& [field, values] : cases)
    for (const std::string& value : values) {
      SCOPED_TRACE(field + " " + value);
      Config config = llama_config();
      config[field] = value;
      write_config(config);
      EXPECT_NE(expect_unsupported(field + " is " + value).find("accepted: a whole number from 1 to "),
                std::string::npos);
    }
  // The largest accepted: config.json passes, the weights then lack layer 2.
  Config config = llama_config();
  config["num_hidden_layers"] = "4096";
  write_config(config);
  expect_bad_file(weights_path(), "tensor 'model.layers.2.self_attn.q_proj.weight' is missing");
}

TEST_F(DecoderCheckpointReader, RefusesHeadCountsThatDoNotDivide) {
  write_weights(tensors_of(Model{}));
  Config config = llama_config();
  config["num_key_value_heads"] = "3";
  write_config(config);
  expect_unsupported("num_key_value_heads is 3");

  config = config_of("MistralForCausalLM", "mistral");
  config["num_attention_heads"] = "4";
  config.erase("num_key_value_heads");  // MistralConfig's 8 does not divide 4
  write_config(config);
  EXPECT_NE(expect_unsupported("num_key_value_heads is 8").find("MistralConfig's default"), std::string::npos);

  config = config_of("MistralForCausalLM", "mistral");
  config["num_attention_heads"] = "6";
  config["num_key_value_heads"] = "3";
  write_config(config);
  expect_unsupported("hidden_size 64 is not a multiple of num_attention_heads 6");

  config = llama_config();  // LlamaConfig refuses it even with a head_dim
  config["num_attention_heads"] = "6";
  config["num_key_value_heads"] = "3";
  config["head_dim"] = "16";
  write_config(config);
  expect_unsupported("hidden_size 64 is not a multiple of num_attention_heads 6");

  config = llama_config();
  config["head_dim"] = "15";
  write_config(config);
  expect_unsupported("head_dim is 15");
}

TEST_F(DecoderCheckpointReader, RefusesRopeScalingOtherThanLlama3) {
  write_weights(tensors_of(Model{}));
  for (const char* type : {"linear", "dynamic", "yarn", "longrope", "su", "mrope"}) {
    SCOPED_TRACE(type);
    Config config = llama_config();
    config["rope_scaling"] = std::string("{\"rope_type\": \"") + type + "\", \"factor\": 2.0}";
    write_config(config);
    expect_unsupported(std::string("rope_scaling.rope_type '") + type + "' is not supported");
    config.erase("rope_scaling");
    config["rope_parameters"] = std::string("{\"rope_type\": \"") + type + "\", \"rope_theta\": 10000.0}";
    write_config(config);
    expect_unsupported(std::string("rope_parameters.rope_type '") + type + "'");
    config.erase("rope_parameters");
    config["rope_scaling"] = std::string("{\"type\": \"") + type + "\", \"factor\": 2.0}";
    write_config(config);
    expect_unsupported(std::string("rope_scaling.type '") + type + "'");
  }
}

TEST_F(DecoderCheckpointReader, RefusesIncompleteOrInconsistentLlama3Rope) {
  write_weights(tensors_of(Model{}));
  Config config = llama_config();
  config["rope_scaling"] = "{\"rope_type\": \"llama3\", \"low_freq_factor\": 1.0, \"high_freq_factor\": 4.0}";
  write_config(config);
  expect_bad_file(config_path(), "/rope_scaling/factor: missing");
  config["rope_scaling"] =
      "{\"rope_type\": \"llama3\", \"factor\": 8.0, \"low_freq_factor\": 4.0, \"high_freq_factor\": 4.0}";
  write_config(config);
  expect_unsupported("rope_scaling.high_freq_factor is 4");
  config["rope_scaling"] =
      "{\"rope_type\": \"llama3\", \"factor\": 0.5, \"low_freq_factor\": 1.0, \"high_freq_factor\": 4.0}";
  write_config(config);
  expect_unsupported("rope_scaling.factor is 0.5");
  config.erase("rope_scaling");
  config["rope_theta"] = "-1.0";
  write_config(config);
  expect_unsupported("rope_theta is -1");
}

TEST_F(DecoderCheckpointReader, RefusesPartialRotaryEmbeddings) {
  Model model;
  write_weights(tensors_of(model));
  Config config = llama_config();
  config["partial_rotary_factor"] = "0.5";
  write_config(config);
  expect_unsupported("partial_rotary_factor is 0.5");
  config.erase("partial_rotary_factor");
  config["rope_parameters"] = "{\"rope_type\": \"default\", \"rope_theta\": 10000.0, \"partial_rotary_factor\": 0.25}";
  write_config(config);
  expect_unsupported("rope_parameters.partial_rotary_factor is 0.25");
  config["rope_parameters"] = "{\"rope_type\": \"default\", \"rope_theta\": 10000.0, \"partial_rotary_factor\": 1.0}";
  config["partial_rotary_factor"] = "1.0";
  write_config(config);
  EXPECT_EQ(read().architecture.rope_type, "default");
}

TEST_F(DecoderCheckpointReader, RefusesOtherDtypes) {
  write_weights(tensors_of(Model{}));
  Config config = llama_config();
  config["dtype"] = "\"float8_e4m3fn\"";
  write_config(config);
  expect_unsupported("dtype 'float8_e4m3fn' is not supported");
  config.erase("dtype");
  config["torch_dtype"] = "\"int8\"";
  write_config(config);
  expect_unsupported("torch_dtype 'int8' is not supported");
}

// Each field refused before the weights are looked at: the folder holds no safetensors file.
TEST_F(DecoderCheckpointReader, RefusesFeaturesItDoesNotReproduceBeforeReadingWeights) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"quantization_config", "{\"quant_method\": \"awq\", \"bits\": 4}"},
      {"num_experts", "8"},
      {"num_local_experts", "8"},
      {"n_routed_experts", "64"},
      {"moe_intermediate_size", "1408"},
      {"kv_lora_rank", "512"},
      {"q_lora_rank", "1536"},
      {"vision_config", "{\"hidden_size\": 32}"},
      {"text_config", "{\"hidden_size\": 64}"},
      {"audio_config", "{}"},
      {"hidden_act", "\"gelu_pytorch_tanh\""},
      {"attn_logit_softcapping", "50.0"},
      {"final_logit_softcapping", "30.0"},
      {"layer_types", "[\"full_attention\", \"sliding_attention\"]"},
      {"pretraining_tp", "2"},
      {"embedding_multiplier", "12.0"},
      {"logits_scaling", "8.0"},
      {"residual_multiplier", "0.22"},
      {"attention_multiplier", "0.0078125"},
  };
  for (const auto& [field, value] : cases) {
    SCOPED_TRACE(field);
    Config config = llama_config();
    config[field] = value;
    write_config(config);
    const std::string reason = expect_unsupported(field);
    EXPECT_NE(reason.find("accepted"), std::string::npos) << reason;
  }
}

TEST_F(DecoderCheckpointReader, AcceptsTheHarmlessValuesOfThoseFields) {
  write_weights(tensors_of(Model{}));
  Config config = llama_config();
  config["quantization_config"] = "null";
  config["num_experts"] = "0";
  config["num_local_experts"] = "null";
  config["kv_lora_rank"] = "null";
  config["final_logit_softcapping"] = "null";
  config["attn_logit_softcapping"] = "null";
  config["layer_types"] = "[\"full_attention\", \"full_attention\"]";
  config["pretraining_tp"] = "1";
  config["hidden_act"] = "\"silu\"";
  write_config(config);
  EXPECT_EQ(read().tensors.size(), 21u);
}

TEST_F(DecoderCheckpointReader, RefusesQwenLayersMixingSlidingAndFullAttention) {
  Model model;
  model.qkv_bias = true;
  write_weights(tensors_of(model));
  for (const char* family : {"qwen2", "qwen3"}) {
    SCOPED_TRACE(family);
    Config config = config_of(std::string(family) == "qwen2" ? "Qwen2ForCausalLM" : "Qwen3ForCausalLM", family);
    config["use_sliding_window"] = "true";
    config["max_window_layers"] = "1";
    write_config(config);
    expect_unsupported("max_window_layers is 1 with use_sliding_window true");
  }
  Config config = config_of("Qwen2ForCausalLM", "qwen2");
  config["layer_types"] = "[\"full_attention\", \"sliding_attention\"]";
  write_config(config);
  expect_unsupported("layer_types[1] is 'sliding_attention'");
}

// --- the tensors ------------------------------------------------------------------------

TEST_F(DecoderCheckpointReader, RefusesAMissingTensor) {
  std::vector<TensorSpec> tensors = tensors_of(Model{});
  tensors.erase(tensors.begin() + 16);  // model.layers.1.mlp.down_proj.weight
  write_config(llama_config());
  write_weights(tensors);
  expect_bad_file(weights_path(), "tensor 'model.layers.1.mlp.down_proj.weight' is missing; config.json");
}

TEST_F(DecoderCheckpointReader, RefusesAnExtraTensor) {
  Model model;
  std::vector<TensorSpec> tensors = tensors_of(model);
  tensors.push_back({"model.layers.0.self_attn.q_proj.bias", "BF16", {64}});
  write_config(llama_config());
  write_weights(tensors);
  expect_bad_file(weights_path(), "tensor 'model.layers.0.self_attn.q_proj.bias' is not a parameter of "
                                  "LlamaForCausalLM with 2 layers, attention_bias false");

  // A checkpoint of 3 layers for a config of 2.
  model.layers = 3;
  write_weights(tensors_of(model));
  expect_bad_file(weights_path(), "tensor 'model.layers.2.");

  // An untied config.json expects lm_head.weight: a checkpoint saved tied lacks it.
  model.layers = 2;
  model.tied = true;
  write_weights(tensors_of(model));
  expect_bad_file(weights_path(), "tensor 'lm_head.weight' is missing");
}

TEST_F(DecoderCheckpointReader, RefusesAWrongShape) {
  Config config = llama_config();
  config["hidden_size"] = "256";
  config["intermediate_size"] = "512";
  config["num_hidden_layers"] = "1";
  Model model;
  model.hidden = 256;
  model.intermediate = 512;
  model.head_dim = 64;
  model.layers = 1;
  std::vector<TensorSpec> tensors = tensors_of(model);
  ASSERT_EQ(tensors[6].name, "model.layers.0.mlp.up_proj.weight");
  tensors[6].shape = {512, 255};
  write_config(config);
  write_weights(tensors);
  EXPECT_EQ(testing::message_of<DataFileError>([&] { read(); }),
            weights_path() + ": tensor 'model.layers.0.mlp.up_proj.weight' has shape [512, 255]; config.json "
                             "gives [512, 256]");
  tensors[6].shape = {512, 256, 1};
  write_weights(tensors);
  expect_bad_file(weights_path(), "has shape [512, 256, 1]; config.json gives [512, 256]");
}

TEST_F(DecoderCheckpointReader, RefusesADtypeOtherThanTheCheckpoints) {
  std::vector<TensorSpec> tensors = tensors_of(Model{});
  tensors[8].dtype = "F32";  // model.layers.0.input_layernorm.weight
  Config config = llama_config();
  config["torch_dtype"] = "\"bfloat16\"";
  write_config(config);
  write_weights(tensors);
  expect_bad_file(weights_path(), "tensor 'model.layers.0.input_layernorm.weight' is F32; config.json's dtype "
                                  "bfloat16 makes every tensor BF16");

  // Without a dtype in config.json the first tensor's decides, and a mixture is refused.
  config.erase("torch_dtype");
  write_config(config);
  expect_bad_file(weights_path(), "tensor 'model.layers.0.input_layernorm.weight' is F32; the checkpoint's dtype");

  // All tensors F16 but config.json says bfloat16.
  Model f16;
  f16.dtype = "F16";
  config["dtype"] = "\"bfloat16\"";
  write_config(config);
  write_weights(tensors_of(f16));
  expect_bad_file(weights_path(), "tensor 'model.embed_tokens.weight' is F16");
}

TEST_F(DecoderCheckpointReader, RefusesTensorsOfAnUnsupportedDtypeWhenConfigGivesNone) {
  Model model;
  model.dtype = "I8";
  write_config(llama_config());
  write_weights(tensors_of(model));
  expect_bad_file(weights_path(), "tensor 'model.embed_tokens.weight' is I8 and config.json gives no dtype");
}

TEST_F(DecoderCheckpointReader, RefusesAFolderWithoutWeights) {
  write_config(llama_config());
  expect_bad_file(model_, "holds no .safetensors file");
}

}  // namespace
}  // namespace iteragpu
