#include "algorithms/model_from_config.h"

#include "core/config_error.h"
#include "core/observation_layout.h"
#include "models/cnn_encoder.h"

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

// The encoder config's encoder and conv_filters keys ask for (see their docs in
// core/config_schema.cc): an observation with images (alone, or in a Dict or Tuple) gets the CNN
// preset for their size under "auto".
void choose_encoder(const Experiment& experiment, const EnvSpec& env, ModelSpec& model) {
  const CommonConfig& common = experiment.config.common();
  const std::vector<ImageLeaf> images = image_leaves(env.observation_space);
  const bool cnn = common.encoder == "cnn" || (common.encoder == "auto" && !images.empty());
  if (!cnn) {
    if (common.conv_filters != "auto") {
      throw ConfigError(experiment.source + ": conv_filters " + common.conv_filters + " are for the cnn encoder, but env " +
                        env.id + " observes " + env.observation_space.to_string() + " with the mlp encoder");
    }
    return;
  }
  if (images.empty() || experiment.algorithm == AlgorithmKind::kSAC) {
    throw ConfigError(experiment.source + ": encoder cnn reads images (Boxes of rank 3, height x width x channels, " +
                      "at least " + std::to_string(kMinImageSide) + "x" + std::to_string(kMinImageSide) +
                      ", alone or inside a Dict or Tuple)" +
                      (!images.empty() ? std::string(", and SAC's networks take no cnn yet")
                                       : ", but env " + env.id + " observes " + env.observation_space.to_string()));
  }
  const CnnPreset preset = cnn_preset(images);
  model.encoder = kCnnEncoder;
  try {
    model.conv_filters = common.conv_filters == "auto" ? preset.conv_filters : parse_conv_filters(common.conv_filters);
  } catch (const std::invalid_argument& error) {
    throw ConfigError(experiment.source + ": conv_filters: " + error.what());
  }
  if (common.encoder == "auto") {  // the preset whole: its dense layers, ReLU
    model.hidden_sizes = preset.hidden_sizes;
    model.activation = "relu";
  }
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
  choose_encoder(experiment, env, model);
  if (model.kind == ModelKind::kActorCritic) {
    model.shared_trunk = common.vf_share_layers;
    model.log_std_init = experiment.config.ppo().log_std_init;
    model.sde = experiment.config.ppo().use_sde;
    model.sde_sample_freq = experiment.config.ppo().sde_sample_freq;
    model.ortho_init = experiment.config.ppo().ortho_init;
    model.head_sizes = experiment.config.ppo().head_fcnet_hiddens;
  }
  if (common.recurrent()) {
    model.core = common.use_lstm ? "lstm" : "gru";
    model.core_size = common.lstm_cell_size;
    model.core_layers = common.lstm_num_layers;
  }
  if (model.kind == ModelKind::kQNetwork) model.dueling = experiment.config.dqn().dueling;
  try {
    model.validate();
  } catch (const std::invalid_argument& error) {
    throw ConfigError(experiment.source + ": the model for env " + env.id + ": " + error.what());
  }
  return model;
}

}  // namespace rlx
