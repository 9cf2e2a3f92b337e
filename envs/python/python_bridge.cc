// rlx-python-envs.so: the one rlx library that links libpython. It embeds CPython and runs
// Gymnasium-style env classes as rlx Envs (envs/python_env.h), reading them by duck typing so
// that `gymnasium` need not be installed. Loaded by envs/python_env_loader.cc with dlopen.
//
// Every call into Python takes the GIL for its duration (the interpreter starts with it released),
// so envs may be stepped from any thread. Python objects that rlx code copies around (the class
// inside a factory) are held through SharedObject, whose last owner drops them under the GIL.
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
#include "envs/python/python_bridge.h"
#include "envs/python_env.h"

namespace py = pybind11;

namespace rlx {
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

// Holds the GIL for its scope (every call into Python): PyGILState_Ensure alone, lighter than
// pybind11's gil_scoped_acquire on the per-step path.
class GilLock {
 public:
  GilLock() : state_(PyGILState_Ensure()) {}
  ~GilLock() { PyGILState_Release(state_); }
  GilLock(const GilLock&) = delete;
  GilLock& operator=(const GilLock&) = delete;

 private:
  PyGILState_STATE state_;
};

// A Python object that rlx code may copy and drop without holding the GIL.
using SharedObject = std::shared_ptr<const py::object>;

SharedObject share(py::object object) {
  return SharedObject(new py::object(std::move(object)), [](const py::object* held) {
    const GilLock gil;
    delete held;
  });
}

// The first line of text, at most 300 characters.
std::string one_line(const std::string& text) {
  std::string line = text.substr(0, text.find('\n'));
  if (line.size() > 300) line = line.substr(0, 297) + "...";
  return line;
}

// str(object), or its type's name when str() itself raises. Needs the GIL.
std::string describe(py::handle object) {
  PyObject* text = PyObject_Str(object.ptr());
  if (text == nullptr) {
    PyErr_Clear();  // describing an object for an error message must not raise a second error
    return std::string("<") + Py_TYPE(object.ptr())->tp_name + ">";
  }
  Py_ssize_t size = 0;
  const char* data = PyUnicode_AsUTF8AndSize(text, &size);
  std::string result = data != nullptr ? std::string(data, static_cast<size_t>(size)) : std::string("<unprintable>");
  if (data == nullptr) PyErr_Clear();
  Py_DECREF(text);
  return one_line(result);
}

// "a list [1, 2]" / "a float 0.5": what an object is, for messages. Needs the GIL.
std::string describe_value(py::handle object) {
  return std::string("a ") + Py_TYPE(object.ptr())->tp_name + " (" + describe(object) + ")";
}

// The PythonEnvError for a Python exception caught as error while `where` ran ("python:m:C:
// step"): one line for the learner, Python's formatted traceback for the log. Needs the GIL.
PythonEnvError python_error(const std::string& where, py::error_already_set& error) {
  std::string type = "Exception";
  if (PyObject* name = PyObject_GetAttrString(error.type().ptr(), "__name__")) {
    type = describe(name);
    Py_DECREF(name);
  } else {
    PyErr_Clear();
  }
  std::string traceback;
  try {
    const py::list lines =
        py::module_::import("traceback").attr("format_exception")(error.type(), error.value(), error.trace());
    for (py::handle line : lines) traceback += line.cast<std::string>();
  } catch (py::error_already_set& formatting) {
    traceback = std::string(error.what()) + "\n(the traceback could not be formatted: " + formatting.what() + ")";
  }
  while (!traceback.empty() && traceback.back() == '\n') traceback.pop_back();
  return PythonEnvError(where + " raised " + type + ": " + describe(error.value()), traceback);
}

// How a NumPy-style buffer's elements are stored, from its struct format ("f", "<d", "q", ...).
enum class ElementType { kFloat32, kFloat64, kInt8, kInt16, kInt32, kInt64, kUInt8, kUInt16, kUInt32, kUInt64, kBool };

std::optional<ElementType> element_type(const char* format, Py_ssize_t itemsize) {
  std::string f = format != nullptr ? format : "B";
  if (!f.empty() && (f[0] == '@' || f[0] == '=' || f[0] == '<')) f = f.substr(1);  // native little-endian
  if (f.size() != 1) return std::nullopt;
  const char c = f[0];
  if (c == 'f' && itemsize == 4) return ElementType::kFloat32;
  if (c == 'd' && itemsize == 8) return ElementType::kFloat64;
  if (c == '?') return ElementType::kBool;
  const bool is_signed = c == 'b' || c == 'h' || c == 'i' || c == 'l' || c == 'q' || c == 'n';
  const bool is_unsigned = c == 'B' || c == 'H' || c == 'I' || c == 'L' || c == 'Q' || c == 'N';
  if (!is_signed && !is_unsigned) return std::nullopt;
  switch (itemsize) {
    case 1: return is_signed ? ElementType::kInt8 : ElementType::kUInt8;
    case 2: return is_signed ? ElementType::kInt16 : ElementType::kUInt16;
    case 4: return is_signed ? ElementType::kInt32 : ElementType::kUInt32;
    case 8: return is_signed ? ElementType::kInt64 : ElementType::kUInt64;
    default: return std::nullopt;
  }
}

template <typename T>
float element_at(const char* address) {
  T value;
  std::memcpy(&value, address, sizeof(T));
  return static_cast<float>(value);
}

float read_element(ElementType type, const char* address) {
  switch (type) {
    case ElementType::kFloat32: return element_at<float>(address);
    case ElementType::kFloat64: return element_at<double>(address);
    case ElementType::kInt8: return element_at<int8_t>(address);
    case ElementType::kInt16: return element_at<int16_t>(address);
    case ElementType::kInt32: return element_at<int32_t>(address);
    case ElementType::kInt64: return element_at<int64_t>(address);
    case ElementType::kUInt8: return element_at<uint8_t>(address);
    case ElementType::kUInt16: return element_at<uint16_t>(address);
    case ElementType::kUInt32: return element_at<uint32_t>(address);
    case ElementType::kUInt64: return element_at<uint64_t>(address);
    case ElementType::kBool: return *address != 0 ? 1.0f : 0.0f;
  }
  return 0.0f;
}

// A buffer view (PEP 3118), released on destruction. Needs the GIL throughout.
class BufferView {
 public:
  // Views object's buffer; false (no error left set) when it offers none.
  bool open(PyObject* object) {
    if (!PyObject_CheckBuffer(object)) return false;
    if (PyObject_GetBuffer(object, &view_, PyBUF_RECORDS_RO) != 0) {
      PyErr_Clear();  // an object that declines a strided view is read as a sequence instead
      return false;
    }
    open_ = true;
    return true;
  }
  ~BufferView() {
    if (open_) PyBuffer_Release(&view_);
  }
  const Py_buffer& view() const { return view_; }

