// The workload seam of the backend interface: each workload's payload and report codec read
// back exactly what it wrote, a malformed text is refused with one line, and a backend refuses
// a workload kind it does not have: the test double, and the LibTorch plugin's registry where
// the plugin is built (its open() checks the workload before it looks for a GPU).
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <memory>
#include <string>

#include "fake_backend.hpp"
#include "iteragpu/backend.hpp"
#include "workload/decoder_payload.hpp"
#include "workload/training_payload.hpp"
#include "workload/synthetic_mlp_payload.hpp"

namespace iteragpu::testing {
namespace {

using Code = BackendStatus::Code;

// Every member a value of its own, so a member read into another's place shows.
DecoderPayload every_member_set() {
  DecoderPayload payload;
  payload.batch = 3;
  payload.context = 4096;
  payload.new_tokens = 7;
  DecoderArchitecture& a = payload.architecture;
  a.architecture = "LlamaForCausalLM";
  a.model_type = "llama";
  a.layers = 32;
  a.hidden_size = 4096;
  a.intermediate_size = 14336;
  a.attention_heads = 33;
  a.kv_heads = 8;
  a.head_dim = 128;
  a.vocab_size = 128256;
  a.max_position_embeddings = 131072;
  a.sliding_window = 4095;
  a.rms_norm_eps = 1e-5;
  a.rope_theta = 500000.0;
  a.rope_type = "llama3";
  a.rope_factor = 0.1 + 0.2;  // not a short decimal: read back to the last bit
  a.rope_low_freq_factor = 1.5;
  a.rope_high_freq_factor = 4.25;
  a.rope_original_max_position_embeddings = 8192;
  a.qkv_bias = true;
  a.o_proj_bias = false;
  a.mlp_bias = true;
  a.qk_norm = false;
  a.tie_word_embeddings = true;
  a.dtype = "bfloat16";
  DecoderTensor embed{"model.embed_tokens.weight", "/models/a \"quoted\"\nname/é\xff.safetensors",
                      std::numeric_limits<std::uint64_t>::max() - 1, 1050673152, "BF16", {128256, 4096}};
  DecoderTensor norm{"model.norm.weight", "/models/b.safetensors", 8, 8192, "F32", {4096}};
  payload.tensors = {embed, norm};
  return payload;
}

// A LoRA step of the same checkpoint, every member set.
TrainingPayload lora_step() {
  const DecoderPayload checkpoint = every_member_set();
  TrainingPayload payload;
  payload.batch = checkpoint.batch;
  payload.context = checkpoint.context;
  payload.method = "lora";
  payload.lora_rank = 16;
  payload.lora_alpha = 32.5;
  payload.lora_targets = "q_proj,v_proj";
  payload.gradient_checkpointing = true;
  payload.architecture = checkpoint.architecture;
  payload.tensors = checkpoint.tensors;
  return payload;
}

TEST(WorkloadPayload, SyntheticMlpRoundTrip) {
  SyntheticMlpPayload written;
  written.batch = 2;
  written.context = 3;
  written.width = 5;
  written.hidden = 7;
  SyntheticMlpPayload read;
  ASSERT_EQ(decode_synthetic_mlp_payload(encode_synthetic_mlp_payload(written), read), "");
  EXPECT_EQ(read.batch, 2);
  EXPECT_EQ(read.context, 3);
  EXPECT_EQ(read.width, 5);
  EXPECT_EQ(read.hidden, 7);
}

TEST(WorkloadPayload, DecoderRoundTrip) {
  const std::string text = encode_decoder_payload(every_member_set());
  DecoderPayload read;
  ASSERT_EQ(decode_decoder_payload(text, read), "");
  // Written again, the same text: every member was read into its own place.
  EXPECT_EQ(encode_decoder_payload(read), text);
  EXPECT_EQ(read.new_tokens, 7);
  EXPECT_EQ(read.architecture.rope_factor, 0.1 + 0.2);
  EXPECT_EQ(read.architecture.rms_norm_eps, 1e-5);
  ASSERT_EQ(read.tensors.size(), 2u);
  EXPECT_EQ(read.tensors[0].file, every_member_set().tensors[0].file);  // bytes as they were
  EXPECT_EQ(read.tensors[0].offset, std::numeric_limits<std::uint64_t>::max() - 1);
  EXPECT_EQ(read.tensors[0].shape, (std::vector<std::int64_t>{128256, 4096}));
  EXPECT_EQ(read.tensors[1].name, "model.norm.weight");
}

TEST(WorkloadPayload, TrainingRoundTrip) {
  const std::string text = encode_training_payload(lora_step());
  TrainingPayload read;
  ASSERT_EQ(decode_training_payload(text, read), "");
  EXPECT_EQ(encode_training_payload(read), text);
  EXPECT_EQ(read.method, "lora");
  EXPECT_EQ(read.lora_rank, 16);
  EXPECT_EQ(read.lora_alpha, 32.5);
  EXPECT_EQ(read.lora_targets, "q_proj,v_proj");
  EXPECT_TRUE(read.gradient_checkpointing);
  EXPECT_EQ(read.architecture.rope_factor, 0.1 + 0.2);
  ASSERT_EQ(read.tensors.size(), 2u);
  EXPECT_EQ(read.tensors[1].name, "model.norm.weight");
}

TEST(WorkloadPayload, TrainingRefusesWhatNoStepCanRun) {
  TrainingPayload payload = lora_step();
  TrainingPayload read;
  payload.method = "qlora";
  EXPECT_EQ(decode_training_payload(encode_training_payload(payload), read), "method must be full or lora");
  payload = lora_step();
  payload.lora_targets.clear();
  EXPECT_EQ(decode_training_payload(encode_training_payload(payload), read),
            "a LoRA step needs a positive rank and at least one target");
  payload.method = "full";  // full fine-tuning needs no target
  EXPECT_EQ(decode_training_payload(encode_training_payload(payload), read), "");
  payload.context = 0;
  EXPECT_EQ(decode_training_payload(encode_training_payload(payload), read), "batch and context must be positive");
}

TEST(WorkloadPayload, TrainingRunReportRoundTrip) {
  TrainingRunReport written;
  written.attention_backend = "flash_attention";
  const float losses[] = {12.152650833129883f, 5.721184730529785f};
  written.losses_float32.assign(reinterpret_cast<const char*>(losses), sizeof losses);
  written.parameters = 1235814400;
  written.trainable_parameters = 11272192;
  TrainingRunReport read;
  ASSERT_EQ(decode_training_run_report(encode_training_run_report(written), read), "");
  EXPECT_EQ(read.attention_backend, written.attention_backend);
  EXPECT_EQ(read.losses_float32, written.losses_float32);
  EXPECT_EQ(read.parameters, written.parameters);
  EXPECT_EQ(read.trainable_parameters, written.trainable_parameters);
  EXPECT_FALSE(read.device_used_bytes);
}

TEST(WorkloadPayload, DecoderRunReportRoundTripWithBinaryLogits) {
  DecoderRunReport written;
  written.attention_backend = "prefill cudnn_attention, decode flash_attention";
  written.first_sequence_tokens = {128000, 0, -1, 42};
  for (int byte = 0; byte < 256; ++byte) written.last_logits_bytes += static_cast<char>(byte);
  written.device_used_bytes = 81559ULL * 1024 * 1024;
  DecoderRunReport read;
  ASSERT_EQ(decode_decoder_run_report(encode_decoder_run_report(written), read), "");
  EXPECT_EQ(read.attention_backend, written.attention_backend);
  EXPECT_EQ(read.first_sequence_tokens, written.first_sequence_tokens);
  EXPECT_EQ(read.last_logits_bytes, written.last_logits_bytes);
  EXPECT_EQ(read.device_used_bytes, written.device_used_bytes);

  written.device_used_bytes.reset();  // a backend without the driver's figure
  ASSERT_EQ(decode_decoder_run_report(encode_decoder_run_report(written), read), "");
  EXPECT_FALSE(read.device_used_bytes.has_value());
}

struct Malformed {
  const char* text;
  const char* reason;
};

TEST(WorkloadPayload, MalformedIsRefusedWithOneLine) {
  const std::string valid = encode_synthetic_mlp_payload({});
  for (const Malformed& malformed : {
           Malformed{"", "not valid JSON ("},
           Malformed{"{\"batch\": 1,", "not valid JSON ("},
           Malformed{"[1, 2]", "not a JSON object"},
           Malformed{"{\"batch\": 1, \"context\": 16, \"width\": 64}", "at /hidden: missing"},
           Malformed{"{\"batch\": \"1\", \"context\": 16, \"width\": 64, \"hidden\": 256}",
                     "at /batch: not an integer"},
           Malformed{"{\"batch\": 0, \"context\": 16, \"width\": 64, \"hidden\": 256}",
                     "model dimensions must be positive"},
           // Numbers RapidJSON 1.1.0 reads with undefined behaviour, refused before it parses
           // (found by tests/fuzz/workload_payload_fuzzer.cpp).
           Malformed{"{\"batch\": 18446744073709551615551615}", "a number at offset 10 that is longer than"},
           Malformed{"{\"hidden\": 0.0001844674407370955161599}", "a number at offset 11 that is longer than"},
           Malformed{"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]",
                     "nested more than 64 levels deep"},
       }) {
    SyntheticMlpPayload payload;
    const std::string reason = decode_synthetic_mlp_payload(malformed.text, payload);
    EXPECT_NE(reason.find(malformed.reason), std::string::npos) << malformed.text << " → " << reason;
    EXPECT_EQ(reason.find('\n'), std::string::npos) << reason;
  }

  std::string text = encode_decoder_payload(every_member_set());
  text.replace(text.find("[128256,4096]"), 13, "[128256,\"x\"]");
  DecoderPayload decoder;
  EXPECT_EQ(decode_decoder_payload(text, decoder), "at /tensors/0/shape: not an array of integers of 64 bits");

  DecoderRunReport report;
  EXPECT_EQ(decode_decoder_run_report("{\"attention_backend\": \"x\", \"first_sequence_tokens\": [], "
                                      "\"last_logits_bytes\": \"0g\", \"device_used_bytes\": null}",
                                      report),
            "at /last_logits_bytes: not hexadecimal bytes (digits 0-9 and a-f)");
}

// --- backends refuse what they cannot run --------------------------------------------------

WorkloadSpec spec_of(const std::string& kind, const std::string& payload) {
  WorkloadSpec spec;
  spec.kind = kind;
  spec.payload = payload;
  return spec;
}

TEST(WorkloadSeam, TheTestDoubleRefusesAnUnknownKindAndAMalformedPayload) {
  FakeBackend backend;
  const BackendStatus unknown = backend.open(spec_of("speculative-decoding", encode_synthetic_mlp_payload({})));
  EXPECT_EQ(unknown.code, Code::kUnsupported);
  EXPECT_EQ(unknown.message,
            "the test double has no workload speculative-decoding (it has: decoder, synthetic-mlp, training)");
  const BackendStatus malformed = backend.open(spec_of(kDecoderKind, encode_synthetic_mlp_payload({})));
  EXPECT_EQ(malformed.code, Code::kFailed);
  EXPECT_EQ(malformed.message, "the decoder payload is malformed: at /new_tokens: missing");
  EXPECT_TRUE(backend.open(spec_of(kSyntheticMlpKind, encode_synthetic_mlp_payload({}))).ok());
  EXPECT_EQ(backend.run_step("backward").code, Code::kUnsupported);
  backend.close();
}

TEST(WorkloadSeam, TheTorchPluginRefusesAnUnknownKindAndAMalformedPayload) {
#ifndef ITERAGPU_TORCH_BACKEND_PATH
  GTEST_SKIP() << "this build has no LibTorch backend plugin";
#else
  // Opened as the loader opens it; never closed, as LibTorch is not made to be unloaded.
  void* plugin = dlopen(ITERAGPU_TORCH_BACKEND_PATH, RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(plugin, nullptr) << dlerror();
  const auto abi_version = reinterpret_cast<BackendAbiVersionFn>(dlsym(plugin, kBackendAbiVersionSymbol));
  const auto create = reinterpret_cast<BackendCreateFn>(dlsym(plugin, kBackendCreateSymbol));
  ASSERT_TRUE(abi_version && create);
  EXPECT_EQ(abi_version(), kBackendAbiVersion);
  const std::unique_ptr<Backend> backend(create());
  ASSERT_NE(backend, nullptr);

  const BackendStatus unknown = backend->open(spec_of("speculative-decoding", encode_synthetic_mlp_payload({})));
  EXPECT_EQ(unknown.code, Code::kUnsupported);
  EXPECT_EQ(unknown.message,
            "this plugin has no workload speculative-decoding (it has: decoder, synthetic-mlp, training)");

  const BackendStatus malformed = backend->open(spec_of(kSyntheticMlpKind, "{\"batch\": 1,\n\"context\""));
  EXPECT_EQ(malformed.code, Code::kFailed);
  EXPECT_EQ(malformed.message.rfind("the synthetic-mlp payload is malformed: not valid JSON (", 0), 0u)
      << malformed.message;
  EXPECT_EQ(malformed.message.find('\n'), std::string::npos) << malformed.message;

  // Well-formed specs of both kinds pass the workload's check: what answers then is the device.
  const BackendStatus untrainable = backend->open(spec_of(kTrainingKind, "{\"batch\": 1}"));
  EXPECT_EQ(untrainable.code, Code::kFailed);
  EXPECT_EQ(untrainable.message, "the training payload is malformed: at /context: missing");

  for (const WorkloadSpec& spec : {spec_of(kSyntheticMlpKind, encode_synthetic_mlp_payload({})),
                                   spec_of(kDecoderKind, encode_decoder_payload(every_member_set())),
                                   spec_of(kTrainingKind, encode_training_payload(lora_step()))}) {
    const BackendStatus opened = backend->open(spec);
    if (!opened.ok()) EXPECT_EQ(opened.code, Code::kDeviceUnavailable) << spec.kind << ": " << opened.message;
    backend->close();
  }
#endif
}

}  // namespace
}  // namespace iteragpu::testing
