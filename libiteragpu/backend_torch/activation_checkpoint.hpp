#pragma once
// torch.utils.checkpoint.checkpoint(function, input, use_reentrant=False) at its defaults (early
// stop on) in LibTorch: what transformers' GradientCheckpointingLayer runs for each decoder
// layer once model.gradient_checkpointing_enable() was called.
//
// Forward: the function runs with autograd recording, but every tensor an op saves for the
// backward is packed into an empty holder, so each intermediate is freed where the function
// drops it; the checkpoint keeps only the input and what the function captured (the layer's
// cos, sin and position ids, as Python's functools.partial keeps them).
// Backward: the first saved tensor the autograd engine unpacks runs the function again from
// the kept input, with grad on, keeping what each pack saves, and stops at the last tensor the
// forward packed (the rest of the function is not recomputed); each unpack hands its tensor
// over and forgets it. The checkpoint and its input go when the last holder goes.
//
// Python installs its hooks with torch.autograd.graph.saved_tensors_hooks, which LibTorch does
// not offer; a SavedVariable asks the default engine for its default hooks
// (Engine::get_default_saved_variable_hooks, which PyTorch's own Python engine overrides), so
// install_checkpointing_engine() makes an engine that answers with this thread's checkpoint the
// default one. Without a checkpoint running it answers none, as the base engine does.

#include <ATen/ATen.h>

#include <functional>

namespace iteragpu::torch_backend {

// Once per process, before the first checkpoint.
void install_checkpointing_engine();

// function(input) under the checkpoint; with grad off, function(input) itself (as Python).
at::Tensor checkpoint(std::function<at::Tensor(const at::Tensor&)> function, const at::Tensor& input);

}  // namespace iteragpu::torch_backend
