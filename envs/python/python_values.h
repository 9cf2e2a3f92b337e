// Reading Python objects into rlx's values, for the Python env bridge (rlx-python-envs.so):
// numbers, bytes and arrays (NumPy's memory, or any object with the buffer protocol, or lists),
// RGB images, and objects and exceptions described for error messages.
// Every function needs the GIL.
#pragma once

#include <Python.h>
#include <pybind11/pybind11.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/rgb_image.h"
#include "envs/python_env.h"

namespace rlx::python_bridge {

namespace py = pybind11;

// str(object) (its first line, at most 300 characters), or its type's name when str() raises.
std::string describe(py::handle object);

// "a list ([1, 2])" / "a float (0.5)": what an object is, for messages.
std::string describe_value(py::handle object);

// The PythonEnvError for a Python exception caught as error while `where` ran ("python:m:C:
// step"): one line for the learner, Python's formatted traceback for the log.
PythonEnvError python_error(const std::string& where, py::error_already_set& error);

// "(3,)" / "(2, 3)": a shape as Python writes it.
std::string shape_text(const std::vector<int64_t>& shape);

// Reads `count` numbers into out from a NumPy array (any numeric dtype, any strides: a
// C-contiguous float32 array is copied straight from its memory), a flat list or tuple of
// numbers, or, when broadcast is set, one number for every element. Returns an error text ("has
// shape (3,)") or nullopt. `shape` is checked against an array's shape.
std::optional<std::string> read_numbers(py::handle object, const std::vector<int64_t>& shape, size_t count, bool broadcast,
                                        float* out);

// How read_bytes takes each element: kExact, an integer in [0, 255] as it is (uint8 Boxes,
// MultiBinary); kTruth, 1 for any nonzero value and 0 for zero (action masks).
enum class ByteValues { kExact, kTruth };

// Reads `count` bytes into out from a NumPy array (uint8 or bool, C-contiguous, copied straight
// from its memory; or any numeric dtype, any strides, through the buffer protocol), a flat list
// or tuple, or, when shape is empty (a scalar), one number. shape is checked against an array's;
// nullptr takes an array of any shape with count elements (its elements in C order). Returns an
// error text ("has shape (3,)", "has element 2 = 300, not a byte") or nullopt.
std::optional<std::string> read_bytes(py::handle object, const std::vector<int64_t>* shape, size_t count, ByteValues values,
                                      uint8_t* out);

// Reads an (H, W, 3) array of uint8 (NumPy's, or any buffer with that shape and format, any
// strides) into image. Returns an error text ("has shape (4, 4)") or nullopt; H and W must lie
// in [1, max_side].
std::optional<std::string> read_rgb_image(py::handle object, int max_side, RgbImage& image);

// env.spec.<name> when the env carries a Gymnasium spec with it set, else env.<name> (through
// Gymnasium's wrappers with get_wrapper_attr when the env has it); None when neither.
py::object spec_field(py::handle env, const char* name);

}  // namespace rlx::python_bridge
