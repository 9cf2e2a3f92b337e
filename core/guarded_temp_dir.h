// GuardedTempDir: a TempDir (removed with everything in it when the object goes) whose contents
// are also removed on the exits that unwind nothing: a second stop signal, the stop watchdog,
// an abort (core/stop_signal.h). For secret keys and private sockets. Its owner file names this
// process (core/temp_dir_owner.h), so that a later run removes it if a SIGKILL left it behind.
#pragma once

#include <filesystem>
#include <memory>
#include <string>

#include "core/stop_signal.h"
#include "core/temp_dir.h"
#include "core/temp_dir_owner.h"

namespace rlx {

class GuardedTempDir {
 public:
  // Makes <parent>/<prefix>XXXXXX (parent: the system's temp dir), mode 0700, with its owner
  // file, registered for removal on a signal; std::runtime_error when it cannot be made.
  explicit GuardedTempDir(const std::string& prefix, const std::filesystem::path& parent = {}) : dir_(prefix, parent) {
    stamp_temp_dir_owner(dir_.path());
    removal_ = std::make_unique<RemoveOnSignal>(dir_.path());
  }
  GuardedTempDir(const GuardedTempDir&) = delete;
  GuardedTempDir& operator=(const GuardedTempDir&) = delete;

  const std::filesystem::path& path() const { return dir_.path(); }
  std::filesystem::path operator/(const std::string& name) const { return dir_ / name; }

  // Registers the files now directly inside for removal on a signal too: call it once they are
  // written (std::length_error beyond RemoveOnSignal's bound).
  void guard_contents() {
    removal_.reset();
    removal_ = std::make_unique<RemoveOnSignal>(dir_.path());
  }

 private:
  TempDir dir_;
  std::unique_ptr<RemoveOnSignal> removal_;  // declared after dir_: unregistered before dir_ goes
};

}  // namespace rlx
