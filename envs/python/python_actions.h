// rlx's actions as a Python env takes them, for the Python env bridge (rlx-python-envs.so).
// Every function needs the GIL.
#pragma once

#include <pybind11/pybind11.h>

#include <string>

#include "envs/env.h"
#include "envs/python/python_spaces.h"

namespace rlx::python_bridge {

// ConfigError naming the env (and the agent, in `where`) when action is a Box of a dtype rlx does
// not act in (it acts in Boxes of float32 and float64).
void check_action_dtype(const std::string& where, const PythonSpace& action);

// The action as the env takes it: an int (a value of the Discrete), a NumPy int64 array of the
// space's shape (MultiDiscrete, MultiBinary), or a NumPy array of the Box's dtype (float64 when
// float64 is set, else float32) and shape; each array fresh, as the env may keep it.
py::object python_action(const Space& space, bool float64, const Action& action);

}  // namespace rlx::python_bridge
