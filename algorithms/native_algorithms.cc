// Which experiments rlx's own learners train, and building their algorithms.
#include "algorithms/native_algorithms.h"

#include "algorithms/model_from_config.h"
#include "algorithms/multi_agent_algorithm.h"
#include "algorithms/native_ppo_algorithm.h"
#include "algorithms/sac_algorithm.h"
#include "core/config_error.h"
#include "envs/experiment_envs.h"
#include "envs/registry.h"
#include "native/product_threads.h"

#include <algorithm>
#include <functional>

namespace rlx {

namespace {

// Why the native learner cannot train a model of `experiment`'s config; env_spec() (called only
// for an "auto" encoder) gives the spec it is built for.
std::optional<std::string> config_refusal(const Experiment& experiment, const std::function<EnvSpec()>& env_spec) {
  const CommonConfig& common = experiment.config.common();
  if (experiment.algorithm == AlgorithmKind::kSAC) return std::nullopt;  // SacAlgorithm checks its own config
  if (experiment.algorithm != AlgorithmKind::kPPO) {
    return std::string("the native learners train PPO and SAC only; ") + algorithm_name(experiment.algorithm) +
           " needs learner_backend: torch";
  }
  const std::string& precision = experiment.config.ppo().precision;
  if (precision != "fp32") {
    return "the native learner computes in float32, but precision is " + precision +
           " (autocast is LibTorch's: use learner_backend: torch)";
  }
  if (common.device != "cpu") {
    return "the native learner learns on the CPU, but device is " + common.device + " (use learner_backend: torch)";
  }
  if (common.num_learners != 1) {
    return "the native learner is one learner, but num_learners is " + std::to_string(common.num_learners) +
           " (use learner_backend: torch for data-parallel learners)";
  }
  if (common.elastic && common.max_learners > 1) {
    return "the native learner is one learner, but an elastic group may grow to max_learners " +
           std::to_string(common.max_learners) + " (use learner_backend: torch for data-parallel learners)";
  }
  if (common.vf_share_layers) {
    return "the native learner trains separate policy and value networks, but vf_share_layers is true (a shared "
           "trunk; use learner_backend: torch)";
  }
  if (common.recurrent()) {
    return std::string("the native learner trains memoryless MLPs, but ") + (common.use_lstm ? "use_lstm" : "use_gru") +
           " is true (use learner_backend: torch)";
  }
  if (experiment.config.ppo().use_sde) {
    return "the native learner trains a state-independent log-std, but use_sde is true (gSDE; use learner_backend: "
           "torch)";
  }
  if (common.encoder == "mlp") return std::nullopt;
  std::string encoder = common.encoder;
  if (encoder == "auto") encoder = model_from_config(experiment, env_spec()).encoder;  // from the observation space
  if (encoder != "mlp") {
    return "the native learner trains MLP encoders, but this model's encoder is " + encoder +
           " (use learner_backend: torch)";
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> native_learner_refusal(const Experiment& experiment) {
  // The env is loaded only when a model's "auto" encoder needs its spaces.
  const auto loaded = [&experiment] {
    load_experiment_envs(experiment);
    return is_multi_agent_experiment(experiment);
  };
  if (experiment.multi_agent.empty()) {
    return config_refusal(experiment, [&] {
      if (!loaded()) return experiment_env_spec(experiment);
      return PolicyMap(global_env_registry().multi_agent_spec(experiment.env), experiment.multi_agent).policy_env_spec(0);
    });
  }
  const std::vector<std::string> names = experiment.multi_agent.policy_names();
  for (size_t p = 0; p < names.size(); ++p) {
    if (!experiment.multi_agent.scripted(names[p]).empty()) continue;  // no model to learn
    Experiment one = experiment;
    one.config = policy_config(experiment.config, experiment.multi_agent, names[p]);
    one.multi_agent = {};
    auto refusal = config_refusal(one, [&] {
      loaded();
      return PolicyMap(global_env_registry().multi_agent_spec(experiment.env), experiment.multi_agent)
          .policy_env_spec(static_cast<int>(p));
    });
    if (refusal) return "policy '" + names[p] + "': " + *refusal;
  }
  return std::nullopt;
}

bool uses_native_learner(const Experiment& experiment) {
  if (experiment.algorithm == AlgorithmKind::kSAC) return true;  // its only learner
  const std::string& backend = experiment.config.common().learner_backend;
  return backend == "native" || (backend == "auto" && !native_learner_refusal(experiment));
}

std::unique_ptr<Algorithm> make_native_algorithm(const Experiment& experiment, const DataParallelOptions& options) {
  if (options.member != nullptr || (options.placement && options.placement->world_size > 1)) {
    throw ConfigError(experiment.source + ": learner_backend: native has no data-parallel learner ranks");
  }
  if (is_multi_agent_experiment(experiment)) return std::make_unique<MultiAgentAlgorithm>(experiment, options, make_native_algorithm);
  set_product_threads(learner_product_threads(experiment.config.common()));
  if (experiment.algorithm == AlgorithmKind::kSAC) return std::make_unique<SacAlgorithm>(experiment);
  return std::make_unique<NativePpoAlgorithm>(experiment);
}

int learner_product_threads(const CommonConfig& common) {
  if (common.learner_threads > 0) return static_cast<int>(common.learner_threads);
  // The CPUs the local worker processes do not step envs on.
  const int64_t free_cpus = static_cast<int64_t>(available_cpus()) - common.num_workers;
  return static_cast<int>(std::clamp<int64_t>(free_cpus, 1, kAutoLearnerThreads));
}

}  // namespace rlx
