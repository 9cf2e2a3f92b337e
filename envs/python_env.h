// Python environments: `env: python:my_package.my_module:MyEnv` names a Gymnasium-style class
// (reset(seed=, options=) -> (obs, info); step(action) -> (obs, reward, terminated, truncated,
// info); Box, Discrete, MultiDiscrete, MultiBinary, Tuple and Dict spaces, read by duck typing;
// RLlib's or SB3's action masks), constructed with the experiment's env_config as keyword
// arguments. CPython runs inside the process that steps the envs; it is embedded by a bridge
// module (rlx-python-envs.so, built from envs/python/) that this loader dlopens only when a
// Python env is named, so rlx itself never links libpython.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace rlx {

// The prefix of a Python env id.
constexpr std::string_view kPythonEnvPrefix = "python:";

// True for an id "python:MODULE:ATTRIBUTE".
inline bool is_python_env_id(std::string_view id) { return id.substr(0, kPythonEnvPrefix.size()) == kPythonEnvPrefix; }

// A Python exception raised by a Python env's code (its constructor, reset, step or a space's
// attribute): what() is one line naming the env, the method and the exception; traceback() is
// Python's formatted traceback, for the log of the process that ran it.
class PythonEnvError : public std::runtime_error {
 public:
  PythonEnvError(const std::string& message, std::string traceback)
      : std::runtime_error(message), traceback_(std::move(traceback)) {}
  const std::string& traceback() const { return traceback_; }

 private:
  std::string traceback_;
};

// Adds directories to the front of the embedded interpreter's sys.path (--python-path; PYTHONPATH
// is honoured as Python does) for Python envs registered after the call. Thread-safe.
void add_python_path(const std::vector<std::string>& dirs);

// The directories add_python_path was given, in order (passed on to local worker processes).
std::vector<std::string> python_path();

// While one is alive, the Python envs that global_env_registry() makes are constructed to draw
// frames: with render_mode="rgb_array" added to env_config when it sets no render_mode and the
// class's constructor has a render_mode parameter (Gymnasium's envs draw only when asked at
// construction). Held by code that films an env (rlx evaluate --record, record_video_every's
// check); process-wide, nests. Training envs are constructed as env_config says.
class ScopedPythonRenderMode {
 public:
  ScopedPythonRenderMode();
  ~ScopedPythonRenderMode();
  ScopedPythonRenderMode(const ScopedPythonRenderMode&) = delete;
  ScopedPythonRenderMode& operator=(const ScopedPythonRenderMode&) = delete;
};

// Makes env_id ("python:MODULE:ATTRIBUTE") known to global_env_registry(): starts the embedded
// interpreter (once per process), imports MODULE, constructs ATTRIBUTE(**env_config) once to read
// its spaces and time limit, and registers a factory that constructs one instance per env.
// env_config_json is a JSON object's text ("{}" for none). Registering the same id again with the
// same env_config does nothing. Throws ConfigError for a malformed id, a module or class that
// cannot be found, an env_config that is no JSON object, an id registered with another
// env_config, or a space rlx cannot read or act in (naming the env, the space's path and what
// was expected); PythonEnvError when the constructor raises; std::runtime_error when the bridge
// module cannot be loaded. Thread-safe.
void register_python_env(const std::string& env_id, const std::string& env_config_json = "{}");

}  // namespace rlx
