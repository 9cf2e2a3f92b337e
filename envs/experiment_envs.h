// Making an experiment's env known to this process: its plugins loaded and, for a Python env, the
// class registered with its env_config and python_path (envs/python_env.h).
#pragma once

#include "core/experiment.h"
#include "envs/plugin_loader.h"
#include "envs/python_env.h"

namespace rlx {

// Loads the experiment's env plugins and registers env_id (the experiment's env unless given)
// when it names a Python env; throws as load_env_plugins and register_python_env do.
inline void load_experiment_envs(const Experiment& experiment, const std::string& env_id = "") {
  load_env_plugins(plugin_paths(experiment.plugins));
  const std::string& id = env_id.empty() ? experiment.env : env_id;
  if (is_python_env_id(id)) {
    add_python_path(experiment.python_path);
    register_python_env(id, experiment.env_config.dump());
  }
}

}  // namespace rlx
