// Writing a Python env's observations (nested dicts and tuples of NumPy arrays, lists and
// numbers) into the two parts of an rlx observation, for the bridge (rlx-python-envs.so): each
// leaf into its slots of the floats or the bytes (core/observation_layout.h), RLlib's action mask
// into the mask. Shapes and structure are checked here and named by path; values (a Discrete out
// of range, a pixel out of bounds, an empty mask) are checked by the Env after the write.
#pragma once

#include <pybind11/pybind11.h>

#include <optional>
#include <string>
#include <vector>

#include "core/observation_layout.h"
#include "envs/obs_span.h"
#include "envs/python/python_spaces.h"

namespace rlx::python_bridge {

// What is wrong with an observation: the field ("observation['camera']") and what ("has shape
// (3,), expected shape (84, 84, 3) (observation_space['camera'] Box(...))").
struct ObservationProblem {
  std::string field;
  std::string what;
};

// Writes the observations of one env. Holds Python objects (the Dicts' keys): destroy it, or
// clear() it, with the GIL held. Not copyable: its nodes point into the space it was given.
class ObservationReader {
 public:
  // Observations of `python` (as read_space read it, RLlib's mask taken out), whose rlx space is
  // `space` (kept by the caller for the reader's lifetime) laid out as `layout`; `mask`: RLlib's
  // mask entry, when the observation's dict carries the action mask.
  ObservationReader(const PythonSpace& python, const Space& space, const ObservationLayout& layout,
                    std::optional<ObservationMask> mask);
  ObservationReader(const ObservationReader&) = delete;
  ObservationReader& operator=(const ObservationReader&) = delete;

  // Writes observation into obs (and RLlib's mask into obs.action_mask()); the first problem of
  // shape or structure, or nullopt. Throws py::error_already_set when a mapping's lookup raises.
  std::optional<ObservationProblem> write(PyObject* observation, const ObsSpan& obs) const;

  // Drops the Python objects held (call with the GIL, before destruction without it).
  void clear();

 private:
  // One node of the observation space, in flatten order.
  struct Node {
    const Space* space = nullptr;  // into the space given at construction
    std::string path;              // "" for the root, "['sensors'][1]"
    std::vector<py::object> keys;  // Dict: each child's key in the observation's dict
    std::vector<Node> children;    // Tuple, Dict
    // A leaf: its slots in the floats or the bytes, and the shape of its value.
    bool bytes = false;
    int64_t offset = 0;
    int64_t slots = 0;
    std::vector<int64_t> shape;  // Discrete: () (a number)
  };

  // The node of `python` / `space` at path, leaves taken from layout in flatten order from *next_leaf.
  static Node build(const PythonSpace& python, const Space& space, const std::string& path, const ObservationLayout& layout,
                    size_t* next_leaf);
  std::optional<ObservationProblem> write_node(const Node& node, PyObject* value, const ObsSpan& obs) const;
  // The problem at node: field "observation<path>", what, then the space the node expects.
  static ObservationProblem problem(const Node& node, const std::string& what);

  Node root_;
  std::optional<ObservationMask> mask_;
  std::vector<int64_t> mask_shape_;  // RLlib's mask entry's shape
};

}  // namespace rlx::python_bridge
