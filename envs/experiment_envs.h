// Making an experiment's env known to this process: its plugins loaded and, for a Python env, the
// class registered with its env_config and python_path (envs/python_env.h); and the env as the
// experiment's consumers see it (frame_stack applied: envs/frame_stack.h).
#pragma once

#include "core/experiment.h"
#include "envs/frame_stack.h"
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

// The spec of env_id (the experiment's env unless given) as the experiment's workers, learner and
// evaluation see it: the registered spec, its observations stacked by frame_stack. Throws
// UnknownEnvError for an unregistered id (a policy of a multi-agent run gets its agents' spec), ConfigError when the env's observations cannot be stacked.
inline EnvSpec experiment_env_spec(const Experiment& experiment, const std::string& env_id = "") {
  if (experiment.policy_env_spec && env_id.empty()) return *experiment.policy_env_spec;  // one policy of a multi-agent run
  const std::string& id = env_id.empty() ? experiment.env : env_id;
  return frame_stacked_spec(global_env_registry().spec(id), static_cast<int>(experiment.config.common().frame_stack));
}

// The factory of env_id (the experiment's env unless given) as experiment_env_spec describes it.
inline EnvFactory experiment_env_factory(const Experiment& experiment, const std::string& env_id = "") {
  const std::string& id = env_id.empty() ? experiment.env : env_id;
  return frame_stacked_factory(global_env_registry().factory(id), static_cast<int>(experiment.config.common().frame_stack));
}

}  // namespace rlx
