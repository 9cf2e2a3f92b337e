// SharedLibrary: a dlopen handle (RAII), for env plugins and the Python env bridge.
#pragma once

#include <string>

namespace rlx {

// A library opened with dlopen, closed on destruction. Libraries are opened with RTLD_NODELETE,
// so their code stays mapped after the close: envs and factories they made outlive the handle.
class SharedLibrary {
 public:
  // How the library's symbols are seen by libraries loaded after it.
  enum class Symbols { kLocal, kGlobal };

  // Opens the library at file; throws std::runtime_error "<label>: cannot load: <dlerror>" on
  // failure. kGlobal makes its symbols (and its dependencies', e.g. libpython's) visible to
  // libraries loaded later (Python's extension modules need that).
  SharedLibrary(const std::string& label, const std::string& file, Symbols symbols = Symbols::kLocal);
  ~SharedLibrary();
  SharedLibrary(const SharedLibrary&) = delete;
  SharedLibrary& operator=(const SharedLibrary&) = delete;

  // The address of an exported symbol; throws "<label>: missing symbol '<name>'<hint>" when it
  // is not there.
  void* symbol(const char* name, const std::string& hint = "") const;

 private:
  std::string label_;
  void* handle_ = nullptr;
};

}  // namespace rlx
