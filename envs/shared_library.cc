#include "envs/shared_library.h"

#include <dlfcn.h>

#include <stdexcept>

namespace rlx {

SharedLibrary::SharedLibrary(const std::string& label, const std::string& file, Symbols symbols) : label_(label) {
  dlerror();  // clear any stale error
  const int visibility = symbols == Symbols::kGlobal ? RTLD_GLOBAL : RTLD_LOCAL;
  handle_ = dlopen(file.c_str(), RTLD_NOW | visibility | RTLD_NODELETE);
  if (!handle_) {
    const char* reason = dlerror();
    throw std::runtime_error(label_ + ": cannot load: " + (reason ? reason : "unknown dlopen error"));
  }
}

SharedLibrary::~SharedLibrary() { dlclose(handle_); }

void* SharedLibrary::symbol(const char* name, const std::string& hint) const {
  dlerror();
  void* address = dlsym(handle_, name);
  const char* reason = dlerror();
  if (reason || !address) throw std::runtime_error(label_ + ": missing symbol '" + name + "'" + hint);
  return address;
}

}  // namespace rlx
