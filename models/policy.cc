#include "models/policy.h"

#include <algorithm>

#include "models/policy_file.h"
#include "models/rollout_policy.h"

namespace rlx {

namespace {

// The worker policy a file's kind runs (models/rollout_policy.h), with the file's weights and
// observation statistics: deterministic (argmax / mean / greedy) or sampling. model is the
// file's, with a mask wherever its actions take one.
std::unique_ptr<RolloutPolicy> make_policy(const PolicyFile& file, const ModelSpec& model, bool deterministic,
                                           uint64_t seed) {
  std::unique_ptr<RolloutPolicy> policy;
  switch (model.kind) {
    case ModelKind::kActorCritic:
      policy = std::make_unique<ActorCriticPolicy>(model, seed, deterministic, /*values=*/false);
      break;
    case ModelKind::kQNetwork:
      policy = std::make_unique<EpsilonGreedyQPolicy>(model, deterministic ? 0.0 : file.epsilon, seed);
      break;
    case ModelKind::kSquashedGaussian:
      policy = std::make_unique<SquashedGaussianPolicy>(model, 0.0, seed, deterministic);
      break;
  }
  policy->load_weights(file.parameters.data(), file.parameters.size(), 0);
  if (!file.obs_mean.empty()) policy->set_obs_normalizer(file.obs_mean, file.obs_var, file.obs_count);
  return policy;
}

// Throws std::invalid_argument unless the mask leaves each element of the action a legal value.
void check_mask_allows(const uint8_t* mask, const std::vector<int64_t>& categories) {
  for (size_t e = 0; e < categories.size(); ++e) {
    if (std::none_of(mask, mask + categories[e], [](uint8_t legal) { return legal != 0; })) {
      throw std::invalid_argument(categories.size() == 1 ? std::string("Policy::act got an action mask that allows no action")
                                                         : "Policy::act got an action mask that allows no value of action element " +
                                                               std::to_string(e) + " (its " + std::to_string(categories[e]) +
                                                               " bytes are all 0)");
    }
    mask += categories[e];
  }
}

}  // namespace

struct Policy::Impl {
  std::string env_id, algorithm;
  std::string core;  // the model's recurrent core ("lstm", "gru"), "" for a memoryless one
  int64_t state_size = 0;
  Space observation_space, action_space;
  bool trained_with_mask = false;
  ObservationLayout layout;  // the acting policies' own: with a mask whenever the actions take one
  std::vector<int64_t> categories, starts;
  std::unique_ptr<RolloutPolicy> deterministic, stochastic;
  // act()'s scratch: one stored byte row (leaves, then the mask), the sampled indices, the
  // log-probability an actor-critic reports, and raw Box actions.
  std::vector<uint8_t> bytes;
  std::vector<int64_t> indices;
  float log_prob = 0;
  std::vector<float> values;
};

Policy::Policy(const std::string& path, uint64_t seed) : impl_(std::make_unique<Impl>()) {
  const PolicyFile file = read_policy_file(path);
  Impl& impl = *impl_;
  impl.env_id = file.env_id;
  impl.algorithm = file.algorithm;
  impl.observation_space = file.model.input_space();
  impl.action_space = file.model.action_space;
  impl.trained_with_mask = file.model.action_mask;
  impl.core = file.model.core;
  ModelSpec model = file.model;
  model.action_mask = impl.action_space.is_discrete() || impl.action_space.is_multi_discrete();
  try {
    impl.deterministic = make_policy(file, model, true, seed);
    impl.stochastic = make_policy(file, model, false, seed);
  } catch (const std::invalid_argument& error) {
    throw PolicyFileError(path + ": " + error.what());
  }
  impl.layout = impl.deterministic->observation_layout();
  impl.state_size = impl.deterministic->state_size();
  if (model.indexed_actions()) impl.categories = model.action_categories();
  impl.starts = action_starts(impl.action_space);
  impl.bytes.resize(static_cast<size_t>(impl.layout.byte_slots));
  impl.indices.resize(std::max<size_t>(impl.starts.size(), 1));
  impl.values.resize(impl.action_space.is_box() ? static_cast<size_t>(impl.action_space.size()) : 0);
}

Policy::~Policy() = default;
Policy::Policy(Policy&&) noexcept = default;
Policy& Policy::operator=(Policy&&) noexcept = default;

PolicyAction Policy::act(const std::vector<float>& observation, bool deterministic) {
  return act(observation.data(), observation.size(), deterministic);
}

PolicyAction Policy::act(const float* observation, size_t size, bool deterministic) {
  if (byte_size() > 0) {
    throw std::invalid_argument("Policy::act: observations of " + observation_space() + " have " +
                                std::to_string(byte_size()) + " bytes besides their " + std::to_string(float_size()) +
                                " floats; pass a PolicyObservation");
  }
  PolicyObservation obs;
  obs.floats = observation;
  obs.float_count = size;
  return act(obs, deterministic);
}

PolicyAction Policy::act(const PolicyObservation& observation, bool deterministic) {
  if (recurrent()) {
    throw std::invalid_argument("Policy::act: this policy is recurrent (its " + impl_->core + " core carries " +
                                std::to_string(state_size()) +
                                " floats of state from step to step): call act(observation, state), with "
                                "initial_state() at an episode's start and the previous action.state after");
  }
  return step(observation, nullptr, deterministic);
}

PolicyAction Policy::act(const std::vector<float>& observation, const std::vector<float>& state, bool deterministic) {
  if (byte_size() > 0) {
    throw std::invalid_argument("Policy::act: observations of " + observation_space() + " have " +
                                std::to_string(byte_size()) + " bytes besides their " + std::to_string(float_size()) +
                                " floats; pass a PolicyObservation");
  }
  PolicyObservation obs;
  obs.floats = observation.data();
  obs.float_count = observation.size();
  return act(obs, state, deterministic);
}

PolicyAction Policy::act(const PolicyObservation& observation, const std::vector<float>& state, bool deterministic) {
  if (state.size() != static_cast<size_t>(state_size())) {
    throw std::invalid_argument(
        "Policy::act needs a state of " + std::to_string(state_size()) + " floats, got " + std::to_string(state.size()) +
        (recurrent() ? " (initial_state() at an episode's start, then the previous step's action.state)"
                     : " (this policy is memoryless: its state, initial_state(), is empty)"));
  }
  return step(observation, &state, deterministic);
}

PolicyAction Policy::step(const PolicyObservation& observation, const std::vector<float>* state, bool deterministic) {
  Impl& impl = *impl_;
  const ObservationLayout& layout = impl.layout;
  const auto part = [&](const char* what, const void* data, size_t count, int64_t expected) {
    if (count != static_cast<size_t>(expected) || (expected > 0 && data == nullptr)) {
      throw std::invalid_argument("Policy::act needs an observation of " + std::to_string(expected) + " " + what +
                                  " (observation space " + observation_space() + "), got " +
                                  (data == nullptr && count > 0 ? "a null pointer" : std::to_string(count)));
    }
  };
  part("floats", observation.floats, observation.float_count, layout.float_slots);
  part("bytes", observation.bytes, observation.byte_count, byte_size());
  std::copy(observation.bytes, observation.bytes + observation.byte_count, impl.bytes.begin());
  uint8_t* mask = impl.bytes.data() + layout.mask_offset;
  if (observation.mask != nullptr || observation.mask_count > 0) {
    if (layout.mask_size == 0) {
      throw std::invalid_argument("Policy::act got an action mask, but its action space " + action_space() + " takes none");
    }
    if (observation.mask == nullptr || observation.mask_count != static_cast<size_t>(layout.mask_size)) {
      throw std::invalid_argument("Policy::act needs an action mask of " + std::to_string(layout.mask_size) +
                                  " bytes (one per value of action space " + action_space() + "), got " +
                                  (observation.mask == nullptr ? "a null pointer" : std::to_string(observation.mask_count)));
    }
    std::copy(observation.mask, observation.mask + layout.mask_size, mask);
    check_mask_allows(mask, impl.categories);
  } else {
    std::fill(mask, mask + layout.mask_size, uint8_t{1});  // every action legal
  }

  RolloutPolicy& policy = deterministic ? *impl.deterministic : *impl.stochastic;
  ActOutput out{impl.indices.data(), impl.values.data(), policy.has_policy_outputs() ? &impl.log_prob : nullptr, nullptr};
  if (impl.state_size > 0) policy.set_states(*state, 1);
  policy.act(ObsBatch(observation.floats, impl.bytes.data()), 1, out);
  PolicyAction action;
  if (impl.state_size > 0) action.state = policy.states();
  const Space& space = impl.action_space;
  if (space.is_discrete()) {
    action.index = impl.indices[0] + space.start;
  } else if (space.is_box()) {  // what rlx evaluate sends the env: the action clipped to the Box
    action.values.resize(impl.values.size());
    for (size_t j = 0; j < impl.values.size(); ++j) action.values[j] = std::clamp(impl.values[j], space.low[j], space.high[j]);
  } else {
    action.indices.resize(impl.starts.size());
    for (size_t j = 0; j < impl.starts.size(); ++j) action.indices[j] = impl.indices[j] + impl.starts[j];
  }
  return action;
}

int64_t Policy::state_size() const { return impl_->state_size; }

bool Policy::recurrent() const { return impl_->state_size > 0; }

std::vector<float> Policy::initial_state() const { return std::vector<float>(static_cast<size_t>(impl_->state_size), 0.0f); }

std::string Policy::observation_space() const { return impl_->observation_space.to_string(); }

int64_t Policy::float_size() const { return impl_->layout.float_slots; }

int64_t Policy::observation_size() const { return float_size(); }

int64_t Policy::byte_size() const { return impl_->layout.byte_slots - impl_->layout.mask_size; }

int64_t Policy::mask_size() const { return impl_->layout.mask_size; }

bool Policy::trained_with_mask() const { return impl_->trained_with_mask; }

std::string Policy::action_space() const { return impl_->action_space.to_string(); }

bool Policy::discrete_actions() const { return impl_->action_space.is_discrete(); }

bool Policy::indexed_actions() const { return !impl_->action_space.is_box(); }

int64_t Policy::action_size() const {
  return impl_->action_space.is_discrete() ? impl_->action_space.n : impl_->action_space.size();
}

const std::vector<int64_t>& Policy::action_categories() const { return impl_->categories; }

const std::vector<float>& Policy::action_low() const { return impl_->action_space.low; }

const std::vector<float>& Policy::action_high() const { return impl_->action_space.high; }

const std::string& Policy::env_id() const { return impl_->env_id; }

const std::string& Policy::algorithm() const { return impl_->algorithm; }

}  // namespace rlx
