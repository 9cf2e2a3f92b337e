// Loading env plugins (shared libraries written against envs/plugin.h) into a registry.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "core/config_error.h"
#include "envs/registry.h"

namespace rlx {

// Loads the plugin at path and adds its envs to registrar. Registration is all or nothing:
// the plugin registers into a staging registry first, and its envs reach registrar only if
// it returns normally. Throws EnvPluginError (core/config_error.h: bad input, exit status 2)
// naming the path when the file is missing, dlopen fails, a symbol is missing, the ABI version
// differs from kEnvPluginAbiVersion, the registration throws, or registrar refuses an env (e.g.
// an id already registered). The library stays resident for the rest of the process. Loading the same file twice into the
// same registry registers its ids twice and so fails; use EnvPluginLoader to skip repeats.
void load_env_plugin(const std::string& path, EnvRegistrar& registrar);

// Loads plugins into one registrar, each file (by canonical path) at most once.
class EnvPluginLoader {
 public:
  // The loader adds envs to registrar, which must outlive it.
  explicit EnvPluginLoader(EnvRegistrar& registrar) : registrar_(registrar) {}

  // Loads the plugin at path (see load_env_plugin); returns false, doing nothing, when this
  // loader already loaded the same file (symlinks and relative paths resolve to one file).
  bool load(const std::string& path);

  // Canonical paths of the plugins this loader has loaded, in load order.
  const std::vector<std::string>& loaded_paths() const { return loaded_paths_; }

 private:
  EnvRegistrar& registrar_;
  std::set<std::string> loaded_;
  std::vector<std::string> loaded_paths_;
};

// Loads each plugin into global_env_registry(); a file already loaded into it by this
// process is skipped quietly. Thread-safe; throws like load_env_plugin.
void load_env_plugins(const std::vector<std::string>& paths);

}  // namespace rlx
