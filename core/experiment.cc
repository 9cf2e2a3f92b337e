// Experiments: selection, --set overrides, cross-key validation, JSON form.
#include "core/experiment.h"

#include <algorithm>
#include <optional>
#include <utility>

#include "core/experiment_internal.h"

namespace rlx {
namespace {

const std::vector<KeySpec>& stop_specs() {
  static const std::vector<KeySpec> specs = [] {
    std::vector<KeySpec> out;
    out.push_back(float_key("episode_return_mean", 0.0, "Stop when the mean return of recent episodes reaches this"));
    out.push_back(int_key("timesteps_total", 0, "Stop after this many env steps").at_least(1));
    out.push_back(float_key("time_total_s", 0.0, "Stop after this many seconds of training").above(0));
    out.push_back(int_key("training_iteration", 0, "Stop after this many iterations").at_least(1));
    return out;
  }();
  return specs;
}

std::string experiment_label(const Experiment& experiment) {
  return "experiment '" + experiment.name + "' (" + experiment.source + ")";
}

std::string origin_of(const Experiment& experiment, const std::string& key) {
  const auto it = experiment.origins.find(key);
  return it == experiment.origins.end() ? "default" : it->second;
}

// "env", "algorithm" and "stop.<criterion>": what --set takes besides config keys.
std::vector<std::string> override_names() {
  std::vector<std::string> names = {"env", "algorithm"};
  for (const auto& name : stop_criterion_names()) names.push_back("stop." + name);
  return names;
}

bool is_clear_word(std::string_view text) { return text == "null" || text == "none" || text == "None" || text.empty(); }

// --set policies.NAME.KEY=VALUE: one policy's own value of a config key.
void apply_policy_override(Experiment& experiment, const std::string& key, std::string_view text, const std::string& prefix) {
  const size_t dot = key.find('.', 9);
  if (dot == std::string::npos || dot == 9 || dot + 1 == key.size()) throw ConfigError(prefix + "expected policies.NAME.KEY=VALUE");
  const std::string policy = key.substr(9, dot - 9);
  const std::string name = key.substr(dot + 1);
  if (!experiment.multi_agent.policies.count(policy)) {
    throw ConfigError(prefix + "no policy '" + policy + "' (the policies: " + join_names(experiment.multi_agent.policy_names()) + ")");
  }
  const KeySpec* spec = find_key(name);
  if (!spec || !spec->applies_to(experiment.algorithm)) {
    throw ConfigError(prefix + "'" + name + "' is not a config key of " + algorithm_name(experiment.algorithm));
  }
  if (!is_policy_key(name)) throw ConfigError(prefix + name + " applies to the whole run, not to one policy");
  if (!experiment.multi_agent.scripted(policy).empty()) throw ConfigError(prefix + "policy '" + policy + "' is scripted: it has no config keys");
  const auto value = parse_value(spec->type, text);
  if (!value) throw ConfigError(prefix + "config key '" + name + "': got '" + std::string(text) + "', expected " + spec->expected());
  MultiAgentSetup changed = experiment.multi_agent;
  changed.policies[policy][name] = value_to_json(*value);
  try {
    policy_config(experiment.config, changed, policy);
  } catch (const ConfigError& error) {
    throw ConfigError(prefix + error.what());
  }
  experiment.multi_agent = std::move(changed);
  experiment.origins[key] = "--set";
}

}  // namespace

const KeySpec* find_stop_spec(std::string_view name) {
  for (const auto& spec : stop_specs()) {
    if (spec.name == name) return &spec;
  }
  return nullptr;
}

void set_stop(StopCriteria& stop, const KeySpec& spec, const ConfigValue& value) {
  if (spec.name == "episode_return_mean") stop.episode_return_mean = std::get<double>(value);
  if (spec.name == "timesteps_total") stop.timesteps_total = std::get<int64_t>(value);
  if (spec.name == "time_total_s") stop.time_total_s = std::get<double>(value);
  if (spec.name == "training_iteration") stop.training_iteration = std::get<int64_t>(value);
}

std::string join_names(const std::vector<std::string>& names) {
  std::string text;
  for (size_t i = 0; i < names.size(); ++i) text += (i ? ", " : "") + names[i];
  return text;
}

// Keys that earlier rlx versions wrote for an algorithm that never read them (DQN's
// normalize_observations, common until the typed config): skipped in their files, so their
// checkpoints still resume and evaluate.
namespace {
bool read_by_earlier_versions_only(std::string_view key, AlgorithmKind algorithm) {
  return algorithm == AlgorithmKind::kDQN && key == "normalize_observations";
}
}  // namespace

std::string scope_name(const KeySpec& key) {
  std::vector<std::string> names;
  for (AlgorithmKind kind : kAllAlgorithms) {
    if (key.applies_to(kind)) names.emplace_back(algorithm_name(kind));
  }
  if (names.size() == std::size(kAllAlgorithms)) return "all algorithms";
  std::string text;
  for (size_t i = 0; i < names.size(); ++i) text += (i == 0 ? "" : i + 1 == names.size() ? " and " : ", ") + names[i];
  return text;
}

namespace {

// Names Stable-Baselines3, RLlib and CleanRL users type, and rlx's key for each.
struct KeyAlias {
  const char* name;
  const char* key;
};
constexpr KeyAlias kKeyAliases[] = {
    {"learning_rate", "lr"},           {"n_epochs", "num_epochs"},           {"num_sgd_iter", "num_epochs"},
    {"update_epochs", "num_epochs"},   {"ent_coef", "entropy_coeff"},        {"vf_coef", "vf_loss_coeff"},
    {"gae_lambda", "lambda"},          {"clip_range", "clip_param"},         {"clip_coef", "clip_param"},
    {"clip_range_vf", "vf_clip_param"}, {"max_grad_norm", "grad_clip"},      {"n_steps", "rollout_fragment_length"},
    {"num_steps", "rollout_fragment_length"}, {"n_envs", "num_envs_per_worker"}, {"num_envs", "num_envs_per_worker"},
    {"num_rollout_workers", "num_workers"}, {"num_env_runners", "num_workers"}, {"sgd_minibatch_size", "minibatch_size"},
    {"minibatch_size_per_learner", "minibatch_size"}, {"normalize_advantage", "normalize_advantages"},
    {"norm_adv", "normalize_advantages"}, {"target_network_update_freq", "target_update_interval"},
    {"num_steps_sampled_before_learning_starts", "learning_starts"}, {"exploration_final_epsilon", "exploration_final_eps"},
    {"net_arch", "hidden_sizes"},      {"fcnet_hiddens", "hidden_sizes"},    {"fcnet_activation", "activation"},
};

}  // namespace

std::string unknown_key_hint(std::string_view name, AlgorithmKind algorithm) {
  std::vector<std::string> own, others;
  for (const auto& key : config_schema()) (key.applies_to(algorithm) ? own : others).push_back(key.name);
  if (const auto match = closest_match(name, own)) return " (did you mean '" + *match + "'?)";
  for (const KeyAlias& alias : kKeyAliases) {
    if (name == alias.name && find_key(alias.key)->applies_to(algorithm)) {
      return " (did you mean '" + std::string(alias.key) + "', rlx's name for " + alias.name + "?)";
    }
  }
  if (const auto match = closest_match(name, others)) {
    return " (did you mean '" + *match + "'? it is a " + scope_name(*find_key(*match)) + " key; this experiment runs " +
           algorithm_name(algorithm) + ")";
  }
  return "";
}

const std::vector<std::string>& stop_criterion_names() {
  static const std::vector<std::string> names = {"episode_return_mean", "timesteps_total", "time_total_s",
                                                 "training_iteration"};
  return names;
}

nlohmann::json StopCriteria::to_json() const {
  nlohmann::json out = nlohmann::json::object();
  if (episode_return_mean) out["episode_return_mean"] = *episode_return_mean;
  if (timesteps_total) out["timesteps_total"] = *timesteps_total;
  if (time_total_s) out["time_total_s"] = *time_total_s;
  if (training_iteration) out["training_iteration"] = *training_iteration;
  return out;
}

Experiment select_experiment(const std::vector<Experiment>& experiments, std::string_view name) {
  const std::string source = experiments.empty() ? "the experiment file" : experiments.front().source;
  std::vector<std::string> names;
  for (const auto& experiment : experiments) names.push_back(experiment.name);
  if (experiments.empty()) throw ConfigError(source + ": no experiments");
  if (name.empty()) {
    if (experiments.size() == 1) return experiments.front();
    throw ConfigError(source + " holds " + std::to_string(experiments.size()) +
                      " experiments; choose one with --experiment: " + join_names(names));
  }
  for (const auto& experiment : experiments) {
    if (experiment.name == name) return experiment;
  }
  const auto match = closest_match(name, names);
  throw ConfigError(source + ": no experiment '" + std::string(name) + "'" +
                    (match ? " (did you mean '" + *match + "'?)" : "") + "; it holds: " + join_names(names));
}

void apply_override(Experiment& experiment, std::string_view assignment) {
  const std::string prefix = "--set " + std::string(assignment) + ": " + experiment_label(experiment) + ": ";
  const size_t equals = assignment.find('=');
  if (equals == std::string_view::npos || equals == 0) throw ConfigError(prefix + "expected key=value");
  std::string key(assignment.substr(0, equals));
  const std::string_view text = assignment.substr(equals + 1);
  const std::string origin = "--set";
  if (key.rfind("config.", 0) == 0) key = key.substr(7);

  if (key == "plugins") {
    throw ConfigError(prefix + "'plugins' is not a config key: load env plugins with --env-plugin PATH (repeatable), "
                      "which also points a resumed run or rlx evaluate at a plugin that moved");
  }
  if (key.rfind("env_config.", 0) == 0) {
    const std::string name = key.substr(11);
    if (name.empty()) throw ConfigError(prefix + "expected env_config.NAME=VALUE");
    experiment.env_config[name] = plain_scalar_to_json(std::string(text));
    experiment.origins["env_config"] = origin;
    return;
  }
  if (key == "env") {
    if (text.empty()) throw ConfigError(prefix + "env: expected an environment id");
    experiment.env = std::string(text);
    experiment.origins["env"] = origin;
    return;
  }
  if (key == "algorithm") {
    const auto algorithm = parse_algorithm(text);
    if (!algorithm) throw ConfigError(prefix + "unknown algorithm '" + std::string(text) + "', " + expected_algorithm_text());
    for (const auto& [name, where] : experiment.origins) {
      const KeySpec* spec = find_key(name);
      if (spec && !spec->applies_to(*algorithm)) {
        throw ConfigError(prefix + "config key '" + name + "' (" + where + ") applies to " + scope_name(*spec) +
                          ", not " + algorithm_name(*algorithm));
      }
    }
    experiment.algorithm = *algorithm;
    experiment.origins["algorithm"] = origin;
    // Keys whose default differs by algorithm follow it, unless set explicitly.
    experiment.config.apply_algorithm_defaults(*algorithm, [&experiment](const std::string& name) {
      return experiment.origins.count(name) > 0;
    });
    return;
  }
  if (key.rfind("stop.", 0) == 0) {
    const KeySpec* spec = find_stop_spec(key.substr(5));
    if (!spec) {
      const auto match = closest_match(key.substr(5), stop_criterion_names());
      throw ConfigError(prefix + "unknown stop criterion '" + key.substr(5) + "'" +
                        (match ? " (did you mean 'stop." + *match + "'?)" : "") + ", expected one of " +
                        join_names(stop_criterion_names()));
    }
    if (is_clear_word(text)) {
      StopCriteria cleared = experiment.stop;
      if (spec->name == "episode_return_mean") cleared.episode_return_mean.reset();
      if (spec->name == "timesteps_total") cleared.timesteps_total.reset();
      if (spec->name == "time_total_s") cleared.time_total_s.reset();
      if (spec->name == "training_iteration") cleared.training_iteration.reset();
      if (cleared.empty()) throw ConfigError(prefix + "'stop' needs at least one criterion");
      experiment.stop = cleared;
    } else {
      auto value = parse_value(spec->type, text);
      if (!value) throw ConfigError(prefix + "stop criterion '" + spec->name + "': got '" + std::string(text) + "', expected " + spec->expected());
      try {
        set_stop(experiment.stop, *spec, checked_value(*spec, std::move(*value)));
      } catch (const ConfigError&) {
        throw ConfigError(prefix + "stop criterion '" + spec->name + "': got '" + std::string(text) + "', expected " + spec->expected());
      }
    }
    experiment.origins[key] = origin;
    return;
  }
  if (key.rfind("policies.", 0) == 0) {
    apply_policy_override(experiment, key, text, prefix);
    return;
  }
  const KeySpec* spec = find_key(key);
  if (!spec) {
    // "env", "algorithm" and the stop criteria first, then the config keys.
    const auto match = closest_match(key, override_names());
    throw ConfigError(prefix + "unknown key '" + key + "'" +
                      (match ? " (did you mean '" + *match + "'?)" : unknown_key_hint(key, experiment.algorithm)));
  }
  if (!spec->applies_to(experiment.algorithm)) {
    throw ConfigError(prefix + "config key '" + key + "' applies to " + scope_name(*spec) + ", not " +
                      algorithm_name(experiment.algorithm));
  }
  auto value = parse_value(spec->type, text);
  if (!value) {
    throw ConfigError(prefix + "config key '" + key + "': got '" + std::string(text) + "', expected " + spec->expected() +
                      lone_integer_hint(*spec, text, ListSyntax::kCommandLine));
  }
  try {
    experiment.config.set(key, std::move(*value));
  } catch (const ConfigError& error) {
    throw ConfigError(prefix + error.what());
  }
  experiment.origins[key] = origin;
}

namespace {

// "policies.NAME.KEY" split into NAME and KEY; nullopt for any other key.
std::optional<std::pair<std::string, std::string>> policy_key_parts(const std::string& name) {
  if (name.rfind("policies.", 0) != 0) return std::nullopt;
  const size_t dot = name.find('.', 9);
  if (dot == std::string::npos || dot == 9 || dot + 1 == name.size()) return std::nullopt;
  return std::make_pair(name.substr(9, dot - 9), name.substr(dot + 1));
}

}  // namespace

const KeySpec* find_tunable_key(const std::string& name) {
  const auto parts = policy_key_parts(name);
  return find_key(parts ? parts->second : name);
}

void set_tunable_key(Experiment& experiment, const std::string& name, const nlohmann::json& value) {
  const auto parts = policy_key_parts(name);
  if (!parts) {
    experiment.config.set_json(name, value);
    return;
  }
  const auto& [policy, key] = *parts;
  if (!experiment.multi_agent.policies.count(policy) || !experiment.multi_agent.scripted(policy).empty()) {
    throw ConfigError(name + ": no policy '" + policy + "' with config keys (the policies: " +
                      join_names(experiment.multi_agent.policy_names()) + ")");
  }
  if (!is_policy_key(key)) throw ConfigError(name + ": " + key + " applies to the whole run, not to one policy");
  MultiAgentSetup changed = experiment.multi_agent;
  changed.policies[policy][key] = value;
  policy_config(experiment.config, changed, policy);  // the value is one the key takes (ConfigError)
  experiment.multi_agent = std::move(changed);
}

void apply_overrides(Experiment& experiment, const std::vector<std::string>& assignments) {
  for (const auto& assignment : assignments) apply_override(experiment, assignment);
}

void validate_experiment(const Experiment& experiment) {
  const Config& config = experiment.config;
  const std::string label = experiment_label(experiment) + ": ";
  if (experiment.env.empty()) throw ConfigError(label + "missing 'env'");
  if (experiment.stop.empty()) throw ConfigError(label + "'stop' needs at least one criterion");
  const bool has_horizon = experiment.stop.timesteps_total.has_value();
  auto need_horizon = [&](const std::string& key, const std::string& why) {
    if (!has_horizon) {
      throw ConfigError(label + key + " (" + origin_of(experiment, key) + ") " + why +
                        ", which needs stop.timesteps_total; set it or change " + key);
    }
  };
  const CommonConfig& common = config.common();
  if (common.use_lstm && common.use_gru) {
    throw ConfigError(label + "use_lstm (" + origin_of(experiment, "use_lstm") + ") and use_gru (" +
                      origin_of(experiment, "use_gru") + ") are both true; a recurrent core is one or the other");
  }
  if (common.recurrent() && !reads_ppo_keys(experiment.algorithm)) {
    const std::string key = common.use_lstm ? "use_lstm" : "use_gru";
    throw ConfigError(label + key + " (" + origin_of(experiment, key) + "): a recurrent core trains with PPO or APPO; " +
                      algorithm_name(experiment.algorithm) + " has none yet (DQN's sequence replay, R2D2, is not built)");
  }
  if (common.worker_weight_delay > 0 && common.worker_weight_delay >= common.max_policy_lag) {
    throw ConfigError(label + "worker_weight_delay " + std::to_string(common.worker_weight_delay) + " (" +
                      origin_of(experiment, "worker_weight_delay") + ") must be below max_policy_lag " +
                      std::to_string(common.max_policy_lag) + " (" + origin_of(experiment, "max_policy_lag") +
                      "): every fragment would be dropped as stale");
  }
  if (reads_ppo_keys(experiment.algorithm)) {
    const PpoConfig& ppo = config.ppo();
    if (ppo.lr_schedule == Schedule::kLinear) need_horizon("lr_schedule", "\"linear\" anneals lr over the run");
    if (ppo.clip_schedule == Schedule::kLinear) need_horizon("clip_schedule", "\"linear\" anneals clip_param over the run");
    const int64_t batch = effective_train_batch_size(config);
    if (ppo.minibatch_size > batch) {
      throw ConfigError(label + "minibatch_size " + std::to_string(ppo.minibatch_size) + " (" +
                        origin_of(experiment, "minibatch_size") + ") is larger than the train batch of " +
                        std::to_string(batch) + " samples");
    }
  } else if (experiment.algorithm == AlgorithmKind::kSAC) {
    const SacConfig& sac = config.sac();
    if (sac.lr_schedule == Schedule::kLinear) need_horizon("lr_schedule", "\"linear\" anneals the learning rates over the run");
    if (sac.batch_size > sac.buffer_size) {
      throw ConfigError(label + "batch_size " + std::to_string(sac.batch_size) + " (" + origin_of(experiment, "batch_size") +
                        ") is larger than buffer_size " + std::to_string(sac.buffer_size) + " (" +
                        origin_of(experiment, "buffer_size") + ")");
    }
  } else {
    const DqnConfig& dqn = config.dqn();
    if (dqn.lr_schedule == Schedule::kLinear) need_horizon("lr_schedule", "\"linear\" anneals lr over the run");
    if (dqn.exploration_fraction > 0 && dqn.exploration_initial_eps != dqn.exploration_final_eps) {
      need_horizon("exploration_fraction", "sets the epsilon schedule as a fraction of the run");
    }
    if (dqn.prioritized_replay && dqn.prioritized_replay_beta < 1.0) {
      need_horizon("prioritized_replay_beta", "is annealed to 1 over the run");
    }
    auto refuse_above_buffer = [&](const std::string& key, int64_t value) {
      if (value > dqn.buffer_size) {
        throw ConfigError(label + key + " " + std::to_string(value) + " (" + origin_of(experiment, key) +
                          ") is larger than buffer_size " + std::to_string(dqn.buffer_size) + " (" +
                          origin_of(experiment, "buffer_size") + ")");
      }
    };
    refuse_above_buffer("batch_size", dqn.batch_size);
    refuse_above_buffer("learning_starts", dqn.learning_starts);
  }
  // Each policy with keys of its own passes the same checks with them.
  for (const auto& [policy, keys] : experiment.multi_agent.policies) {
    if (keys.empty() || keys.contains("scripted")) continue;
    Experiment one = experiment;
    one.name = experiment.name + "', policy '" + policy;
    one.config = policy_config(experiment.config, experiment.multi_agent, policy);
    one.multi_agent = {};
    for (const auto& [key, value] : keys.items()) one.origins[key] = origin_of(experiment, "policies." + policy + "." + key);
    validate_experiment(one);
  }
}

Experiment load_experiment(const std::filesystem::path& path, std::string_view name,
                           const std::vector<std::string>& overrides) {
  Experiment experiment = select_experiment(load_experiments(path), name);
  apply_overrides(experiment, overrides);
  validate_experiment(experiment);
  return experiment;
}

nlohmann::json experiment_to_json(const Experiment& experiment) {
  nlohmann::json json = {{"name", experiment.name},
                         {"env", experiment.env},
                         {"env_config", experiment.env_config},
                         {"algorithm", algorithm_name(experiment.algorithm)},
                         {"stop", experiment.stop.to_json()},
                         {"config", experiment.config.to_json(experiment.algorithm)},
                         {"plugins", plugins_to_json(experiment.plugins)},
                         {"python_path", experiment.python_path},
                         {"tune", experiment.tune}};
  const nlohmann::json multi_agent = experiment.multi_agent.to_json();
  for (const auto& [field, value] : multi_agent.items()) json[field] = value;  // only when set
  return json;
}

Experiment experiment_from_json(const nlohmann::json& json, const std::string& source) {
  std::string label = source + ": ";
  auto fail = [&label](const std::string& what) -> ConfigError { return ConfigError(label + what); };
  if (!json.is_object()) throw fail("the experiment is not a JSON object");
  auto string_field = [&](const char* field) {
    const auto it = json.find(field);
    if (it == json.end() || !it->is_string()) throw fail(std::string("'") + field + "' missing or not a string");
    return it->get<std::string>();
  };
  Experiment experiment;
  experiment.source = source;
  experiment.name = string_field("name");
  label = source + ": experiment '" + experiment.name + "': ";
  experiment.env = string_field("env");
  const std::string algorithm = string_field("algorithm");
  const auto parsed = parse_algorithm(algorithm);
  if (!parsed) throw fail("unknown algorithm '" + algorithm + "', " + expected_algorithm_text());
  experiment.algorithm = *parsed;
  experiment.config.apply_algorithm_defaults(experiment.algorithm);

  const auto stop = json.find("stop");
  if (stop == json.end() || !stop->is_object()) throw fail("'stop' missing or not an object");
  for (const auto& [name, value] : stop->items()) {
    const KeySpec* spec = find_stop_spec(name);
    if (!spec) throw fail("unknown stop criterion '" + name + "'");
    auto converted = value_from_json(spec->type, value);
    if (!converted) throw fail("stop criterion '" + name + "': got " + value.dump() + ", expected " + spec->expected());
    try {
      set_stop(experiment.stop, *spec, checked_value(*spec, std::move(*converted)));
    } catch (const ConfigError&) {
      throw fail("stop criterion '" + name + "': got " + value.dump() + ", expected " + spec->expected());
    }
  }
  if (experiment.stop.empty()) throw fail("'stop' needs at least one criterion");

  const auto config = json.find("config");
  if (config == json.end() || !config->is_object()) throw fail("'config' missing or not an object");
  for (const auto& [name, value] : config->items()) {
    const KeySpec* spec = find_key(name);
    if (!spec) throw fail("unknown config key '" + name + "' (written by a newer rlx?)");
    if (!spec->applies_to(experiment.algorithm)) {
      if (read_by_earlier_versions_only(name, experiment.algorithm)) continue;
      throw fail("config key '" + name + "' applies to " + scope_name(*spec) + ", not " + algorithm);
    }
    try {
      experiment.config.set_json(name, value);
    } catch (const ConfigError& error) {
      throw fail(error.what());
    }
    experiment.origins[name] = source;
  }
  if (const auto plugins = json.find("plugins"); plugins != json.end()) experiment.plugins = plugins_from_json(*plugins, label);
  if (const auto tune = json.find("tune"); tune != json.end()) experiment.tune = *tune;
  if (const auto env_config = json.find("env_config"); env_config != json.end()) {  // absent before Python envs
    if (!env_config->is_object()) throw fail("'env_config' is not an object");
    experiment.env_config = *env_config;
  }
  if (const auto dirs = json.find("python_path"); dirs != json.end()) {
    if (!dirs->is_array()) throw fail("'python_path' is not a list");
    for (const auto& dir : *dirs) {
      if (!dir.is_string()) throw fail("'python_path' holds " + dir.dump() + ", not a directory");
      experiment.python_path.push_back(dir.get<std::string>());
    }
  }
  const auto field = [&json](const char* name) { return json.contains(name) ? json.at(name) : nlohmann::json(); };
  experiment.multi_agent = read_multi_agent_setup(field("policies"), field("policy_mapping"), field("policies_to_train"),
                                                  field("self_play"), experiment.algorithm, [&](const std::string&) {
                                                    return label.substr(0, label.size() - 2);
                                                  });
  return experiment;
}

}  // namespace rlx
