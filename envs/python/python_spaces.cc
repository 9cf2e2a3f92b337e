// Reading Gymnasium spaces by duck typing (python_spaces.h): a space's kind is the first class
// name rlx knows in its class's MRO (so subclasses of gymnasium's spaces read as their base),
// else guessed from its attributes (low/high/shape: a Box; nvec: a MultiDiscrete; n: a Discrete).
#include "envs/python/python_spaces.h"

#include <algorithm>
#include <array>
#include <stdexcept>
#include <utility>

#include "core/config_error.h"
#include "core/observation_layout.h"
#include "envs/python/python_values.h"

namespace rlx::python_bridge {
namespace {

// Spaces nest at most this deep (a space that holds itself is refused, not followed forever).
constexpr int kMaxNesting = 32;

// The Gymnasium space classes the bridge tells apart by name: those it reads, then those it refuses.
constexpr std::array<const char*, 10> kKnownClasses = {"Box",  "Discrete", "MultiDiscrete", "MultiBinary", "Tuple",
                                                       "Dict", "Text",     "Graph",         "Sequence",    "OneOf"};

// The name of space's class.
std::string class_name(py::handle space) {
  return py::str(py::handle(reinterpret_cast<PyObject*>(Py_TYPE(space.ptr()))).attr("__name__"));
}

// What space is: the first class name in its MRO that rlx knows, else what its attributes suggest;
// "" when neither.
std::string space_kind(py::handle space) {
  const py::handle type(reinterpret_cast<PyObject*>(Py_TYPE(space.ptr())));
  for (py::handle base : py::tuple(type.attr("__mro__"))) {
    const std::string name = py::str(base.attr("__name__"));
    if (std::find(kKnownClasses.begin(), kKnownClasses.end(), name) != kKnownClasses.end()) return name;
  }
  const bool box_fields = py::hasattr(space, "shape") && py::hasattr(space, "low") && py::hasattr(space, "high");
  if (box_fields) return "Box";
  if (py::hasattr(space, "nvec")) return "MultiDiscrete";
  if (py::hasattr(space, "n")) return "Discrete";
  return "";
}

// A space's text for messages: its repr when that names its class (Gymnasium's spaces:
// "Text(1, 10, charset=...)"), else what kind of object it is ("a tuple (('a', 'b'))").
std::string space_text(py::handle space) {
  const std::string text = describe(space);
  return text.rfind(class_name(space) + "(", 0) == 0 ? text : describe_value(space);
}

// Reads one Python space (and its children) into a PythonSpace; every error names the env and
// the space's path ("observation_space['sensors'][1]").
class SpaceReader {
 public:
  explicit SpaceReader(const std::string& env_id) : env_id_(env_id) {}

  // The space at `path`, nested `depth` deep.
  PythonSpace read(py::handle space, const std::string& path, int depth) const {
    if (depth > kMaxNesting) fail(path, "nests spaces more than " + std::to_string(kMaxNesting) + " deep");
    const std::string kind = space_kind(space);
    PythonSpace result;
    if (kind == "Box") {
      result = box(space, path);
    } else if (kind == "Discrete") {
      result.space.kind = SpaceKind::kDiscrete;
      result.space.n = integer(field(space, path, "n"), path, "Discrete n");
      const py::object start = optional_field(space, "start");
      if (!start.is_none()) result.space.start = integer(start, path, "Discrete start");
    } else if (kind == "MultiDiscrete") {
      result.space = multi_discrete(space, path);
    } else if (kind == "MultiBinary") {
      result.space.kind = SpaceKind::kMultiBinary;
      const py::object shape = py::hasattr(space, "shape") ? space.attr("shape") : field(space, path, "n");
      result.space.shape = PyIndex_Check(shape.ptr()) ? std::vector<int64_t>{integer(shape, path, "MultiBinary n")}
                                                      : integers(shape, path, "MultiBinary shape");
    } else if (kind == "Tuple" || kind == "Dict") {
      result = composite(space, path, depth, kind == "Dict");
    } else {
      throw ConfigError(env_id_ + ": " + path + " is " + space_text(space) + ", which rlx cannot read (it reads " +
                        kReadableSpaces + ")");
    }
    try {
      result.space.validate(path);
    } catch (const std::invalid_argument& error) {
      throw ConfigError(env_id_ + ": " + error.what());
    }
    return result;
  }