 private:
  Py_buffer view_{};
  bool open_ = false;
};

// True once NumPy imports in this interpreter (checked once; envs may well run without it). Needs the GIL.
bool have_numpy() {
  static const bool available = [] {
    try {
      py::module_::import("numpy");
      py::detail::npy_api::get();  // NumPy's C API table, for the arrays' fast path
      return true;
    } catch (py::error_already_set& error) {
      error.restore();
      PyErr_Clear();  // without NumPy, arrays are read through the buffer protocol alone
      return false;
    }
  }();
  return available;
}

// The fast path for the common observation: an aligned C-contiguous NumPy array of native float32
// (copied straight from its memory) or float64 of exactly `shape`. NumPy's own struct is read, as
// the buffer protocol would allocate a description of the array at every call. False when the
// object is anything else (read_numbers's general path handles it). Needs the GIL.
bool read_numpy_fast(PyObject* object, const std::vector<int64_t>& shape, size_t count, float* out) {
  namespace npy = py::detail;
  if (!have_numpy() || !npy::npy_api::get().PyArray_Check_(object)) return false;
  const npy::PyArray_Proxy* array = npy::array_proxy(object);
  const npy::PyArrayDescr_Proxy* descr = npy::array_descriptor_proxy(array->descr);
  constexpr int kLayout = npy::npy_api::NPY_ARRAY_C_CONTIGUOUS_ | npy::npy_api::NPY_ARRAY_ALIGNED_;
  if ((array->flags & kLayout) != kLayout || descr->byteorder == '>') return false;
  if (array->nd != static_cast<int>(shape.size()) || !std::equal(shape.begin(), shape.end(), array->dimensions)) return false;
  if (descr->type_num == npy::npy_api::NPY_FLOAT_) {
    std::memcpy(out, array->data, count * sizeof(float));
    return true;
  }
  if (descr->type_num == npy::npy_api::NPY_DOUBLE_) {
    const auto* values = reinterpret_cast<const double*>(array->data);
    for (size_t i = 0; i < count; ++i) out[i] = static_cast<float>(values[i]);
    return true;
  }
  return false;
}

// Reads `count` numbers from a NumPy array (any numeric dtype, any strides: a C-contiguous
// float32 array is copied straight from its memory), a flat list or tuple of numbers, or, when
// broadcast is set, one number for every element. Returns an error text ("has shape (3,)") or
// nullopt. `shape` is checked against an array's shape. Needs the GIL.
std::optional<std::string> read_numbers(py::handle object, const std::vector<int64_t>& shape, size_t count, bool broadcast,
                                        float* out) {
  if (read_numpy_fast(object.ptr(), shape, count, out)) return std::nullopt;
  BufferView buffer;
  if (buffer.open(object.ptr())) {
    const Py_buffer& view = buffer.view();
    const std::optional<ElementType> type = element_type(view.format, view.itemsize);
    if (!type) return std::string("has an unsupported element format '") + (view.format ? view.format : "") + "'";
    if (view.ndim == 0 && broadcast) {
      std::fill(out, out + count, read_element(*type, static_cast<const char*>(view.buf)));
      return std::nullopt;
    }
    std::vector<int64_t> got(view.shape, view.shape + view.ndim);
    if (got != shape) {
      std::string text = "has shape (";
      for (size_t i = 0; i < got.size(); ++i) text += (i ? ", " : "") + std::to_string(got[i]);
      return text + (got.size() == 1 ? ",)" : ")");
    }
    const char* base = static_cast<const char*>(view.buf);
    if (*type == ElementType::kFloat32 && PyBuffer_IsContiguous(&view, 'C')) {
      std::memcpy(out, base, count * sizeof(float));
      return std::nullopt;
    }
    for (size_t i = 0; i < count; ++i) {  // C order through the strides
      size_t rest = i;
      Py_ssize_t offset = 0;
      for (int d = view.ndim - 1; d >= 0; --d) {
        const auto extent = static_cast<size_t>(view.shape[d]);
        offset += static_cast<Py_ssize_t>(rest % extent) * view.strides[d];
        rest /= extent;
      }
      out[i] = read_element(*type, base + offset);
    }
    return std::nullopt;
  }
  if (PyFloat_Check(object.ptr()) || PyLong_Check(object.ptr()) || PyBool_Check(object.ptr())) {
    if (!broadcast) return std::string("is a single number");
    const double value = PyFloat_AsDouble(object.ptr());
    if (PyErr_Occurred()) throw py::error_already_set();
    std::fill(out, out + count, static_cast<float>(value));
    return std::nullopt;
  }
  if (PyList_Check(object.ptr()) || PyTuple_Check(object.ptr())) {
    const Py_ssize_t size = PySequence_Size(object.ptr());
    if (shape.size() != 1 || size != static_cast<Py_ssize_t>(count)) {
      return "is a " + std::string(Py_TYPE(object.ptr())->tp_name) + " of " + std::to_string(size) +
             " elements (lists are read flat, for one-dimensional spaces)";
    }
    for (Py_ssize_t i = 0; i < size; ++i) {
      PyObject* item = PySequence_Fast_GET_ITEM(object.ptr(), i);  // borrowed; lists and tuples are "fast"
      const double value = PyFloat_AsDouble(item);
      if (value == -1.0 && PyErr_Occurred()) {
        PyErr_Clear();
        return "has element " + std::to_string(i) + " that is no number (" + describe_value(item) + ")";
      }
      out[i] = static_cast<float>(value);
    }
    return std::nullopt;
  }
  return std::string("is ") + describe_value(object) + ", not an array or list of numbers";
}

// What rlx knows about one of a Python env's spaces.
struct PythonSpace {
  Space space;
  std::string dtype = "float32";  // Box: its dtype's name
  int64_t start = 0;              // Discrete: the first action (Gymnasium's Discrete(n, start))
};

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string text = "(";
  for (size_t i = 0; i < shape.size(); ++i) text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + (shape.size() == 1 ? ",)" : ")");
}

