#pragma once
// The steps today's workloads name in their phase plans (PlannedPhase::step) and the backend
// runs (Backend::run_step): shared by the plans, the plugin modules that run them, the
// predictor's allocator model and the test double. A workload with other steps (a training
// step) adds its own names; the protocol and the backend interface only pass them on.

namespace iteragpu {

inline constexpr const char* kLoadModelStep = "load_model";        // build, seed, move to the device
inline constexpr const char* kCreateInputsStep = "create_inputs";  // the inputs, on the device
inline constexpr const char* kForwardStep = "forward";             // one forward; its output stays
// A training step's (training_payload.hpp): the forward above computes the loss too.
inline constexpr const char* kAddAdaptersStep = "add_adapters";  // PEFT's get_peft_model
inline constexpr const char* kBackwardStep = "backward";         // loss.backward(), then the output dropped
inline constexpr const char* kOptimizerStep = "optimizer";       // AdamW's step, then zero_grad

}  // namespace iteragpu
