#include "envs/python/python_actions.h"

#include <pybind11/numpy.h>

#include <algorithm>

#include "core/config_error.h"

namespace rlx::python_bridge {

void check_action_dtype(const std::string& where, const PythonSpace& action) {
  if (action.space.is_box() && action.dtype != "float32" && action.dtype != "float64") {
    throw ConfigError(where + ": action_space is a Box of " + action.dtype +
                      "; rlx acts in Boxes of float32 or float64 (continuous actions), Discrete, MultiDiscrete and MultiBinary");
  }
}

py::object python_action(const Space& space, bool float64, const Action& action) {
  if (space.is_discrete()) return py::int_(action.index);
  const auto count = static_cast<size_t>(space.size());
  if (!space.is_box()) {
    py::array_t<int64_t> array(space.shape);
    std::copy(action.indices, action.indices + count, array.mutable_data());
    return std::move(array);
  }
  if (float64) {
    py::array_t<double> array(space.shape);
    std::copy(action.values, action.values + count, array.mutable_data());
    return std::move(array);
  }
  py::array_t<float> array(space.shape);
  std::copy(action.values, action.values + count, array.mutable_data());
  return std::move(array);
}

}  // namespace rlx::python_bridge
