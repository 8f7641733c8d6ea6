#pragma once
// The synthetic MLP's payload (WorkloadSpec::payload): written by its core workload
// (synthetic_model.cpp), read by its plugin module (backend_torch/synthetic_mlp_module.cpp)
// and the test double, with this one codec. The MLP reports nothing after its run.

#include <cstdint>
#include <string>

namespace iteragpu {

// The name the synthetic MLP is registered under (WorkloadSpec::kind).
inline constexpr const char* kSyntheticMlpKind = "synthetic-mlp";

// Linear(width→hidden) → GELU → Linear(hidden→width) on an input [batch, context, width].
struct SyntheticMlpPayload {
  std::int64_t batch = 1, context = 16, width = 64, hidden = 256;
};

std::string encode_synthetic_mlp_payload(const SyntheticMlpPayload& payload);
// "" when `text` is a payload of positive dimensions, else why not in one line.
std::string decode_synthetic_mlp_payload(const std::string& text, SyntheticMlpPayload& payload);

}  // namespace iteragpu
