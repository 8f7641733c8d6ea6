// Finds and opens the LibTorch backend plugin (libiteragpu_torch_backend.so).
//
// Where it is looked for, first match wins:
//   1. the path given by the caller (`--backend PATH` on the command line, `backend_path`
//      in the request structs and in Python);
//   2. otherwise the ITERAGPU_BACKEND environment variable, when set and not empty, naming
//      the plugin file;
//   3. otherwise beside the file that holds this library: the `iteragpu` executable, or the
//      Python extension module; then in <that directory>/ITERAGPU_PLUGIN_RELATIVE_DIR
//      (../lib/iteragpu once installed).
// In cases 1 and 2 only the named file is tried.
//
// A process holds at most one plugin: two LibTorch builds must never share a process, and
// unloading LibTorch is not safe. The plugin stays open for the life of the process.

#include <dlfcn.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <mutex>
#include <vector>

#include "mechanics/backend_loader.hpp"
#include "mechanics/installation.hpp"
#include "iteragpu/backend.hpp"
#include "iteragpu/error.hpp"

namespace iteragpu {
namespace {

struct LoaderState {
  std::mutex mutex;
  // Results by request: the explicit path, or "" for the default search.
  std::map<std::string, BackendLoadResult> results;
  std::string opened_path;  // the plugin file dlopen succeeded on, if any
  BackendLoadResult opened;  // its result
};

// Never destroyed: at exit LibTorch's own static objects are torn down before this one
// would be, so destroying the backend then could touch freed state.
LoaderState& loader_state() {
  static LoaderState* state = new LoaderState;
  return *state;
}

// Beside the core, then in the plugin folder relative to it: the plugin and the measurement
// worker are installed together. Written without "bin/../" (lexically: no link is resolved),
// as messages and reports name them.
std::vector<std::string> candidates_beside_core(const std::string& file_name) {
  const std::string directory = core_object_directory();
  const auto in_plugin_folder = std::filesystem::path(directory + "/" + ITERAGPU_PLUGIN_RELATIVE_DIR + "/" + file_name);
  return {directory + "/" + file_name, in_plugin_folder.lexically_normal().string()};
}

std::vector<std::string> default_candidates() { return candidates_beside_core(kBackendPluginFileName); }

bool file_exists(const std::string& path) {
  struct stat info {};
  return stat(path.c_str(), &info) == 0;
}

std::string joined(const std::vector<std::string>& paths) {
  std::string text;
  for (const auto& path : paths) text += (text.empty() ? "" : ", ") + path;
  return text;
}

std::string dl_error_text() {
  const char* text = dlerror();
  return text ? text : "unknown dynamic loader error";
}

// dlopen, ABI check and creation of the backend. Sets state.opened_path once dlopen succeeded.
BackendLoadResult open_plugin(LoaderState& state, const std::string& path) {
  BackendLoadResult result;
  result.path = path;
  dlerror();
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    result.error = "cannot load the LibTorch backend " + path + ": " + dl_error_text();
    return result;
  }
  // From here the plugin and its LibTorch are in the process for good (see above).
  state.opened_path = canonical_path(path);
  auto abi_version = reinterpret_cast<BackendAbiVersionFn>(dlsym(handle, kBackendAbiVersionSymbol));
  auto create = reinterpret_cast<BackendCreateFn>(dlsym(handle, kBackendCreateSymbol));
  if (!abi_version || !create) {
    result.error = path + " is not an iteragpu backend plugin (it lacks " +
                   (abi_version ? kBackendCreateSymbol : kBackendAbiVersionSymbol) + ")";
    return result;
  }
  const int found_version = abi_version();
  if (found_version != kBackendAbiVersion) {
    result.error = path + " implements backend interface version " +
                   std::to_string(found_version) + " but this iteragpu needs version " +
                   std::to_string(kBackendAbiVersion) + "; rebuild the plugin with this iteragpu";
    return result;
  }
  Backend* backend = nullptr;
  try {
    backend = create();
  } catch (...) {  // the plugin must not throw across the C boundary; be safe anyway
  }
  if (!backend) {
    result.error = path + " failed to create its backend";
    return result;
  }
  result.backend.reset(backend);
  return result;
}

BackendLoadResult search_and_open(LoaderState& state, const std::string& explicit_path) {
  std::string named = explicit_path;
  if (named.empty()) {
    const char* from_environment = std::getenv("ITERAGPU_BACKEND");
    if (from_environment && *from_environment) named = from_environment;
  }
  if (!state.opened_path.empty()) {
    // One plugin per process: the same file again is the same result; another is refused.
    if (named.empty() || canonical_path(named) == state.opened_path) return state.opened;
    BackendLoadResult refused;
    refused.path = named;
    refused.error = "the LibTorch backend " + state.opened_path +
                    " is already loaded in this process; load " + named +
                    " in a new process (two LibTorch builds cannot share one)";
    return refused;
  }
  if (!named.empty()) {
    BackendLoadResult result = open_plugin(state, named);
    if (!state.opened_path.empty()) state.opened = result;
    return result;
  }
  const std::vector<std::string> candidates = default_candidates();
  for (const auto& candidate : candidates) {
    if (!file_exists(candidate)) continue;
    BackendLoadResult result = open_plugin(state, candidate);
    if (!state.opened_path.empty()) state.opened = result;
    return result;
  }
  BackendLoadResult missing;  // no file to name: path stays empty
#if ITERAGPU_TORCH_BACKEND_BUILT
  missing.error = std::string("no ") + kBackendPluginFileName + " found; looked in " +
                  joined(candidates) + " (name the plugin file with the backend option or ITERAGPU_BACKEND)";
#else
  // scripts/build builds the plugin only where it found a CUDA or ROCm PyTorch: say so, once.
  missing.error =
      "this iteragpu was built without the LibTorch plugin, which measuring needs: rebuild it where a CUDA or "
      "ROCm PyTorch is installed (scripts/build finds it; see docs/building.md)";
#endif
  return missing;
}

}  // namespace

const BackendLoadResult& load_torch_backend(const std::string& explicit_path) {
  LoaderState& state = loader_state();
  std::lock_guard<std::mutex> lock(state.mutex);
  // Each request is answered once; ITERAGPU_BACKEND is read by the first default search.
  auto found = state.results.find(explicit_path);
  if (found != state.results.end()) return found->second;
  return state.results.emplace(explicit_path, search_and_open(state, explicit_path)).first->second;
}

std::string find_measure_worker(const std::string& explicit_path) {
  if (!explicit_path.empty()) return explicit_path;
  const char* from_environment = std::getenv("ITERAGPU_MEASURE_WORKER");
  if (from_environment && *from_environment) return from_environment;
  const std::vector<std::string> candidates = candidates_beside_core(kMeasureWorkerFileName);
  for (const auto& candidate : candidates)
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
  throw BackendUnavailable(std::string("no ") + kMeasureWorkerFileName + " found; looked in " + joined(candidates) +
                           " (name it with ITERAGPU_MEASURE_WORKER); nothing was measured");
}

std::shared_ptr<Backend> backend_or_plugin(const std::shared_ptr<Backend>& backend,
                                           const std::string& backend_path) {
  if (backend) return backend;
  const BackendLoadResult& loaded = load_torch_backend(backend_path);
  if (!loaded.backend)
    throw BackendUnavailable("no LibTorch backend: " + loaded.error + "; nothing was measured");
  return loaded.backend;
}

}  // namespace iteragpu
