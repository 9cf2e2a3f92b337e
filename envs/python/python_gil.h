// The GIL, and Python objects that rlx code copies around, for the Python env bridge
// (rlx-python-envs.so).
#pragma once

#include <Python.h>
#include <pybind11/pybind11.h>

#include <memory>

namespace rlx::python_bridge {

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

// `value` (holding Python objects) shared, so that rlx code may copy and drop it without holding
// the GIL: its last owner deletes it under the GIL.
template <typename T>
std::shared_ptr<const T> share(T value) {
  return std::shared_ptr<const T>(new T(std::move(value)), [](const T* held) {
    const GilLock gil;
    delete held;
  });
}

// Calls env.close() when the env has one, for an env's destructor: an exception close() raises is
// printed by Python, as a destructor cannot throw. Needs the GIL.
inline void close_from_destructor(pybind11::handle env) {
  if (!pybind11::hasattr(env, "close")) return;
  try {
    env.attr("close")();
  } catch (pybind11::error_already_set& error) {
    error.discard_as_unraisable(env.attr("close"));
  }
}

}  // namespace rlx::python_bridge
