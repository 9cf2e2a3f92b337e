// Which experiments rlx's own learners train, and building their algorithms.
#include "algorithms/native_algorithms.h"

#include "algorithms/model_from_config.h"
#include "algorithms/native_ppo_algorithm.h"
#include "algorithms/sac_algorithm.h"
#include "core/config_error.h"
#include "envs/experiment_envs.h"
#include "envs/registry.h"
#include "native/product_threads.h"

#include <algorithm>

namespace rlx {

std::optional<std::string> native_learner_refusal(const Experiment& experiment) {
  const CommonConfig& common = experiment.config.common();
  if (experiment.algorithm == AlgorithmKind::kSAC) return std::nullopt;  // SacAlgorithm checks its own config
  if (experiment.algorithm != AlgorithmKind::kPPO) {
    return std::string("the native learners train PPO and SAC only; ") + algorithm_name(experiment.algorithm) +
           " needs learner_backend: torch";
  }
  if (common.device != "cpu") {
    return "the native learner learns on the CPU, but device is " + common.device + " (use learner_backend: torch)";
  }
  if (common.num_learners != 1) {
    return "the native learner is one learner, but num_learners is " + std::to_string(common.num_learners) +
           " (use learner_backend: torch for data-parallel learners)";
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
  if (encoder == "auto") {  // chosen from the env's observation space: only then is the env loaded here
    load_experiment_envs(experiment);
    encoder = model_from_config(experiment, experiment_env_spec(experiment)).encoder;
  }
  if (encoder != "mlp") {
    return "the native learner trains MLP encoders, but this model's encoder is " + encoder +
           " (use learner_backend: torch)";
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