 private:
  [[noreturn]] void fail(const std::string& path, const std::string& what) const {
    throw ConfigError(env_id_ + ": " + path + " " + what);
  }

  // space.<name>; ConfigError when it has none.
  py::object field(py::handle space, const std::string& path, const char* name) const {
    if (!py::hasattr(space, name)) fail(path, "(" + space_text(space) + ") has no attribute '" + name + "'");
    return space.attr(name);
  }
  static py::object optional_field(py::handle space, const char* name) {
    return py::hasattr(space, name) ? py::object(space.attr(name)) : py::object(py::none());
  }

  // An integer (Python's or NumPy's); ConfigError naming `what` otherwise.
  int64_t integer(py::handle value, const std::string& path, const std::string& what) const {
    if (!PyIndex_Check(value.ptr())) fail(path, what + " is " + describe_value(value) + ", not an integer");
    return value.cast<int64_t>();
  }

  // A sequence of integers (a shape: a tuple, list or 1-D array).
  std::vector<int64_t> integers(py::handle values, const std::string& path, const std::string& what) const {
    if (!py::isinstance<py::iterable>(values)) fail(path, what + " is " + describe_value(values) + ", not a sequence of integers");
    std::vector<int64_t> result;
    for (py::handle value : values) result.push_back(integer(value, path, what + " element"));
    return result;
  }

  // An array of integers of any shape (MultiDiscrete's nvec, start): its shape and its values in C order.
  std::pair<std::vector<int64_t>, std::vector<int64_t>> integer_array(py::handle value, const std::string& path,
                                                                     const std::string& what) const {
    const py::object array = py::module_::import("numpy").attr("asarray")(value);
    const std::string kind = py::str(array.attr("dtype").attr("kind"));
    if (kind != "i" && kind != "u") fail(path, what + " is " + describe_value(value) + ", not an array of integers");
    std::vector<int64_t> shape = integers(array.attr("shape"), path, what + " shape");
    std::vector<int64_t> values;
    for (py::handle element : array.attr("ravel")().attr("tolist")()) values.push_back(element.cast<int64_t>());
    return {std::move(shape), std::move(values)};
  }

  // A Box: float32 (from any float or integer dtype) or uint8 (from uint8, or bool with bounds [0, 1]).
  PythonSpace box(py::handle space, const std::string& path) const {
    PythonSpace result;
    Space& box = result.space;
    box.kind = SpaceKind::kBox;
    box.shape = integers(field(space, path, "shape"), path, "Box shape");
    result.dtype = "float32";
    const py::object dtype = optional_field(space, "dtype");
    if (!dtype.is_none()) result.dtype = py::hasattr(dtype, "name") ? describe(dtype.attr("name")) : describe(dtype);
    const std::string& name = result.dtype;
    const bool integer_type = (name.rfind("int", 0) == 0 || name.rfind("uint", 0) == 0) && name != "uint8";
    if (name == "uint8" || name == "bool") {
      box.dtype = ScalarType::kUint8;
    } else if (name != "float32" && name != "float64" && name != "float16" && !integer_type) {
      fail(path, "is a Box of " + name + ", which rlx cannot read (it reads Boxes of float, integer and bool dtypes)");
    }
    int64_t count = 1;
    for (int64_t extent : box.shape) {
      if (extent < 1) fail(path, "is a Box of shape " + shape_text(box.shape) + ", which has an empty extent");
      count *= extent;
    }
    box.low.resize(static_cast<size_t>(count));
    box.high.resize(static_cast<size_t>(count));
    for (auto [bound, values] : {std::pair<const char*, float*>{"low", box.low.data()}, {"high", box.high.data()}}) {
      if (auto problem = read_numbers(field(space, path, bound), box.shape, box.low.size(), /*broadcast=*/true, values)) {
        fail(path, std::string("Box ") + bound + " " + *problem + ", expected shape " + shape_text(box.shape));
      }
    }
    return result;
  }

  Space multi_discrete(py::handle space, const std::string& path) const {
    Space result;
    result.kind = SpaceKind::kMultiDiscrete;
    std::tie(result.shape, result.nvec) = integer_array(field(space, path, "nvec"), path, "MultiDiscrete nvec");
    const py::object start = optional_field(space, "start");
    if (start.is_none()) {
      result.starts.assign(result.nvec.size(), 0);
      return result;
    }
    auto [start_shape, starts] = integer_array(start, path, "MultiDiscrete start");
    if (start_shape != result.shape) {
      fail(path, "MultiDiscrete start has shape " + shape_text(start_shape) + ", nvec " + shape_text(result.shape));
    }
    result.starts = std::move(starts);
    return result;
  }

