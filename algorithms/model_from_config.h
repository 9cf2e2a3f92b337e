// The model spec (models/model_spec.h) an experiment trains, built from its typed config: the
// one place the config's network keys become a model, read by every algorithm for its learner
// and its workers' Welcome, and by checkpoints to check what they restore.
#pragma once

#include "core/env_spec.h"
#include "core/experiment.h"
#include "models/model_spec.h"

namespace rlx {

// The model of the experiment's algorithm (PPO, APPO: actor_critic; DQN: q_network; SAC:
// squashed_gaussian) for its env: hidden_sizes, activation and vf_share_layers; PPO's and APPO's
// log_std_init, ortho_init and head_fcnet_hiddens; DQN's dueling. Throws ConfigError naming the experiment file when
// the env's action space does not suit the algorithm.
ModelSpec model_from_config(const Experiment& experiment, const EnvSpec& env);

}  // namespace rlx
