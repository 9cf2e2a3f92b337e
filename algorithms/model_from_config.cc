#include "algorithms/model_from_config.h"

#include "core/config_error.h"
#include "core/observation_layout.h"

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
  if (experiment.algorithm == AlgorithmKind::kSAC && !env.action_space.is_box()) {
    throw ConfigError(experiment.source + ": algorithm SAC needs a Box action space, but env " + env.id + " has " +
                      env.action_space.to_string() + " (use DQN or PPO for Discrete actions)");
  }
  if (experiment.algorithm == AlgorithmKind::kDQN && !env.action_space.is_discrete()) {
    throw ConfigError(experiment.source + ": algorithm DQN needs a Discrete action space, but env " + env.id +
                      " has " + env.action_space.to_string() + " (use PPO for Box actions)");
  }
  // What the learners do not train on yet (the workers, the wire and the contract carry it all):
  // one check per learner, each removed when that learner trains on it.
  const bool ppo = experiment.algorithm == AlgorithmKind::kPPO || experiment.algorithm == AlgorithmKind::kAPPO;
  const bool dqn = experiment.algorithm == AlgorithmKind::kDQN;
  if (ppo && (env.action_mask || !(env.action_space.is_box() || env.action_space.is_discrete()))) {
    throw ConfigError(experiment.source + ": env " + env.id + " has " + env.action_space.to_string() +
                      (env.action_mask ? " actions with a mask" : " actions") +
                      ", which PPO and APPO cannot train on yet in this rlx");
  }
  if (dqn && env.action_mask) {
    throw ConfigError(experiment.source + ": env " + env.id + " has " + env.action_space.to_string() +
                      " actions with a mask, which DQN cannot train on yet in this rlx");
  }
  if (dqn && !observation_layout(env).flat_is_floats) {
    throw ConfigError(experiment.source + ": env " + env.id + " observes " + env.observation_space.to_string() +
                      ", which DQN cannot train on yet in this rlx (it reads float32 Box observations)");
  }
  if (experiment.algorithm == AlgorithmKind::kSAC && !observation_layout(env).flat_is_floats) {
    throw ConfigError(experiment.source + ": env " + env.id + " observes " + env.observation_space.to_string() +
                      ", which SAC cannot train on (it reads float32 Box observations)");
  }
  if (ppo && experiment.config.ppo().normalize_observations && !observation_layout(env).flat_is_floats) {
    throw ConfigError(experiment.source + ": normalize_observations needs float32 Box observations, but env " + env.id +
                      " observes " + env.observation_space.to_string());
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
