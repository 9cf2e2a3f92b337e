// Writing Python observations into rlx's floats and bytes (python_observation.h): a walk of the
// observation space's nodes built once per env, reading each leaf with read_numbers (floats) or
// read_bytes (bytes) straight into its slots.
#include "envs/python/python_observation.h"

#include <utility>

#include "envs/python/python_values.h"

namespace rlx::python_bridge {

ObservationReader::ObservationReader(const PythonSpace& python, const Space& space, const ObservationLayout& layout,
                                     std::optional<ObservationMask> mask)
    : mask_(std::move(mask)) {
  size_t next_leaf = 0;
  root_ = build(python, space, "", layout, &next_leaf);
  if (mask_) mask_shape_ = mask_->space.shape;
}

ObservationReader::Node ObservationReader::build(const PythonSpace& python, const Space& space, const std::string& path,
                                                 const ObservationLayout& layout, size_t* next_leaf) {
  Node node;
  node.space = &space;
  node.path = path;
  if (space.is_composite()) {
    node.keys = python.keys;
    for (size_t i = 0; i < space.children.size(); ++i) {
      node.children.push_back(build(python.children[i], space.children[i], space.child_path(path, i), layout, next_leaf));
    }
    return node;
  }
  const ObsLeaf& leaf = layout.leaves.at((*next_leaf)++);
  node.bytes = leaf.storage == LeafStorage::kBytes;
  node.offset = leaf.offset;
  node.slots = leaf.slots;
  if (!space.is_discrete()) node.shape = space.shape;
  return node;
}

void ObservationReader::clear() {
  std::vector<Node*> pending = {&root_};
  while (!pending.empty()) {
    Node* node = pending.back();
    pending.pop_back();
    node->keys.clear();
    for (Node& child : node->children) pending.push_back(&child);
  }
  if (mask_) mask_->key = py::object();
}

ObservationProblem ObservationReader::problem(const Node& node, const std::string& what) {
  return {"observation" + node.path, what + " (observation_space" + node.path + " " + node.space->to_string() + ")"};
}

std::optional<ObservationProblem> ObservationReader::write(PyObject* observation, const ObsSpan& obs) const {
  if (auto found = write_node(root_, observation, obs)) return found;
  if (!mask_) return std::nullopt;
  // The root is a Dict (take_observation_mask saw to it), and write_node has read it as a mapping.
  const std::string field = std::string("observation['") + kActionMaskKey + "']";
  const auto value = py::reinterpret_steal<py::object>(PyObject_GetItem(observation, mask_->key.ptr()));
  if (!value) {
    if (!PyErr_ExceptionMatches(PyExc_KeyError)) throw py::error_already_set();
    PyErr_Clear();
    return ObservationProblem{field, "is missing, expected the action mask (observation_space['" + std::string(kActionMaskKey) +
                                         "'] " + mask_->space.to_string() + ")"};
  }
  const auto count = static_cast<size_t>(obs.action_mask().size());
  if (auto trouble = read_bytes(value, &mask_shape_, count, ByteValues::kTruth, obs.action_mask().data())) {
    return ObservationProblem{field, *trouble + ", expected shape " + shape_text(mask_shape_) + " (observation_space['" +
                                         kActionMaskKey + "'] " + mask_->space.to_string() + ")"};
  }
  return std::nullopt;
}

std::optional<ObservationProblem> ObservationReader::write_node(const Node& node, PyObject* value, const ObsSpan& obs) const {
  const Space& space = *node.space;
  if (space.kind == SpaceKind::kDict) {
    const bool is_dict = PyDict_Check(value);
    if (!is_dict && !py::hasattr(value, "keys")) return problem(node, "is " + describe_value(value) + ", expected a dict");
    for (size_t i = 0; i < node.children.size(); ++i) {
      py::object item;
      if (is_dict) {  // a borrowed reference: the fast path for dict and OrderedDict
        PyObject* found = PyDict_GetItemWithError(value, node.keys[i].ptr());
        if (found == nullptr && PyErr_Occurred()) throw py::error_already_set();
        item = py::reinterpret_borrow<py::object>(found);
      } else {
        item = py::reinterpret_steal<py::object>(PyObject_GetItem(value, node.keys[i].ptr()));
        if (!item) {
          if (!PyErr_ExceptionMatches(PyExc_KeyError)) throw py::error_already_set();
          PyErr_Clear();
        }
      }
      if (!item) {
        const py::list keys(py::reinterpret_borrow<py::object>(value));
        return problem(node, "has no key '" + space.keys[i] + "' (it has " + describe(keys) + ")");
      }
      if (auto inner = write_node(node.children[i], item.ptr(), obs)) return inner;
    }
    return std::nullopt;
  }
  if (space.kind == SpaceKind::kTuple) {
    const auto expected = static_cast<Py_ssize_t>(node.children.size());
    if (!PyTuple_Check(value) && !PyList_Check(value)) {
      return problem(node, "is " + describe_value(value) + ", expected a tuple of " + std::to_string(expected));
    }
    if (PySequence_Fast_GET_SIZE(value) != expected) {
      return problem(node, "is a " + std::string(Py_TYPE(value)->tp_name) + " of " +
                               std::to_string(PySequence_Fast_GET_SIZE(value)) + ", expected " + std::to_string(expected));
    }
    for (Py_ssize_t i = 0; i < expected; ++i) {
      if (auto inner = write_node(node.children[static_cast<size_t>(i)], PySequence_Fast_GET_ITEM(value, i), obs)) return inner;
    }
    return std::nullopt;
  }
  const auto slots = static_cast<size_t>(node.slots);
  std::optional<std::string> trouble =
      node.bytes ? read_bytes(value, &node.shape, slots, ByteValues::kExact, obs.bytes().data() + node.offset)
                 : read_numbers(value, node.shape, slots, /*broadcast=*/node.shape.empty(), obs.data() + node.offset);
  if (!trouble) return std::nullopt;
  if (trouble->rfind("has element", 0) == 0) return problem(node, *trouble);  // a value, not the shape, is wrong
  const std::string expected = space.is_discrete() ? std::string("an integer") : "shape " + shape_text(node.shape);
  return problem(node, *trouble + ", expected " + expected);
}

}  // namespace rlx::python_bridge