  // A Tuple (space.spaces: a sequence of spaces) or a Dict (space.spaces: a mapping, its keys in
  // their order, which Gymnasium sorts for a plain dict).
  PythonSpace composite(py::handle space, const std::string& path, int depth, bool is_dict) const {
    PythonSpace result;
    result.space.kind = is_dict ? SpaceKind::kDict : SpaceKind::kTuple;
    const py::object spaces = field(space, path, "spaces");
    if (is_dict) {
      if (!py::hasattr(spaces, "items")) fail(path, "is a Dict whose spaces are " + describe_value(spaces) + ", not a mapping");
      for (py::handle item : spaces.attr("items")()) {
        const py::tuple entry = py::reinterpret_borrow<py::tuple>(item);
        const std::string key = PyUnicode_Check(entry[0].ptr()) ? entry[0].cast<std::string>() : describe(entry[0]);
        result.keys.push_back(py::reinterpret_borrow<py::object>(entry[0]));
        result.space.keys.push_back(key);
        result.children.push_back(read(entry[1], path + "['" + key + "']", depth + 1));
      }
    } else {
      if (!py::isinstance<py::iterable>(spaces)) fail(path, "is a Tuple whose spaces are " + describe_value(spaces) + ", not a sequence");
      for (py::handle child : spaces) {
        result.children.push_back(read(child, path + "[" + std::to_string(result.children.size()) + "]", depth + 1));
      }
    }
    for (const PythonSpace& child : result.children) result.space.children.push_back(child.space);
    return result;
  }

  const std::string& env_id_;
};

}  // namespace

PythonSpace read_space(const std::string& env_id, py::handle env, const char* attribute) {
  if (!py::hasattr(env, attribute)) {
    throw ConfigError(env_id + ": the env has no attribute '" + attribute + "'; expected a Gymnasium space (" +
                      kReadableSpaces + ")");
  }
  return SpaceReader(env_id).read(env.attr(attribute), attribute, 0);
}

PythonSpace read_space_object(const std::string& env_id, py::handle space, const std::string& path) {
  return SpaceReader(env_id).read(space, path, 0);
}

std::optional<ObservationMask> take_observation_mask(const std::string& env_id, PythonSpace& observation,
                                                     const Space& action_space) {
  Space& space = observation.space;
  if (space.kind != SpaceKind::kDict) return std::nullopt;
  const auto found = std::find(space.keys.begin(), space.keys.end(), kActionMaskKey);
  if (found == space.keys.end()) return std::nullopt;
  const auto index = static_cast<size_t>(found - space.keys.begin());
  const std::string where = env_id + ": observation_space['" + kActionMaskKey + "'] ";
  const Space& mask = space.children[index];
  if (!action_space.is_discrete() && !action_space.is_multi_discrete()) {
    throw ConfigError(where + "is an action mask (RLlib's convention), and rlx masks Discrete and MultiDiscrete actions, not " +
                      action_space.to_string() + " (rename the key if it holds no mask)");
  }
  const int64_t expected = action_mask_size(action_space);
  if ((!mask.is_box() && !mask.is_multi_binary()) || mask.size() != expected) {
    throw ConfigError(where + "is " + mask.to_string() + ", expected an action mask: a Box or MultiBinary of " +
                      std::to_string(expected) + " elements, one per action of " + action_space.to_string());
  }
  if (space.children.size() == 1) {
    throw ConfigError(env_id + ": observation_space " + space.to_string() + " holds nothing but the action mask; the model "
                      "needs an observation beside it (RLlib's convention: Dict('action_mask': ..., 'observations': ...))");
  }
  ObservationMask result{observation.keys[index], mask};
  space.keys.erase(space.keys.begin() + static_cast<std::ptrdiff_t>(index));
  space.children.erase(space.children.begin() + static_cast<std::ptrdiff_t>(index));
  observation.keys.erase(observation.keys.begin() + static_cast<std::ptrdiff_t>(index));
  observation.children.erase(observation.children.begin() + static_cast<std::ptrdiff_t>(index));
  return result;
}

}  // namespace rlx::python_bridge
