#pragma once
// The backend a measurement uses: the caller's (a test double) or the LibTorch plugin.

#include <memory>
#include <string>

#include "iteragpu/backend.hpp"

namespace iteragpu {

// `backend` when set, else the plugin (load_torch_backend(backend_path)); throws
// BackendUnavailable with the loader's reason when there is none.
std::shared_ptr<Backend> backend_or_plugin(const std::shared_ptr<Backend>& backend,
                                           const std::string& backend_path);

// The measurement worker executable: `explicit_path` when set, else ITERAGPU_MEASURE_WORKER,
// else beside the core, else in the plugin folder relative to it. BackendUnavailable, naming
// the places looked in, when there is none.
inline constexpr const char* kMeasureWorkerFileName = "iteragpu-measure-worker";
std::string find_measure_worker(const std::string& explicit_path);

}  // namespace iteragpu
