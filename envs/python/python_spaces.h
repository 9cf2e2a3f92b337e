// Reading a Python env's Gymnasium spaces by duck typing, for the bridge (rlx-python-envs.so):
// Box, Discrete, MultiDiscrete, MultiBinary, Tuple and Dict, nested, without importing gymnasium;
// RLlib's action mask (a Dict observation's 'action_mask' key) taken out of the observation.
// Every function needs the GIL.
#pragma once

#include <pybind11/pybind11.h>

#include <optional>
#include <string>
#include <vector>

#include "core/space.h"

namespace rlx::python_bridge {

namespace py = pybind11;

// One of a Python env's spaces as rlx reads it: rlx's Space, and what of Python's side the
// bridge needs to read values of it.
struct PythonSpace {
  Space space;
  std::string dtype;                  // Box: the dtype the env declared ("float64", "int64", "bool", ...)
  std::vector<py::object> keys;       // Dict: each child's key, as the observation's dicts hold it
  std::vector<PythonSpace> children;  // Tuple, Dict: the children (their .space are space.children)
};

// The class names rlx reads, for messages.
constexpr const char* kReadableSpaces = "Box, Discrete, MultiDiscrete, MultiBinary, Tuple, Dict";

// Reads env.<attribute> (observation_space or action_space). A Box of float32, float64 or float16
// is a float32 Box; of uint8 a uint8 Box; of bool a uint8 Box with bounds [0, 1]; of any other
// integer type a float32 Box with its bounds (values exact up to 2^24). ConfigError naming the
// env and the space's path ("observation_space['sensors'][1]") for anything else (Text, Graph,
// Sequence, OneOf, an unknown class) or a malformed space.
PythonSpace read_space(const std::string& env_id, py::handle env, const char* attribute);

// Reads a space object as read_space does, `path` naming it in messages ("observation_space('p0')").
PythonSpace read_space_object(const std::string& env_id, py::handle space, const std::string& path);

// RLlib's action mask: the Dict observation space's 'action_mask' entry.
struct ObservationMask {
  py::object key;  // "action_mask", the key the observation's dict holds it under
  Space space;     // its space: a Box or MultiBinary of action_mask_size(action_space) elements
};

// The key of RLlib's action mask in an observation space.
constexpr const char* kActionMaskKey = "action_mask";

// When observation is a Dict with an 'action_mask' key, takes that entry out of it (the rest
// stays a Dict, even of one key) and returns it; nullopt otherwise. ConfigError naming the env
// when the action space takes no mask (rlx masks Discrete and MultiDiscrete actions), the mask is
// no Box or MultiBinary of one element per action, or no other key is left.
std::optional<ObservationMask> take_observation_mask(const std::string& env_id, PythonSpace& observation,
                                                     const Space& action_space);

}  // namespace rlx::python_bridge
