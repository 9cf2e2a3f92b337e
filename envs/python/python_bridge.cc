// rlx-python-envs.so: the one rlx library that links libpython. It embeds CPython and runs
// Gymnasium-style env classes as rlx Envs (envs/python_env.h), reading them by duck typing so
// that `gymnasium` need not be installed. Loaded by envs/python_env_loader.cc with dlopen.
//
// This file holds the Env class (actions, action masks) and the registration; python_spaces.h
// reads the spaces, python_observation.h writes the observations, python_values.h reads Python's
// values.
// Every call into Python takes the GIL for its duration (the interpreter starts with it released),
// so envs may be stepped from any thread. Python objects that rlx code copies around (the class
// inside a factory) are held through share(), whose last owner drops them under the GIL.
#include <Python.h>
#include <pybind11/embed.h>
#include <pybind11/numpy.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "core/config_error.h"
#include "envs/env.h"
#include "envs/plugin.h"
#include "envs/python/python_actions.h"
#include "envs/python/python_bridge.h"
#include "envs/python/python_gil.h"
#include "envs/python/python_multi_agent_env.h"
#include "envs/python/python_observation.h"
#include "envs/python/python_spaces.h"
#include "envs/python/python_values.h"
#include "envs/python_env.h"

namespace rlx::python_bridge {
namespace {

// Starts the interpreter once per process (without Python's signal handlers: rlx owns SIGINT and
// SIGTERM), then releases the GIL so that any thread can take it.
void ensure_interpreter() {
  static std::once_flag once;
  std::call_once(once, [] {
    if (Py_IsInitialized()) return;
    py::initialize_interpreter(/*init_signal_handlers=*/false);
    PyEval_SaveThread();
  });
}

// The id's MODULE and ATTRIBUTE; ConfigError when it is not "python:MODULE:ATTRIBUTE".
std::pair<std::string, std::string> split_env_id(const std::string& env_id) {
  const std::string rest = env_id.substr(kPythonEnvPrefix.size());
  const size_t colon = rest.find(':');
  auto valid = [](const std::string& name) {
    if (name.empty() || name.front() == '.' || name.back() == '.') return false;
    return std::all_of(name.begin(), name.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.'; });
  };
  if (colon == std::string::npos || !valid(rest.substr(0, colon)) || !valid(rest.substr(colon + 1))) {
    throw ConfigError("'" + env_id + "' is not a Python env id: expected python:MODULE:CLASS, e.g. python:my_package.my_env:MyEnv");
  }
  return {rest.substr(0, colon), rest.substr(colon + 1)};
}

// The env's action_masks method (sb3-contrib's MaskablePPO convention), found through
// Gymnasium's wrappers (get_wrapper_attr) where it has them; None when it has none. ConfigError
// when it has one and actions rlx does not mask. Needs the GIL.
py::object action_masks_method(const std::string& env_id, py::handle env, const Space& action_space) {
  constexpr const char* kName = "action_masks";
  py::object method = py::none();
  if (py::hasattr(env, "get_wrapper_attr")) {
    try {
      method = env.attr("get_wrapper_attr")(kName);
    } catch (py::error_already_set& error) {
      if (!error.matches(PyExc_AttributeError)) throw python_error(env_id + ": get_wrapper_attr('action_masks')", error);
    }
  } else if (py::hasattr(env, kName)) {
    method = env.attr(kName);
  }
  if (method.is_none() || !PyCallable_Check(method.ptr())) return py::none();
  if (!action_space.is_discrete() && !action_space.is_multi_discrete()) {
    throw ConfigError(env_id + ": the env has action_masks() (sb3-contrib's convention), and rlx masks Discrete and "
                      "MultiDiscrete actions, not " + action_space.to_string());
  }
  return method;
}

// A Gymnasium-style Python env object as an rlx Env.
class PythonEnv final : public Env {
 public:
  // Reads the instance's spaces, action mask and time limit (ConfigError when unsupported);
  // render_hint is what a render() that returns None is told. Needs the GIL.
  static std::unique_ptr<PythonEnv> wrap(const std::string& env_id, py::object env, std::string render_hint) {
    PythonSpace observation = read_space(env_id, env, "observation_space");
    const PythonSpace action = read_space(env_id, env, "action_space");
    check_action_dtype(env_id, action);
    EnvSpec spec;
    spec.id = env_id;
    std::optional<ObservationMask> observation_mask = take_observation_mask(env_id, observation, action.space);
    py::object mask_method = observation_mask ? py::object(py::none()) : action_masks_method(env_id, env, action.space);
    spec.action_mask = observation_mask || !mask_method.is_none();
    spec.observation_space = observation.space;
    spec.action_space = action.space;
    const py::object limit = spec_field(env, "max_episode_steps");
    if (!limit.is_none()) {
      if (!PyIndex_Check(limit.ptr()) || limit.cast<int64_t>() < 0) {
        throw ConfigError(env_id + ": max_episode_steps is " + describe_value(limit) + ", expected a non-negative integer");
      }
      spec.max_episode_steps = limit.cast<int>();
    }
    const py::object threshold = spec_field(env, "reward_threshold");
    if (!threshold.is_none()) spec.reward_threshold = threshold.cast<double>();
    try {
      spec.validate();  // refuses the action spaces rlx cannot act in (Tuple, Dict), naming the env
    } catch (const std::invalid_argument& error) {
      throw ConfigError(error.what());
    }
    return std::unique_ptr<PythonEnv>(new PythonEnv(std::move(spec), std::move(env), observation, action.dtype,
                                                    std::move(observation_mask), std::move(mask_method), std::move(render_hint)));
  }

  ~PythonEnv() override {
    const GilLock gil;
    close_from_destructor(env_);
    reader_.reset();
    mask_method_ = py::object();
    reset_ = py::object();
    step_ = py::object();
    render_ = py::object();
    env_ = py::object();
  }

 protected:
  void reset_episode(Rng& /*rng: the Python env seeds its own*/, ObsSpan obs) override {
    const GilLock gil;
    const std::optional<uint64_t> seed = reset_seed();
    const py::object seed_value = seed ? py::object(py::int_(*seed)) : py::object(py::none());
    PyObject* arguments[] = {seed_value.ptr()};
    // reset(seed=...) by vectorcall; the names tuple lives as long as the interpreter (which is
    // never finalised), so no destructor at exit touches Python without the GIL.
    static PyObject* const keywords = Py_BuildValue("(s)", "seed");
    const auto result = py::reinterpret_steal<py::object>(PyObject_Vectorcall(reset_.ptr(), arguments, 0, keywords));
    if (!result) {
      py::error_already_set error;
      throw python_error(spec().id + ": reset", error);
    }
    if (!PyTuple_Check(result.ptr()) || PyTuple_GET_SIZE(result.ptr()) != 2) {
      throw contract_error("reset", "return value", "is " + describe_value(result) + ", expected a tuple (observation, info)");
    }
    write_observation("reset", PyTuple_GET_ITEM(result.ptr(), 0), obs);
  }

  StepResult step_episode(const Action& action, ObsSpan obs) override {
    const GilLock gil;
    const py::object argument = python_action(spec().action_space, float64_actions_, action);
    // One vectorcall, no argument tuple: this is the bridge's cost per step.
    const auto result = py::reinterpret_steal<py::object>(PyObject_CallOneArg(step_.ptr(), argument.ptr()));
    if (!result) {
      py::error_already_set error;
      throw python_error(spec().id + ": step", error);
    }
    if (!PyTuple_Check(result.ptr()) || PyTuple_GET_SIZE(result.ptr()) != 5) {
      const bool old_api = PyTuple_Check(result.ptr()) && PyTuple_GET_SIZE(result.ptr()) == 4;
      throw contract_error("step", "return value", "is " + describe_value(result) +
                                       ", expected a tuple (observation, reward, terminated, truncated, info)" +
                                       (old_api ? " (4 values is the old Gym API: split done into terminated and truncated)" : ""));
    }
    PyObject* items = result.ptr();
    write_observation("step", PyTuple_GET_ITEM(items, 0), obs);
    StepResult step;
    PyObject* reward = PyTuple_GET_ITEM(items, 1);
    step.reward = PyFloat_AsDouble(reward);
    if (step.reward == -1.0 && PyErr_Occurred()) {
      PyErr_Clear();
      throw contract_error("step", "reward", "is " + describe_value(reward) + ", expected a number");
    }
    step.terminated = truth("terminated", PyTuple_GET_ITEM(items, 2));
    step.truncated = truth("truncated", PyTuple_GET_ITEM(items, 3));
    return step;
  }

  // render(): the object's render() as an (H, W, 3) uint8 array; nullopt when it has no render
  // method.
  std::optional<RgbImage> render_image() const override {
    const GilLock gil;
    if (!render_) return std::nullopt;
    const auto result = py::reinterpret_steal<py::object>(PyObject_CallObject(render_.ptr(), nullptr));
    if (!result) {
      py::error_already_set error;
      throw python_error(spec().id + ": render", error);
    }
    if (result.is_none()) {
      throw contract_error("render", "return value", "is None, expected an (H, W, 3) uint8 array" + render_hint_);
    }
    RgbImage image;
    if (auto problem = read_rgb_image(result, kMaxRenderSide, image)) throw contract_error("render", "return value", *problem);
    return image;
  }

  // metadata["render_fps"] (of the object or its class), as Gymnasium's envs state their rate;
  // the default when there is none.
  double frames_per_second() const override {
    const GilLock gil;
    if (!py::hasattr(env_, "metadata")) return Env::frames_per_second();
    const py::object metadata = env_.attr("metadata");
    if (!py::isinstance<py::dict>(metadata) || !metadata.cast<py::dict>().contains("render_fps")) {
      return Env::frames_per_second();
    }
    const py::object fps = metadata.cast<py::dict>()["render_fps"];
    if (fps.is_none()) return Env::frames_per_second();
    const double value = PyFloat_AsDouble(fps.ptr());
    if (value == -1.0 && PyErr_Occurred()) {
      PyErr_Clear();
      throw contract_error("render_fps", "metadata['render_fps']", "is " + describe_value(fps) + ", expected a number");
    }
    return value;
  }

 private:
  PythonEnv(EnvSpec spec, py::object env, const PythonSpace& observation, const std::string& action_dtype,
            std::optional<ObservationMask> observation_mask, py::object mask_method, std::string render_hint)
      : Env(std::move(spec)),
        env_(std::move(env)),
        reset_(env_.attr("reset")),
        step_(env_.attr("step")),
        mask_method_(std::move(mask_method)),
        render_hint_(std::move(render_hint)),
        float64_actions_(action_dtype == "float64") {
    if (py::hasattr(env_, "render") && PyCallable_Check(env_.attr("render").ptr())) render_ = env_.attr("render");
    reader_.emplace(observation, this->spec().observation_space, observation_layout(), std::move(observation_mask));
  }

  // The episode step a call under way counts as (the Env counts a step once it returns; a reset
  // is step 0; render and render_fps look at the steps taken).
  int64_t call_step(const char* method) const {
    if (std::strcmp(method, "step") == 0) return elapsed_steps() + 1;
    return std::strcmp(method, "reset") == 0 ? 0 : elapsed_steps();
  }

  // An EnvOutputError about what the call returned (field: "return value", "reward", ...).
  EnvOutputError contract_error(const char* method, const std::string& field, const std::string& what) const {
    return EnvOutputError(spec().id, method, call_step(method), field, what);
  }

  // terminated / truncated: any object with a truth value (bool, numpy.bool_). Needs the GIL.
  bool truth(const char* field, PyObject* value) const {
    const int truth = PyObject_IsTrue(value);
    if (truth < 0) {
      PyErr_Clear();
      throw contract_error("step", field, "is " + describe_value(value) + ", expected a bool");
    }
    return truth != 0;
  }

  // Writes the observation a call returned into obs, and the action mask: the observation's own
  // (RLlib's) or action_masks()'s (SB3's). Needs the GIL.
  void write_observation(const char* method, PyObject* observation, const ObsSpan& obs) const {
    std::optional<ObservationProblem> problem;
    try {
      problem = reader_->write(observation, obs);
    } catch (py::error_already_set& error) {
      throw python_error(spec().id + ": " + method + ": reading the observation", error);
    }
    if (problem) throw contract_error(method, problem->field, problem->what);
    if (mask_method_.is_none()) return;
    const auto mask = py::reinterpret_steal<py::object>(PyObject_CallObject(mask_method_.ptr(), nullptr));
    if (!mask) {
      py::error_already_set error;
      throw python_error(spec().id + ": action_masks", error);
    }
    const auto count = static_cast<size_t>(obs.action_mask().size());
    if (auto trouble = read_bytes(mask, /*shape: any*/ nullptr, count, ByteValues::kTruth, obs.action_mask().data())) {
      throw contract_error(method, "action_masks()",
                           *trouble + ", expected " + std::to_string(count) + " elements, one per action of " +
                               spec().action_space.to_string());
    }
  }

  py::object env_, reset_, step_;
  py::object render_;       // null when the object has no render method
  py::object mask_method_;  // action_masks (SB3's convention), None when the mask is not read from it
  std::string render_hint_;  // why a render() may return None, and what to do
  bool float64_actions_ = false;  // Box: float64 actions, else float32
  std::optional<ObservationReader> reader_;  // emplaced once the Env's spec is in place
};

// Puts dirs in front of sys.path, each once. Needs the GIL.
void extend_sys_path(const std::vector<std::string>& dirs) {
  py::list path = py::module_::import("sys").attr("path");
  for (auto dir = dirs.rbegin(); dir != dirs.rend(); ++dir) {
    if (!path.contains(py::str(*dir))) path.insert(0, py::str(*dir));
  }
}

// The class ATTRIBUTE of MODULE; ConfigError when the module cannot be found or has no such
// attribute, PythonEnvError when importing it raises anything else. Needs the GIL.
py::object import_class(const std::string& env_id) {
  const auto [module_name, attribute] = split_env_id(env_id);
  py::object module;
  try {
    module = py::module_::import(module_name.c_str());
  } catch (py::error_already_set& error) {
    if (!error.matches(PyExc_ModuleNotFoundError)) throw python_error(env_id + ": importing module '" + module_name + "'", error);
    throw ConfigError(env_id + ": cannot import module '" + module_name + "' (" + describe(error.value()) +
                      "); add its directory with --python-path DIR or PYTHONPATH (sys.path is " +
                      describe(py::module_::import("sys").attr("path")) + ")");
  }
  py::object target = module;
  size_t begin = 0;
  while (begin <= attribute.size()) {
    const size_t dot = std::min(attribute.find('.', begin), attribute.size());
    const std::string name = attribute.substr(begin, dot - begin);
    if (!py::hasattr(target, name.c_str())) {
      throw ConfigError(env_id + ": module '" + module_name + "' (" + describe(module.attr("__file__")) + ") has no attribute '" +
                        attribute.substr(0, dot) + "'");
    }
    target = target.attr(name.c_str());
    begin = dot + 1;
  }
  if (!PyCallable_Check(target.ptr())) throw ConfigError(env_id + ": '" + attribute + "' is " + describe_value(target) + ", not a class");
  return target;
}

// env_config_json as a dict of keyword arguments; ConfigError when it is no JSON object. Needs the GIL.
py::dict keyword_arguments(const std::string& env_id, const std::string& env_config_json) {
  py::object parsed;
  try {
    parsed = py::module_::import("json").attr("loads")(env_config_json);
  } catch (py::error_already_set& error) {
    throw ConfigError(env_id + ": env_config is not valid JSON (" + describe(error.value()) + ")");
  }
  if (!py::isinstance<py::dict>(parsed)) throw ConfigError(env_id + ": env_config must be a mapping of keyword arguments");
  return parsed;
}

// What constructs one registered Python env.
struct EnvRecipe {
  std::string env_id;
  py::object env_class;
  py::dict kwargs;                 // env_config
  bool takes_render_mode = false;  // the constructor has a render_mode parameter
};

// Whether calling env_class accepts a render_mode keyword: a parameter of that name (not one
// hidden in **kwargs) in inspect.signature(env_class). PythonEnvError when inspecting raises
// anything but the ValueError or TypeError of a callable without a signature. Needs the GIL.
bool takes_render_mode(const std::string& env_id, const py::object& env_class) {
  try {
    const py::module_ inspect = py::module_::import("inspect");
    const py::object parameters = inspect.attr("signature")(env_class).attr("parameters");
    if (!parameters.contains("render_mode")) return false;
    const py::object kind = parameters["render_mode"].attr("kind");
    const py::object parameter = inspect.attr("Parameter");
    return kind.equal(parameter.attr("POSITIONAL_OR_KEYWORD")) || kind.equal(parameter.attr("KEYWORD_ONLY"));
  } catch (py::error_already_set& error) {
    if (error.matches(PyExc_ValueError) || error.matches(PyExc_TypeError)) return false;  // a builtin: no signature
    throw python_error(env_id + ": inspect.signature", error);
  }
}

// What a render() that returns None is told, given how the env was constructed.
std::string render_hint(const EnvRecipe& recipe, bool render_mode_added) {
  if (render_mode_added) return " (the env was constructed with render_mode='rgb_array')";
  if (recipe.kwargs.contains("render_mode")) {
    return "; env_config sets render_mode " + describe(recipe.kwargs["render_mode"]) +
           ": set it to 'rgb_array', or leave it out and rlx sets it when it films the env";
  }
  if (recipe.takes_render_mode) {
    return "; construct the env with render_mode='rgb_array' (rlx does when it films: rlx evaluate --record)";
  }
  return "; the constructor has no render_mode parameter, so rlx cannot ask for 'rgb_array': add one, or make "
         "render() draw without it";
}

// Constructs one instance of the class, with render_mode='rgb_array' added to env_config when
// rendering and the constructor takes it; PythonEnvError when the constructor raises, ConfigError
// when the instance lacks reset or step. Needs the GIL.
py::object construct_object(const EnvRecipe& recipe, bool rendering) {
  const bool add_render_mode = rendering && recipe.takes_render_mode && !recipe.kwargs.contains("render_mode");
  py::dict kwargs = recipe.kwargs;
  if (add_render_mode) {
    kwargs = py::dict();  // env_config's own dict stays as the user wrote it
    for (const auto& item : recipe.kwargs) kwargs[item.first] = item.second;
    kwargs["render_mode"] = "rgb_array";
  }
  py::object env;
  try {
    env = recipe.env_class(**kwargs);
  } catch (py::error_already_set& error) {
    throw python_error(recipe.env_id + ": the constructor", error);
  }
  for (const char* method : {"reset", "step"}) {
    if (!py::hasattr(env, method) || !PyCallable_Check(env.attr(method).ptr())) {
      throw ConfigError(recipe.env_id + ": the env has no method '" + method + "' (Gymnasium's API: reset(seed=None, options=None) "
                        "-> (obs, info) and step(action) -> (obs, reward, terminated, truncated, info))");
    }
  }
  return env;
}

// One single-agent instance as an rlx Env. Needs the GIL.
std::unique_ptr<PythonEnv> construct(const EnvRecipe& recipe, bool rendering) {
  const bool add_render_mode = rendering && recipe.takes_render_mode && !recipe.kwargs.contains("render_mode");
  return PythonEnv::wrap(recipe.env_id, construct_object(recipe, rendering), render_hint(recipe, add_render_mode));
}

void register_env(EnvRegistrar& registrar, const PythonEnvRegistration& registration) {
  ensure_interpreter();
  std::shared_ptr<const EnvRecipe> recipe;
  std::optional<EnvSpec> spec;
  std::optional<MultiAgentEnvSpec> multi_agent_spec;
  {
    const GilLock gil;
    extend_sys_path(registration.python_path);
    EnvRecipe made;
    made.env_id = registration.env_id;
    made.env_class = import_class(registration.env_id);
    made.kwargs = keyword_arguments(registration.env_id, registration.env_config_json);
    made.takes_render_mode = takes_render_mode(registration.env_id, made.env_class);
    py::object first = construct_object(made, /*rendering=*/false);  // the first instance tells the spaces
    if (is_multi_agent(first)) {
      multi_agent_spec = wrap_multi_agent(made.env_id, std::move(first))->spec();
    } else {
      spec = PythonEnv::wrap(made.env_id, std::move(first), render_hint(made, /*render_mode_added=*/false))->spec();
    }
    recipe = share(std::move(made));
  }
  if (multi_agent_spec) {
    registrar.add_multi_agent(*multi_agent_spec, [recipe]() -> std::unique_ptr<MultiAgentEnv> {
      const GilLock gil;
      return wrap_multi_agent(recipe->env_id, construct_object(*recipe, /*rendering=*/false));
    });
    return;
  }
  registrar.add(*spec, [recipe, rendering = registration.rendering]() -> std::unique_ptr<Env> {
    const bool render_mode = rendering && rendering();
    const GilLock gil;
    return construct(*recipe, render_mode);
  });
}

}  // namespace
}  // namespace rlx::python_bridge

extern "C" RLX_ENV_PLUGIN_EXPORT int rlx_python_bridge_abi_version() { return rlx::kPythonBridgeAbiVersion; }

extern "C" RLX_ENV_PLUGIN_EXPORT void rlx_python_register_env(rlx::EnvRegistrar& registrar,
                                                              const rlx::PythonEnvRegistration& registration) {
  rlx::python_bridge::register_env(registrar, registration);
}
