// The host side of Python envs (envs/python_env.h): finds and loads the bridge module, keeps
// --python-path, and registers each Python env id once.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>

#include "core/config_error.h"
#include "envs/python/python_bridge.h"
#include "envs/python_env.h"
#include "envs/registry.h"
#include "envs/shared_library.h"

namespace rlx {

namespace {

constexpr const char* kBridgeFile = "rlx-python-envs.so";
constexpr const char* kBridgeVariable = "RLX_PYTHON_BRIDGE";  // an explicit path to the bridge module

std::mutex& python_mutex() {
  static std::mutex mutex;
  return mutex;
}

std::vector<std::string>& path_dirs() {
  static std::vector<std::string> dirs;
  return dirs;
}

// How many ScopedPythonRenderMode are alive.
std::atomic<int>& render_mode_scopes() {
  static std::atomic<int> scopes{0};
  return scopes;
}

// Where the bridge may be: $RLX_PYTHON_BRIDGE, beside this executable (a build tree, bin/ of an
// install), libexec/rlx/ of an install, and the build tree this library was built in (tests).
std::vector<std::filesystem::path> bridge_candidates() {
  if (const char* explicit_path = std::getenv(kBridgeVariable); explicit_path != nullptr && *explicit_path != '\0') {
    return {explicit_path};
  }
  std::vector<std::filesystem::path> candidates;
  std::error_code error;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", error);
  if (!error) {
    candidates.push_back(self.parent_path() / kBridgeFile);
    candidates.push_back(self.parent_path().parent_path() / "libexec" / "rlx" / kBridgeFile);
  }
#ifdef RLX_PYTHON_BRIDGE_BUILD_PATH
  candidates.emplace_back(RLX_PYTHON_BRIDGE_BUILD_PATH);
#endif
  return candidates;
}

// The bridge's registration function, loading the module on first use (with its symbols global:
// NumPy's extension modules resolve libpython's symbols through them).
PythonRegisterEnvFn bridge() {
  static std::unique_ptr<SharedLibrary> library;
  static PythonRegisterEnvFn register_env = nullptr;
  if (register_env != nullptr) return register_env;
  std::string tried;
  for (const std::filesystem::path& candidate : bridge_candidates()) {
    std::error_code error;
    if (!std::filesystem::exists(candidate, error)) {
      tried += (tried.empty() ? "" : ", ") + candidate.string() + " (no such file)";
      continue;
    }
    library = std::make_unique<SharedLibrary>("the Python env bridge " + candidate.string(), candidate.string(),
                                              SharedLibrary::Symbols::kGlobal);
    const auto abi_version = reinterpret_cast<int (*)()>(library->symbol(kPythonBridgeAbiVersionSymbol));
    if (abi_version() != kPythonBridgeAbiVersion) {
      throw std::runtime_error("the Python env bridge " + candidate.string() + " was built for another rlx (bridge ABI " +
                               std::to_string(abi_version()) + ", this rlx uses " +
                               std::to_string(kPythonBridgeAbiVersion) + ")");
    }
    register_env = reinterpret_cast<PythonRegisterEnvFn>(library->symbol(kPythonRegisterEnvSymbol));
    return register_env;
  }
  throw std::runtime_error(std::string("Python envs need rlx's Python bridge (") + kBridgeFile +
                           ", built with python3-dev and pybind11-dev), and it was not found: tried " + tried +
                           "; set " + kBridgeVariable + " to its path");
}

}  // namespace

ScopedPythonRenderMode::ScopedPythonRenderMode() { ++render_mode_scopes(); }

ScopedPythonRenderMode::~ScopedPythonRenderMode() { --render_mode_scopes(); }

void add_python_path(const std::vector<std::string>& dirs) {
  const std::lock_guard<std::mutex> lock(python_mutex());
  for (const std::string& dir : dirs) {
    std::error_code error;
    const std::filesystem::path absolute = std::filesystem::absolute(dir, error);
    std::string entry = error ? dir : absolute.lexically_normal().string();
    // Every load of an experiment's envs adds its python_path again: keep each directory once.
    if (std::find(path_dirs().begin(), path_dirs().end(), entry) == path_dirs().end()) path_dirs().push_back(std::move(entry));
  }
}

std::vector<std::string> python_path() {
  const std::lock_guard<std::mutex> lock(python_mutex());
  return path_dirs();
}

void register_python_env(const std::string& env_id, const std::string& env_config_json) {
  const std::lock_guard<std::mutex> lock(python_mutex());
  static std::map<std::string, std::string> registered;  // id -> the env_config it was registered with
  if (const auto it = registered.find(env_id); it != registered.end()) {
    if (it->second == env_config_json) return;
    throw ConfigError(env_id + ": already registered in this process with env_config " + it->second +
                      ", cannot register it again with " + env_config_json);
  }
  if (global_env_registry().contains(env_id)) {
    throw ConfigError(env_id + ": the id is taken by an environment that is not a Python class");
  }
  PythonEnvRegistration registration{env_id, env_config_json, path_dirs(), [] { return render_mode_scopes() > 0; }};
  bridge()(global_env_registry(), registration);
  registered.emplace(env_id, env_config_json);
}

}  // namespace rlx