// Reads env.<attribute> (observation_space or action_space) as a Box or a Discrete. ConfigError
// naming the env and the attribute when it is neither or is malformed. Needs the GIL.
PythonSpace read_space(const std::string& env_id, py::handle env, const char* attribute) {
  const std::string where = env_id + ": " + attribute;
  const std::string expected = "; expected a Box (shape, low, high, dtype) or a Discrete (n), as Gymnasium's spaces have";
  if (!py::hasattr(env, attribute)) throw ConfigError(env_id + ": the env has no attribute '" + attribute + "'" + expected);
  const py::object space = env.attr(attribute);
  PythonSpace result;
  const bool has_box_fields = py::hasattr(space, "shape") && py::hasattr(space, "low") && py::hasattr(space, "high");
  if (py::hasattr(space, "n") && !has_box_fields) {
    const py::object n = space.attr("n");
    if (!PyIndex_Check(n.ptr())) throw ConfigError(where + ": Discrete n is " + describe_value(n) + ", not an integer");
    const auto count = n.cast<int64_t>();
    if (count < 1) throw ConfigError(where + ": Discrete n is " + std::to_string(count) + ", expected at least 1");
    result.space = Space::discrete(count);
    if (py::hasattr(space, "start")) result.start = space.attr("start").cast<int64_t>();
    return result;
  }
  if (!has_box_fields) throw ConfigError(where + " is " + describe_value(space) + expected);
  std::vector<int64_t> shape;
  for (py::handle extent : space.attr("shape")) {
    if (!PyIndex_Check(extent.ptr())) throw ConfigError(where + ": Box shape holds " + describe_value(extent));
    shape.push_back(extent.cast<int64_t>());
    if (shape.back() < 1) throw ConfigError(where + ": Box shape " + describe(space.attr("shape")) + " has an empty extent");
  }
  if (shape.empty()) throw ConfigError(where + ": Box shape () is a scalar; rlx needs at least one dimension, e.g. (1,)");
  int64_t count = 1;
  for (int64_t extent : shape) count *= extent;
  std::vector<float> low(static_cast<size_t>(count)), high(static_cast<size_t>(count));
  for (auto [name, bounds] : {std::pair<const char*, float*>{"low", low.data()}, {"high", high.data()}}) {
    if (auto problem = read_numbers(space.attr(name), shape, low.size(), /*broadcast=*/true, bounds)) {
      throw ConfigError(where + ": Box " + name + " " + *problem + ", expected shape " + shape_text(shape));
    }
  }
  if (py::hasattr(space, "dtype") && !space.attr("dtype").is_none()) {
    const py::object dtype = space.attr("dtype");
    result.dtype = py::hasattr(dtype, "name") ? describe(dtype.attr("name")) : describe(dtype);
  }
  result.space = Space::box(shape, std::move(low), std::move(high));
  try {
    result.space.validate();
  } catch (const std::invalid_argument& error) {
    throw ConfigError(where + ": " + error.what());
  }
  return result;
}

