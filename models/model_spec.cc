#include "models/model_spec.h"

#include <stdexcept>

#include "models/layer_kinds.h"

namespace rlx {

const char* model_kind_name(ModelKind kind) {
  switch (kind) {
    case ModelKind::kActorCritic: return "actor_critic";
    case ModelKind::kQNetwork: return "q_network";
    case ModelKind::kSquashedGaussian: return "squashed_gaussian";
  }
  return "?";
}

std::optional<ModelKind> parse_model_kind(const std::string& name) {
  for (ModelKind kind : {ModelKind::kActorCritic, ModelKind::kQNetwork, ModelKind::kSquashedGaussian}) {
    if (name == model_kind_name(kind)) return kind;
  }
  return std::nullopt;
}

ModelSpec ModelSpec::for_env(const EnvSpec& spec, ModelKind kind) {
  ModelSpec model;
  model.kind = kind;
  model.obs_size = spec.observation_space.size();
  model.action_space = spec.action_space;
  return model;
}

int64_t ModelSpec::policy_output_size() const {
  return action_space.is_discrete() ? action_space.n : action_space.size();
}

void ModelSpec::validate() const {
  if (obs_size <= 0) throw std::invalid_argument("policy model needs obs_size > 0, got " + std::to_string(obs_size));
  action_space.validate();
  for (int64_t width : hidden_sizes) {
    if (width <= 0) throw std::invalid_argument("policy model hidden size must be positive, got " + std::to_string(width));
  }
  if (activation != "tanh" && activation != "relu") {
    throw std::invalid_argument("unknown activation '" + activation + "' (expected tanh or relu)");
  }
  if (!encoder_kind_known(encoder)) {
    std::string known;
    for (const std::string& name : encoder_kind_names()) known += (known.empty() ? "" : ", ") + name;
    throw std::invalid_argument("unknown encoder kind '" + encoder + "' (known: " + known + ")");
  }
  if (kind == ModelKind::kQNetwork && !action_space.is_discrete()) {
    throw std::invalid_argument("a q_network model needs a Discrete action space, got " + action_space.to_string());
  }
  if (kind == ModelKind::kSquashedGaussian && action_space.is_discrete()) {
    throw std::invalid_argument("a squashed_gaussian model needs a Box action space, got " + action_space.to_string());
  }
}

void ModelSpec::check_env(const EnvSpec& env, const std::string& who) const {
  if (env.observation_space.size() != obs_size) {
    throw std::invalid_argument(who + " env " + env.id + " gives observations of " +
                                std::to_string(env.observation_space.size()) + " floats, the model reads " +
                                std::to_string(obs_size));
  }
  if (!(env.action_space == action_space)) {
    throw std::invalid_argument(who + " env " + env.id + " takes actions in " + env.action_space.to_string() +
                                ", the model acts in " + action_space.to_string());
  }
}

bool ModelSpec::operator==(const ModelSpec& other) const {
  return kind == other.kind && obs_size == other.obs_size && action_space == other.action_space &&
         encoder == other.encoder && hidden_sizes == other.hidden_sizes && activation == other.activation && shared_trunk == other.shared_trunk &&
         log_std_init == other.log_std_init && dueling == other.dueling && ortho_init == other.ortho_init;
}

}  // namespace rlx
