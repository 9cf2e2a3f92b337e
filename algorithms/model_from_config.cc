#include "algorithms/model_from_config.h"

#include "core/config_error.h"

namespace rlx {

namespace {

ModelKind model_kind_of(AlgorithmKind algorithm) {
  switch (algorithm) {
    case AlgorithmKind::kPPO:
    case AlgorithmKind::kAPPO: return ModelKind::kActorCritic;
    case AlgorithmKind::kDQN: return ModelKind::kQNetwork;
    case AlgorithmKind::kSAC: return ModelKind::kSquashedGaussian;
  }
  return ModelKind::kActorCritic;
}

}  // namespace

ModelSpec model_from_config(const Experiment& experiment, const EnvSpec& env) {
  if (experiment.algorithm == AlgorithmKind::kSAC && env.action_space.is_discrete()) {
    throw ConfigError(experiment.source + ": algorithm SAC needs a Box action space, but env " + env.id + " has " +
                      env.action_space.to_string() + " (use DQN or PPO for Discrete actions)");
  }
  if (experiment.algorithm == AlgorithmKind::kDQN && !env.action_space.is_discrete()) {
    throw ConfigError(experiment.source + ": algorithm DQN needs a Discrete action space, but env " + env.id +
                      " has " + env.action_space.to_string() + " (use PPO for Box actions)");
  }
  const CommonConfig& common = experiment.config.common();
  ModelSpec model = ModelSpec::for_env(env, model_kind_of(experiment.algorithm));
  model.hidden_sizes.assign(common.hidden_sizes.begin(), common.hidden_sizes.end());
  model.activation = common.activation;
  if (model.kind == ModelKind::kActorCritic) {
    model.shared_trunk = common.vf_share_layers;
    model.log_std_init = experiment.config.ppo().log_std_init;
    model.ortho_init = experiment.config.ppo().ortho_init;
  }
  if (model.kind == ModelKind::kQNetwork) model.dueling = experiment.config.dqn().dueling;
  model.validate();
  return model;
}

}  // namespace rlx
