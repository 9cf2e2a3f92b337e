// The schema table and KeySpec's modifiers and checks.
#include "core/config_schema.h"

#include <cctype>

namespace rlx {
namespace {

// "cpu", "cuda" or "cuda:N".
bool is_device_name(const std::string& text) {
  if (text == "cpu" || text == "cuda") return true;
  if (text.rfind("cuda:", 0) != 0 || text.size() == 5) return false;
  for (size_t i = 5; i < text.size(); ++i) {
    if (!std::isdigit(static_cast<unsigned char>(text[i]))) return false;
  }
  return true;
}

std::vector<KeySpec> build_schema() {
  std::vector<KeySpec> keys;
  auto add = [&keys](KeySpec&& key) { keys.push_back(std::move(key)); };

  // ---- common ----
  add(int_key("seed", 0, "Seed of environments, workers, network initialisation and sampling; with num_workers: 0 a run repeats exactly").at_least(0));
  add(int_key("num_workers", 2, "Rollout worker processes; 0 samples synchronously in the learner process (deterministic)").at_least(0));
  add(int_key("num_envs_per_worker", 8, "Environments each worker steps as one batch (K)").at_least(1));
  add(int_key("rollout_fragment_length", 64, "Steps per environment in one fragment a worker sends (T)").at_least(1));
  add(int_key("max_policy_lag", 1, "Fragments from weights more than this many versions old are dropped and counted").at_least(0));
  add(int_key("max_worker_restarts", 10, "Crashed worker processes restarted per run before the run fails").at_least(0));
  add(int_key("max_workers", 1024,
              "Workers (local and remote) the learner serves at once; more wait. Bounds the learner's memory for "
              "queued fragments: max_workers x 2 credits x the largest fragment")
          .at_least(1)
          .at_most(1 << 20));
  add(int_key("num_learners", 1, "Data-parallel learner processes (gradients all-reduced)").at_least(1));
  add(string_key("device", "cpu", "Learner device").matching(is_device_name, "\"cpu\", \"cuda\" or \"cuda:N\""));
  add(float_key("learner_timeout_s", 60.0, "Data-parallel learners: rendezvous and collective timeout; a rank silent this long fails the run").above(0));
  add(bool_key("drop_nonfinite_episodes", false, "false: a NaN or infinite observation or reward from an env stops the run (exit 2) naming env, worker, step and field; true: that step ends its episode as a truncation at the last finite observation with reward 0, the episode is left out of the returns and counted in sampler.episodes_dropped_nonfinite"));
  add(int_key("checkpoint_freq", 10, "Iterations between checkpoints; 0 checkpoints only at the end").at_least(0));
  add(float_key("gamma", 0.99, "Discount factor").at_least(0).at_most(1));
  add(float_key("lr", 3e-4, "Adam learning rate").above(0));
  add(string_key("lr_schedule", "constant", "\"linear\" anneals lr to 0 over stop.timesteps_total").one_of({"constant", "linear"}));
  add(int_list_key("hidden_sizes", {64, 64}, "Widths of the hidden layers of the policy/value/Q networks").at_least(1));
  add(string_key("activation", "tanh", "Activation of the hidden layers").one_of({"tanh", "relu"}));
  add(bool_key("vf_share_layers", false, "Policy and value heads share the hidden layers"));
  add(bool_key("normalize_observations", false, "Normalise observations by running mean and variance (state saved in checkpoints)"));
  add(float_key("grad_clip", 0.5, "Global gradient-norm clip; 0 turns clipping off").at_least(0));
  add(float_key("adam_eps", 1e-5, "Adam epsilon").above(0));

  // ---- PPO ----
  add(int_key("train_batch_size", 0, "Samples per iteration; 0 = max(num_workers, 1) * num_envs_per_worker * rollout_fragment_length; at least one fragment").at_least(0).ppo());
  add(int_key("num_epochs", 10, "Passes of SGD over each train batch").at_least(1).ppo());
  add(int_key("minibatch_size", 64, "Samples per SGD minibatch").at_least(1).ppo());
  add(float_key("lambda", 0.95, "GAE lambda").at_least(0).at_most(1).ppo());
  add(float_key("clip_param", 0.2, "PPO ratio clip epsilon").above(0).ppo());
  add(string_key("clip_schedule", "constant", "\"linear\" anneals clip_param to 0 over stop.timesteps_total").one_of({"constant", "linear"}).ppo());
  add(float_key("vf_clip_param", 0.0, "Clip of the value-function update around the old values; 0 turns it off").at_least(0).ppo());
  add(float_key("vf_loss_coeff", 0.5, "Weight of the value loss").at_least(0).ppo());
  add(float_key("entropy_coeff", 0.0, "Weight of the entropy bonus").at_least(0).ppo());
  add(bool_key("normalize_advantages", true, "Normalise advantages per minibatch").ppo());
  add(bool_key("scale_rewards", false, "Divide rewards by a running standard deviation of the discounted return").ppo());
  add(float_key("log_std_init", 0.0, "Initial log standard deviation of the Gaussian policy (Box actions)").ppo());

  // ---- DQN ----
  add(int_key("buffer_size", 100000, "Replay buffer capacity in transitions").at_least(1).dqn());
  add(int_key("learning_starts", 1000, "Env steps collected before training starts").at_least(0).dqn());
  add(int_key("train_freq", 4, "Env steps between training rounds").at_least(1).dqn());
  add(int_key("gradient_steps", 1, "Gradient steps per training round").at_least(1).dqn());
  add(int_key("batch_size", 64, "Transitions per gradient step").at_least(1).dqn());
  add(int_key("target_update_interval", 1000, "Env steps between hard target-network copies (when tau = 1)").at_least(1).dqn());
  add(float_key("tau", 1.0, "Target update: 1 = hard copy every target_update_interval; < 1 = Polyak averaging every training round").above(0).at_most(1).dqn());
  add(bool_key("double_q", true, "Double Q-learning targets").dqn());
  add(bool_key("dueling", false, "Dueling value/advantage heads").dqn());
  add(int_key("n_step", 1, "Steps of the n-step return").at_least(1).dqn());
  add(bool_key("prioritized_replay", false, "Prioritised experience replay").dqn());
  add(float_key("prioritized_replay_alpha", 0.6, "Priority exponent alpha").at_least(0).dqn());
  add(float_key("prioritized_replay_beta", 0.4, "Initial importance-sampling exponent beta, annealed to 1 over stop.timesteps_total").at_least(0).at_most(1).dqn());
  add(float_key("exploration_initial_eps", 1.0, "Epsilon at the start of the schedule").at_least(0).at_most(1).dqn());
  add(float_key("exploration_final_eps", 0.05, "Epsilon at the end of the schedule").at_least(0).at_most(1).dqn());
  add(float_key("exploration_fraction", 0.1, "Fraction of stop.timesteps_total over which epsilon decays linearly").at_least(0).at_most(1).dqn());
  add(bool_key("apex_epsilons", false, "false: every worker follows the schedule; true: worker i of N uses 0.4^(1 + 7i/(N-1)) (Ape-X)").dqn());
  add(float_key("huber_delta", 1.0, "Delta of the Huber TD loss").above(0).dqn());
  add(bool_key("checkpoint_replay_buffer", true, "Keep the replay buffer (with its n-step windows and priorities) in checkpoints, so a resumed run continues exactly; costs about buffer_size * (2 * obs size + 4) * 4 bytes per checkpoint; one learner only (data-parallel ranks refill theirs)").dqn());
  return keys;
}

KeySpec make_key(std::string name, ConfigType type, ConfigValue value, std::string description) {
  KeySpec key;
  key.name = std::move(name);
  key.type = type;
  key.default_value = std::move(value);
  key.description = std::move(description);
  return key;
}

std::string bound_text(double value) {
  std::string text = format_double(value);
  if (value == static_cast<double>(static_cast<int64_t>(value)) && text.size() > 2 &&
      text.compare(text.size() - 2, 2, ".0") == 0) {
    text.resize(text.size() - 2);
  }
  return text;
}

}  // namespace

const char* algorithm_name(AlgorithmKind algorithm) { return algorithm == AlgorithmKind::kPPO ? "PPO" : "DQN"; }

std::optional<AlgorithmKind> parse_algorithm(std::string_view name) {
  if (name == "PPO") return AlgorithmKind::kPPO;
  if (name == "DQN") return AlgorithmKind::kDQN;
  return std::nullopt;
}

KeySpec&& KeySpec::ppo() && {
  scope = KeyScope::kPPO;
  return std::move(*this);
}
KeySpec&& KeySpec::dqn() && {
  scope = KeyScope::kDQN;
  return std::move(*this);
}
KeySpec&& KeySpec::at_least(double bound) && {
  min = bound;
  min_exclusive = false;
  return std::move(*this);
}
KeySpec&& KeySpec::above(double bound) && {
  min = bound;
  min_exclusive = true;
  return std::move(*this);
}
KeySpec&& KeySpec::at_most(double bound) && {
  max = bound;
  max_exclusive = false;
  return std::move(*this);
}
KeySpec&& KeySpec::below(double bound) && {
  max = bound;
  max_exclusive = true;
  return std::move(*this);
}
KeySpec&& KeySpec::one_of(std::vector<std::string> allowed) && {
  choices = std::move(allowed);
  return std::move(*this);
}
KeySpec&& KeySpec::matching(bool (*predicate)(const std::string&), std::string expected_text) && {
  check = predicate;
  check_expected = std::move(expected_text);
  return std::move(*this);
}

bool KeySpec::applies_to(AlgorithmKind algorithm) const {
  switch (scope) {
    case KeyScope::kCommon: return true;
    case KeyScope::kPPO: return algorithm == AlgorithmKind::kPPO;
    case KeyScope::kDQN: return algorithm == AlgorithmKind::kDQN;
  }
  return false;
}

std::string KeySpec::allowed() const {
  if (type == ConfigType::kString) {
    if (check) return check_expected;
    std::string text;
    for (size_t i = 0; i < choices.size(); ++i) text += (i ? ", \"" : "\"") + choices[i] + "\"";
    return text;
  }
  std::string range;
  if (min && max) {
    range = std::string("in ") + (min_exclusive ? "(" : "[") + bound_text(*min) + ", " + bound_text(*max) +
            (max_exclusive ? ")" : "]");
  } else if (min) {
    range = std::string(min_exclusive ? "> " : ">= ") + bound_text(*min);
  } else if (max) {
    range = std::string(max_exclusive ? "< " : "<= ") + bound_text(*max);
  }
  if (type == ConfigType::kIntList && !range.empty()) return "each " + range;
  return range;
}

std::string KeySpec::expected() const {
  const std::string range = allowed();
  if (type == ConfigType::kString) {
    if (check) return range;
    return choices.empty() ? type_description(type) : "one of " + range;
  }
  if (range.empty()) return type_description(type);
  return std::string(type_description(type)) + (type == ConfigType::kIntList ? ", " : " ") + range;
}

std::optional<std::string> KeySpec::problem_with(const ConfigValue& value) const {
  auto in_range = [this](double x) {
    if (min && (min_exclusive ? !(x > *min) : !(x >= *min))) return false;
    if (max && (max_exclusive ? !(x < *max) : !(x <= *max))) return false;
    return true;
  };
  switch (type) {
    case ConfigType::kInt:
      if (!in_range(static_cast<double>(std::get<int64_t>(value)))) return "out of range";
      return std::nullopt;
    case ConfigType::kFloat:
      if (!in_range(std::get<double>(value))) return "out of range";
      return std::nullopt;
    case ConfigType::kBool: return std::nullopt;
    case ConfigType::kString: {
      const auto& text = std::get<std::string>(value);
      if (check && !check(text)) return "not allowed";
      if (!choices.empty()) {
        for (const auto& choice : choices) {
          if (choice == text) return std::nullopt;
        }
        return "not allowed";
      }
      return std::nullopt;
    }
    case ConfigType::kIntList:
      for (int64_t element : std::get<IntList>(value)) {
        if (!in_range(static_cast<double>(element))) return "element " + std::to_string(element) + " out of range";
      }
      return std::nullopt;
  }
  return std::nullopt;
}

KeySpec int_key(std::string name, int64_t value, std::string description) {
  return make_key(std::move(name), ConfigType::kInt, value, std::move(description));
}
KeySpec float_key(std::string name, double value, std::string description) {
  return make_key(std::move(name), ConfigType::kFloat, value, std::move(description));
}
KeySpec bool_key(std::string name, bool value, std::string description) {
  return make_key(std::move(name), ConfigType::kBool, value, std::move(description));
}
KeySpec string_key(std::string name, std::string value, std::string description) {
  return make_key(std::move(name), ConfigType::kString, std::move(value), std::move(description));
}
KeySpec int_list_key(std::string name, IntList value, std::string description) {
  return make_key(std::move(name), ConfigType::kIntList, std::move(value), std::move(description));
}

const std::vector<KeySpec>& config_schema() {
  static const std::vector<KeySpec> schema = build_schema();
  return schema;
}

const KeySpec* find_key(std::string_view name) {
  for (const auto& key : config_schema()) {
    if (key.name == name) return &key;
  }
  return nullptr;
}

const char* type_description(ConfigType type) {
  switch (type) {
    case ConfigType::kInt: return "an integer";
    case ConfigType::kFloat: return "a float";
    case ConfigType::kBool: return "a bool (true/false)";
    case ConfigType::kString: return "a string";
    case ConfigType::kIntList: return "a list of integers";
  }
  return "?";
}

}  // namespace rlx