// env.spec.<name> when the env carries a Gymnasium spec with it set, else env.<name>; None when neither.
py::object spec_field(py::handle env, const char* name) {
  if (py::hasattr(env, "spec")) {
    const py::object spec = env.attr("spec");
    if (!spec.is_none() && py::hasattr(spec, name) && !spec.attr(name).is_none()) return spec.attr(name);
  }
  if (py::hasattr(env, name)) return env.attr(name);
  return py::none();
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

// A Gymnasium-style Python env object as an rlx Env.
class PythonEnv final : public Env {
 public:
  // Reads the instance's spaces and time limit (ConfigError when unsupported). Needs the GIL.
  static std::unique_ptr<PythonEnv> wrap(const std::string& env_id, py::object env) {
    PythonSpace observation = read_space(env_id, env, "observation_space");
    PythonSpace action = read_space(env_id, env, "action_space");
    if (!observation.space.is_box()) {
      throw ConfigError(env_id + ": observation_space is " + observation.space.to_string() +
                        "; rlx needs a Box observation space (one-hot encode a Discrete observation)");
    }
    if (action.space.is_box() && action.dtype != "float32" && action.dtype != "float64") {
      throw ConfigError(env_id + ": action_space is a Box of " + action.dtype +
                        "; rlx's continuous actions are float32 or float64");
    }
    EnvSpec spec;
    spec.id = env_id;
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
    return std::unique_ptr<PythonEnv>(new PythonEnv(std::move(spec), std::move(env), observation, action));
  }

  ~PythonEnv() override {
    const GilLock gil;
    if (py::hasattr(env_, "close")) {
      try {
        env_.attr("close")();
      } catch (py::error_already_set& error) {
        error.discard_as_unraisable(env_.attr("close"));  // a destructor cannot throw: Python prints it
      }
    }
    reset_ = py::object();
    step_ = py::object();
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
    const py::object argument = python_action(action);
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

 private:
  PythonEnv(EnvSpec spec, py::object env, const PythonSpace& observation, const PythonSpace& action)
      : Env(std::move(spec)),
        env_(std::move(env)),
        reset_(env_.attr("reset")),
        step_(env_.attr("step")),
        observation_shape_(observation.space.shape),
        action_start_(action.start) {
    if (this->spec().action_space.is_box()) {
      float64_actions_ = action.dtype == "float64";
      action_shape_ = action.space.shape;
    }
  }

  // The episode step a call under way counts as (the Env counts a step once it returns).
  int64_t call_step(const char* method) const { return std::strcmp(method, "step") == 0 ? elapsed_steps() + 1 : 0; }

  // An EnvOutputError about what the call returned (field: "return value", "reward", ...).
  EnvOutputError contract_error(const char* method, const char* field, const std::string& what) const {
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

  void write_observation(const char* method, PyObject* observation, ObsSpan obs) const {
    const auto count = static_cast<size_t>(obs.size());
    if (auto problem = read_numbers(observation, observation_shape_, count, /*broadcast=*/false, obs.data())) {
      throw EnvOutputError(spec().id, method, call_step(method), "observation",
                           *problem + ", expected shape " + shape_text(observation_shape_) + " (observation_space " +
                               spec().observation_space.to_string() + ")");
    }
  }

  // The action as the env takes it: an int (plus the Discrete's start), or a fresh NumPy array of
  // the Box's dtype and shape (fresh: the env may keep it). Needs the GIL.
  py::object python_action(const Action& action) {
    if (spec().action_space.is_discrete()) return py::int_(action.index + action_start_);
    const auto count = static_cast<size_t>(spec().action_space.size());
    if (float64_actions_) {
      py::array_t<double> array(action_shape_);
      std::copy(action.values, action.values + count, array.mutable_data());
      return std::move(array);
    }
    py::array_t<float> array(action_shape_);
    std::copy(action.values, action.values + count, array.mutable_data());
    return std::move(array);
  }

  py::object env_, reset_, step_;
  std::vector<int64_t> observation_shape_;
  int64_t action_start_ = 0;
  bool float64_actions_ = false;  // Box: float64 actions, else float32
  std::vector<int64_t> action_shape_;
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

// Constructs one instance; PythonEnvError when the constructor raises. Needs the GIL.
std::unique_ptr<PythonEnv> construct(const std::string& env_id, const py::object& env_class, const py::dict& kwargs) {
  py::object env;
  try {
    env = env_class(**kwargs);
  } catch (py::error_already_set& error) {
    throw python_error(env_id + ": the constructor", error);
  }
  for (const char* method : {"reset", "step"}) {
    if (!py::hasattr(env, method) || !PyCallable_Check(env.attr(method).ptr())) {
      throw ConfigError(env_id + ": the env has no method '" + method + "' (Gymnasium's API: reset(seed=None, options=None) "
                        "-> (obs, info) and step(action) -> (obs, reward, terminated, truncated, info))");
    }
  }
  return PythonEnv::wrap(env_id, std::move(env));
}

void register_env(EnvRegistrar& registrar, const std::string& env_id, const std::string& env_config_json,
                  const std::vector<std::string>& python_path) {
  ensure_interpreter();
  SharedObject env_class, kwargs;
  EnvSpec spec;
  {
    const GilLock gil;
    extend_sys_path(python_path);
    py::object imported = import_class(env_id);
    py::dict arguments = keyword_arguments(env_id, env_config_json);
    spec = construct(env_id, imported, arguments)->spec();  // the first instance tells the spaces
    env_class = share(std::move(imported));
    kwargs = share(std::move(arguments));
  }
  registrar.add(spec, [env_id, env_class, kwargs]() -> std::unique_ptr<Env> {
    const GilLock gil;
    return construct(env_id, *env_class, kwargs->cast<py::dict>());
  });
}

}  // namespace
}  // namespace rlx

extern "C" RLX_ENV_PLUGIN_EXPORT int rlx_python_bridge_abi_version() { return rlx::kPythonBridgeAbiVersion; }

extern "C" RLX_ENV_PLUGIN_EXPORT void rlx_python_register_env(rlx::EnvRegistrar& registrar, const std::string& env_id,
                                                              const std::string& env_config_json,
                                                              const std::vector<std::string>& python_path) {
  rlx::register_env(registrar, env_id, env_config_json, python_path);
}
