#include "models/model_spec.h"

#include "models/cnn_encoder.h"

#include <algorithm>
#include <stdexcept>

#include "models/layer_kinds.h"
#include "models/recurrent_layers.h"

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

namespace {

// An unset observation space: what a default Space is.
bool is_unset(const Space& space) { return space == Space(); }

// What of a space a model depends on: everything but the bounds of float32 Boxes (uint8 bounds
// scale the input, so they stay).
Space model_view(Space space) {
  if (space.is_float_box()) {
    std::fill(space.low.begin(), space.low.end(), -kInf);
    std::fill(space.high.begin(), space.high.end(), kInf);
  }
  for (Space& child : space.children) child = model_view(std::move(child));
  return space;
}

}  // namespace

ModelSpec ModelSpec::for_env(const EnvSpec& spec, ModelKind kind) {
  ModelSpec model;
  model.kind = kind;
  model.observation_space = spec.observation_space;
  model.obs_size = spec.observation_space.flat_size();
  model.action_mask = spec.action_mask;
  model.action_space = spec.action_space;
  return model;
}

Space ModelSpec::input_space() const {
  if (is_unset(observation_space)) return Space::box({obs_size}, -kInf, kInf);
  return observation_space;
}

ObservationLayout ModelSpec::observation_layout() const {
  return rlx::observation_layout(input_space(), action_mask ? action_mask_size(action_space) : 0);
}

int64_t ModelSpec::policy_output_size() const {
  if (action_space.is_box()) return action_space.size();
  int64_t total = 0;
  for (int64_t count : action_categories()) total += count;
  return total;
}

std::vector<int64_t> ModelSpec::action_categories() const { return rlx::action_categories(action_space); }

void ModelSpec::validate() const {
  if (obs_size <= 0) throw std::invalid_argument("policy model needs obs_size > 0, got " + std::to_string(obs_size));
  action_space.validate("action_space");
  if (!is_unset(observation_space)) {
    observation_space.validate("observation_space");
    if (observation_space.flat_size() != obs_size) {
      throw std::invalid_argument("policy model reads " + std::to_string(obs_size) + " inputs, its observation space " +
                                  observation_space.to_string() + " flattens to " +
                                  std::to_string(observation_space.flat_size()));
    }
  }
  if (!action_space.is_float_box() && !action_space.is_discrete() && !action_space.is_multi_discrete() &&
      !action_space.is_multi_binary()) {
    throw std::invalid_argument("a policy model cannot act in " + action_space.to_string());
  }
  if (action_mask && !action_space.is_discrete() && !action_space.is_multi_discrete()) {
    throw std::invalid_argument("an action mask needs a Discrete or MultiDiscrete action space, got " + action_space.to_string());
  }
  for (int64_t width : hidden_sizes) {
    if (width <= 0) throw std::invalid_argument("policy model hidden size must be positive, got " + std::to_string(width));
  }
  for (int64_t width : head_sizes) {
    if (width <= 0) throw std::invalid_argument("policy model head layer width must be positive, got " + std::to_string(width));
  }
  if (!head_sizes.empty() && kind != ModelKind::kActorCritic) {
    throw std::invalid_argument(std::string("head layers (head_fcnet_hiddens) are for actor_critic models (PPO, APPO), "
                                            "not ") + model_kind_name(kind));
  }
  if (sde && (kind != ModelKind::kActorCritic || !action_space.is_box())) {
    throw std::invalid_argument("state-dependent exploration (use_sde) is for actor_critic models (PPO, APPO) with Box "
                                "actions, not a " + std::string(model_kind_name(kind)) + " model acting in " +
                                action_space.to_string());
  }
  if (sde_sample_freq < -1) {
    throw std::invalid_argument("sde_sample_freq must be -1 (each fragment's start only) or more, got " +
                                std::to_string(sde_sample_freq));
  }
  if (activation != "tanh" && activation != "relu") {
    throw std::invalid_argument("unknown activation '" + activation + "' (expected tanh or relu)");
  }
  if (!encoder_kind_known(encoder)) {
    std::string known;
    for (const std::string& name : encoder_kind_names()) known += (known.empty() ? "" : ", ") + name;
    throw std::invalid_argument("unknown encoder kind '" + encoder + "' (known: " + known + ")");
  }
  if (encoder == kCnnEncoder) {
    cnn_encoder_layers(*this);  // the observation is an image and every filter fits it (or throws)
  } else if (!conv_filters.empty()) {
    throw std::invalid_argument("conv filters are for the cnn encoder, but the encoder is '" + encoder + "'");
  }
  if (recurrent()) {
    if (core != kLstmLayer && core != kGruLayer) {
      throw std::invalid_argument("unknown recurrent core '" + core + "' (expected lstm or gru)");
    }
    if (core_size < 1 || core_size > kMaxRecurrentHidden) {
      throw std::invalid_argument("recurrent core size must be in [1, " + std::to_string(kMaxRecurrentHidden) + "], got " +
                                  std::to_string(core_size));
    }
    if (core_layers < 1 || core_layers > kMaxCoreLayers) {
      throw std::invalid_argument("recurrent core layers must be in [1, " + std::to_string(kMaxCoreLayers) + "], got " +
                                  std::to_string(core_layers));
    }
    if (kind != ModelKind::kActorCritic) {
      throw std::invalid_argument(std::string("a recurrent core is for actor_critic models (PPO, APPO), not ") +
                                  model_kind_name(kind));
    }
  }
  if (kind == ModelKind::kQNetwork && !action_space.is_discrete()) {
    throw std::invalid_argument("a q_network model needs a Discrete action space, got " + action_space.to_string());
  }
  if (kind == ModelKind::kSquashedGaussian && !action_space.is_box()) {
    throw std::invalid_argument("a squashed_gaussian model needs a Box action space, got " + action_space.to_string());
  }
}

void ModelSpec::check_env(const EnvSpec& env, const std::string& who) const {
  if (is_unset(observation_space) ? env.observation_space.flat_size() != obs_size || !env.observation_space.is_float_box()
                                  : model_view(env.observation_space) != model_view(observation_space)) {
    throw std::invalid_argument(who + " env " + env.id + " gives observations in " + env.observation_space.to_string() +
                                ", the model reads " + input_space().to_string());
  }
  if (env.action_mask != action_mask) {
    throw std::invalid_argument(who + " env " + env.id + (env.action_mask ? " masks its actions, the model does not"
                                                                          : " masks no actions, the model expects a mask"));
  }
  if (!(env.action_space == action_space)) {
    throw std::invalid_argument(who + " env " + env.id + " takes actions in " + env.action_space.to_string() +
                                ", the model acts in " + action_space.to_string());
  }
}

bool ModelSpec::operator==(const ModelSpec& other) const {
  // Float32 Box bounds do not shape the networks: a spec of an older rlx (no observation space)
  // equals one of the same env written today.
  return kind == other.kind && obs_size == other.obs_size && model_view(input_space()) == model_view(other.input_space()) &&
         action_mask == other.action_mask && action_space == other.action_space &&
         encoder == other.encoder && conv_filters == other.conv_filters && hidden_sizes == other.hidden_sizes && activation == other.activation && shared_trunk == other.shared_trunk &&
         core == other.core && (!recurrent() || (core_size == other.core_size && core_layers == other.core_layers)) &&
         head_sizes == other.head_sizes && log_std_init == other.log_std_init && sde == other.sde &&
         (!sde || sde_sample_freq == other.sde_sample_freq) && dueling == other.dueling && ortho_init == other.ortho_init;
}

}  // namespace rlx
