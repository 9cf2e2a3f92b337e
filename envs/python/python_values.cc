// Reading Python values for the bridge (python_values.h): numbers and arrays through NumPy's memory
// or the buffer protocol, then lists; RGB images; spaces read by duck typing.
#include "envs/python/python_values.h"

#include <pybind11/numpy.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <sstream>
#include <utility>

namespace rlx::python_bridge {
namespace {

// The first line of text, at most 300 characters.
std::string one_line(const std::string& text) {
  std::string line = text.substr(0, text.find('\n'));
  if (line.size() > 300) line = line.substr(0, 297) + "...";
  return line;
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
double element_at(const char* address) {
  T value;
  std::memcpy(&value, address, sizeof(T));
  return static_cast<double>(value);
}

double read_element(ElementType type, const char* address) {
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
    case ElementType::kBool: return *address != 0 ? 1.0 : 0.0;
  }
  return 0.0;
}

// Calls visit(i, address) for the first `count` elements of a buffer, in C order through its strides.
template <typename Visit>
void for_each_element(const Py_buffer& view, size_t count, Visit visit) {
  const char* base = static_cast<const char*>(view.buf);
  for (size_t i = 0; i < count; ++i) {
    size_t rest = i;
    Py_ssize_t offset = 0;
    for (int d = view.ndim - 1; d >= 0; --d) {
      const auto extent = static_cast<size_t>(view.shape[d]);
      offset += static_cast<Py_ssize_t>(rest % extent) * view.strides[d];
      rest /= extent;
    }
    visit(i, base + offset);
  }
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

// The fast path for bytes: an aligned C-contiguous NumPy array of uint8 or bool of exactly
// `shape` (nullptr: any shape of `count` elements), copied straight from its memory (bool and
// kTruth as 0/1). False when the object is anything else. Needs the GIL.
bool read_numpy_bytes_fast(PyObject* object, const std::vector<int64_t>* shape, size_t count, ByteValues values, uint8_t* out) {
  namespace npy = py::detail;
  if (!have_numpy() || !npy::npy_api::get().PyArray_Check_(object)) return false;
  const npy::PyArray_Proxy* array = npy::array_proxy(object);
  const int type = npy::array_descriptor_proxy(array->descr)->type_num;
  constexpr int kLayout = npy::npy_api::NPY_ARRAY_C_CONTIGUOUS_ | npy::npy_api::NPY_ARRAY_ALIGNED_;
  if ((array->flags & kLayout) != kLayout || (type != npy::npy_api::NPY_UBYTE_ && type != npy::npy_api::NPY_BOOL_)) return false;
  if (shape != nullptr) {
    if (array->nd != static_cast<int>(shape->size()) || !std::equal(shape->begin(), shape->end(), array->dimensions)) return false;
  } else {
    int64_t elements = 1;
    for (int d = 0; d < array->nd; ++d) elements *= array->dimensions[d];
    if (elements != static_cast<int64_t>(count)) return false;
  }
  const auto* data = reinterpret_cast<const uint8_t*>(array->data);
  if (values == ByteValues::kExact || type == npy::npy_api::NPY_BOOL_) {
    std::memcpy(out, data, count);
  } else {
    for (size_t i = 0; i < count; ++i) out[i] = data[i] != 0;
  }
  return true;
}

// value as a byte: kExact needs an integer in [0, 255], kTruth takes any nonzero value as 1.
// False (out untouched) when value is no byte.
bool to_byte(double value, ByteValues values, uint8_t& out) {
  if (values == ByteValues::kTruth) {
    out = value != 0;
    return true;
  }
  if (!(value >= 0 && value <= 255 && value == std::floor(value))) return false;
  out = static_cast<uint8_t>(value);
  return true;
}

// "has element 2 = 300, not a byte (an integer in [0, 255])".
std::string not_a_byte(size_t i, double value) {
  std::ostringstream text;
  text << "has element " << i << " = " << value << ", not a byte (an integer in [0, 255])";
  return text.str();
}

}  // namespace

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

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string text = "(";
  for (size_t i = 0; i < shape.size(); ++i) text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + (shape.size() == 1 ? ",)" : ")");
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
      std::fill(out, out + count, static_cast<float>(read_element(*type, static_cast<const char*>(view.buf))));
      return std::nullopt;
    }
    const std::vector<int64_t> got(view.shape, view.shape + view.ndim);
    if (got != shape) return "has shape " + shape_text(got);
    if (*type == ElementType::kFloat32 && PyBuffer_IsContiguous(&view, 'C')) {
      std::memcpy(out, view.buf, count * sizeof(float));
      return std::nullopt;
    }
    for_each_element(view, count, [&](size_t i, const char* address) { out[i] = static_cast<float>(read_element(*type, address)); });
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

// Reads `count` bytes (kExact: integers in [0, 255]; kTruth: nonzero as 1) from a NumPy array or
// buffer, a flat list or tuple, or one number for a scalar shape. Needs the GIL.
std::optional<std::string> read_bytes(py::handle object, const std::vector<int64_t>* shape, size_t count, ByteValues values,
                                      uint8_t* out) {
  if (read_numpy_bytes_fast(object.ptr(), shape, count, values, out)) return std::nullopt;
  const bool scalar = shape != nullptr && shape->empty();
  BufferView buffer;
  if (buffer.open(object.ptr())) {
    const Py_buffer& view = buffer.view();
    const std::optional<ElementType> type = element_type(view.format, view.itemsize);
    if (!type) return std::string("has an unsupported element format '") + (view.format ? view.format : "") + "'";
    const std::vector<int64_t> got(view.shape, view.shape + view.ndim);
    int64_t elements = 1;
    for (int64_t extent : got) elements *= extent;
    if (shape != nullptr ? got != *shape : elements != static_cast<int64_t>(count)) return "has shape " + shape_text(got);
    std::optional<std::string> problem;
    for_each_element(view, count, [&](size_t i, const char* address) {
      const double value = read_element(*type, address);
      if (!problem && !to_byte(value, values, out[i])) problem = not_a_byte(i, value);
    });
    return problem;
  }
  PyObject* items = object.ptr();
  const bool sequence = PyList_Check(items) || PyTuple_Check(items);
  if (!sequence && (PyFloat_Check(items) || PyLong_Check(items))) {
    if (!scalar) return std::string("is a single number");
    const double value = PyFloat_AsDouble(items);
    if (value == -1.0 && PyErr_Occurred()) throw py::error_already_set();
    return to_byte(value, values, out[0]) ? std::nullopt : std::optional<std::string>(not_a_byte(0, value));
  }
  if (!sequence) return std::string("is ") + describe_value(object) + ", not an array or list of numbers";
  const Py_ssize_t size = PySequence_Fast_GET_SIZE(items);
  if ((shape != nullptr && shape->size() != 1) || size != static_cast<Py_ssize_t>(count)) {
    return "is a " + std::string(Py_TYPE(items)->tp_name) + " of " + std::to_string(size) +
           " elements (lists are read flat, for one-dimensional spaces)";
  }
  for (Py_ssize_t i = 0; i < size; ++i) {
    PyObject* item = PySequence_Fast_GET_ITEM(items, i);  // borrowed; lists and tuples are "fast"
    const double value = PyFloat_AsDouble(item);
    if (value == -1.0 && PyErr_Occurred()) {
      PyErr_Clear();
      return "has element " + std::to_string(i) + " that is no number (" + describe_value(item) + ")";
    }
    if (!to_byte(value, values, out[i])) return not_a_byte(static_cast<size_t>(i), value);
  }
  return std::nullopt;
}

// Reads an (H, W, 3) uint8 buffer into image, through its strides.
std::optional<std::string> read_rgb_image(py::handle object, int max_side, RgbImage& image) {
  const std::string expected = ", expected an (H, W, 3) array of uint8 (NumPy's, e.g. from render_mode='rgb_array')";
  BufferView buffer;
  if (!buffer.open(object.ptr())) return "is " + describe_value(object) + expected;
  const Py_buffer& view = buffer.view();
  const std::optional<ElementType> type = element_type(view.format, view.itemsize);
  if (!type || *type != ElementType::kUInt8) {
    const std::string dtype = py::hasattr(object, "dtype") ? describe(object.attr("dtype"))
                                                           : std::string("format '") + (view.format ? view.format : "") + "'";
    return "is an array of " + dtype + expected;
  }
  const std::vector<int64_t> shape(view.shape, view.shape + view.ndim);
  if (shape.size() != 3 || shape[2] != 3) return "has shape " + shape_text(shape) + expected;
  if (shape[0] < 1 || shape[1] < 1 || shape[0] > max_side || shape[1] > max_side) {
    return "has shape " + shape_text(shape) + ", expected a height and width in [1, " + std::to_string(max_side) + "]";
  }
  image = RgbImage(static_cast<int>(shape[1]), static_cast<int>(shape[0]));
  const char* base = static_cast<const char*>(view.buf);
  if (PyBuffer_IsContiguous(&view, 'C')) {
    std::memcpy(image.rgb.data(), base, image.rgb.size());
    return std::nullopt;
  }
  for (int y = 0; y < image.height; ++y) {
    for (int x = 0; x < image.width; ++x) {
      uint8_t* pixel = image.pixel(x, y);
      for (int c = 0; c < 3; ++c) {
        pixel[c] = static_cast<uint8_t>(base[static_cast<Py_ssize_t>(y) * view.strides[0] +
                                             static_cast<Py_ssize_t>(x) * view.strides[1] + c * view.strides[2]]);
      }
    }
  }
  return std::nullopt;
}

// env.spec.<name> when the env carries a Gymnasium spec with it set, else env.<name>; None when neither.
py::object spec_field(py::handle env, const char* name) {
  if (py::hasattr(env, "spec")) {
    const py::object spec = env.attr("spec");
    if (!spec.is_none() && py::hasattr(spec, name) && !spec.attr(name).is_none()) return spec.attr(name);
  }
  if (py::hasattr(env, "get_wrapper_attr")) {  // Gymnasium's: through its wrappers, without their deprecation warning
    try {
      return env.attr("get_wrapper_attr")(name);
    } catch (py::error_already_set& error) {
      if (!error.matches(PyExc_AttributeError)) throw;
      return py::none();
    }
  }
  if (py::hasattr(env, name)) return env.attr(name);
  return py::none();
}

}  // namespace rlx::python_bridge
