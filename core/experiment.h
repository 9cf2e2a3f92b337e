// Experiments: the YAML files `rlx train` and `rlx tune` run (RLlib tuned-example shape),
// --set overrides, cross-key validation, and the resolved forms for params.yaml and checkpoints.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/config.h"
#include "core/env_spec.h"
#include "core/multi_agent_config.h"
#include "core/plugin_refs.h"

namespace rlx {

// When a run ends: any criterion reached stops it.
struct StopCriteria {
  std::optional<double> episode_return_mean;
  std::optional<int64_t> timesteps_total;
  std::optional<double> time_total_s;
  std::optional<int64_t> training_iteration;

  bool empty() const { return !episode_return_mean && !timesteps_total && !time_total_s && !training_iteration; }
  // The horizon of the linear schedules: timesteps_total, or 1,000,000 without it.
  int64_t schedule_horizon() const { return timesteps_total.value_or(1'000'000); }
  // {criterion: value} for the criteria set.
  nlohmann::json to_json() const;
};

// The names of the four stop criteria.
const std::vector<std::string>& stop_criterion_names();

struct Experiment {
  std::string name;
  std::string env;
  AlgorithmKind algorithm = AlgorithmKind::kPPO;
  StopCriteria stop;
  Config config;
  std::vector<PluginRef> plugins;    // env plugins; relative paths resolved against the file's folder
  // env_config: keyword arguments of a Python env's constructor (env: python:MODULE:CLASS); a JSON object.
  nlohmann::json env_config = nlohmann::json::object();
  std::vector<std::string> python_path;  // directories put in front of sys.path for a Python env (absolute)
  nlohmann::json tune;               // the file's tune: section as JSON; null when absent
  MultiAgentSetup multi_agent;       // policies, policy_mapping, policies_to_train (all empty: one shared policy)
  // Set only on the experiment a multi-agent run derives for one policy (never read from a file):
  // the single-agent spec of the agents that policy drives, which its learner and model are built for.
  std::optional<EnvSpec> policy_env_spec;
  std::string source;                // the file (or "checkpoint.json" etc.) it came from, for messages
  // Where each value set explicitly came from ("file.yaml:12" or "--set"), keyed "env",
  // "algorithm", "stop.<criterion>" or the config key; for messages only.
  std::map<std::string, std::string> origins;
};

// Every experiment in a YAML file, in file order; ConfigError naming file, experiment, key,
// line, value and what was expected on any problem. Cross-key checks are left to validate_experiment.
std::vector<Experiment> load_experiments(const std::filesystem::path& path);
// The same from YAML text; `source` names it in messages, `base_dir` resolves plugin paths.
std::vector<Experiment> parse_experiments(const std::string& yaml_text, const std::string& source,
                                          const std::filesystem::path& base_dir);

// The experiment called `name`, or the only one when `name` is empty; ConfigError listing the
// names when there is no such experiment or several and no name.
Experiment select_experiment(const std::vector<Experiment>& experiments, std::string_view name);

// Applies one "key=value" override: a config key (optionally "config.key"), "env",
// "stop.<criterion>" or "env_config.<name>" (the value read as a YAML scalar); the value is read per the key's type. ConfigError on a bad key or value.
void apply_override(Experiment& experiment, std::string_view assignment);
// The schema entry behind a key --set and tune take: a config key, or "policies.NAME.KEY" (one
// policy's own value of KEY); nullptr when the key's name is neither.
const KeySpec* find_tunable_key(const std::string& name);
// Sets such a key to a JSON value (a policy's key in experiment.multi_agent); ConfigError naming
// the key on an unknown policy, a key of the whole run, or a value the key does not take.
void set_tunable_key(Experiment& experiment, const std::string& name, const nlohmann::json& value);

// Applies overrides in order.
void apply_overrides(Experiment& experiment, const std::vector<std::string>& assignments);

// Cross-key checks (e.g. a linear schedule needs stop.timesteps_total, minibatch_size <= the
// train batch); ConfigError naming where the offending values came from.
void validate_experiment(const Experiment& experiment);

// load_experiments + select_experiment + apply_overrides + validate_experiment.
Experiment load_experiment(const std::filesystem::path& path, std::string_view name,
                           const std::vector<std::string>& overrides);

// The resolved experiment as YAML, `name: {env, env_config, algorithm, stop, config (every key
// that applies), plugins, python_path, tune}` (empty env_config, plugins and python_path left out); load_experiments reads it back to an equal experiment.
std::string experiment_to_yaml(const Experiment& experiment);
// The resolved experiment as JSON: {name, env, env_config, algorithm, stop, config, plugins, python_path, tune}.
nlohmann::json experiment_to_json(const Experiment& experiment);
// Reads experiment_to_json's form back (missing config keys take their defaults, so older
// checkpoints load); ConfigError naming `source` on a problem.
Experiment experiment_from_json(const nlohmann::json& json, const std::string& source);

}  // namespace rlx
