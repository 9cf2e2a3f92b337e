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
  // act()'s scratch, one row per observation: the stored floats and bytes (leaves, then the
  // mask), the sampled indices, the log-probabilities an actor-critic reports, raw Box actions
  // and the states in.
  std::vector<float> floats;
  std::vector<uint8_t> bytes;
  std::vector<int64_t> indices;
  std::vector<float> log_probs;
  std::vector<float> values;
  std::vector<float> states;

  // Checks one observation's parts and copies its bytes and mask (all legal without one) into
  // `row` (byte_slots bytes) when row is not null; throws std::invalid_argument naming the part.
  void store_row(const PolicyObservation& observation, uint8_t* row) const;
  // The action of one row of act()'s output, in the space's values.
  PolicyAction action_of(const int64_t* row_indices, const float* row_values) const;
  // Grows the scratch to `rows` rows.
  void reserve(size_t rows);
};

void Policy::Impl::store_row(const PolicyObservation& observation, uint8_t* row) const {
  const std::string observation_name = observation_space.to_string();
  const auto part = [&](const char* what, const void* data, size_t count, int64_t expected) {
    if (count != static_cast<size_t>(expected) || (expected > 0 && data == nullptr)) {
      throw std::invalid_argument("Policy::act needs an observation of " + std::to_string(expected) + " " + what +
                                  " (observation space " + observation_name + "), got " +
                                  (data == nullptr && count > 0 ? "a null pointer" : std::to_string(count)));
    }
  };
  part("floats", observation.floats, observation.float_count, layout.float_slots);
  part("bytes", observation.bytes, observation.byte_count, layout.byte_slots - layout.mask_size);
  if (observation.mask != nullptr || observation.mask_count > 0) {
    if (layout.mask_size == 0) {
      throw std::invalid_argument("Policy::act got an action mask, but its action space " + action_space.to_string() +
                                  " takes none");
    }
    if (observation.mask == nullptr || observation.mask_count != static_cast<size_t>(layout.mask_size)) {
      throw std::invalid_argument("Policy::act needs an action mask of " + std::to_string(layout.mask_size) +
                                  " bytes (one per value of action space " + action_space.to_string() + "), got " +
                                  (observation.mask == nullptr ? "a null pointer" : std::to_string(observation.mask_count)));
    }
    check_mask_allows(observation.mask, categories);
  }
  if (row == nullptr) return;
  std::copy(observation.bytes, observation.bytes + observation.byte_count, row);
  uint8_t* mask = row + layout.mask_offset;
  if (observation.mask != nullptr) {
    std::copy(observation.mask, observation.mask + layout.mask_size, mask);
  } else {
    std::fill(mask, mask + layout.mask_size, uint8_t{1});  // every action legal
  }
}

PolicyAction Policy::Impl::action_of(const int64_t* row_indices, const float* row_values) const {
  PolicyAction action;
  const Space& space = action_space;
  if (space.is_discrete()) {
    action.index = row_indices[0] + space.start;
  } else if (space.is_box()) {  // what rlx evaluate sends the env: the action clipped to the Box
    action.values.resize(static_cast<size_t>(space.size()));
    for (size_t j = 0; j < action.values.size(); ++j) action.values[j] = std::clamp(row_values[j], space.low[j], space.high[j]);
  } else {
    action.indices.resize(starts.size());
    for (size_t j = 0; j < starts.size(); ++j) action.indices[j] = row_indices[j] + starts[j];
  }
  return action;
}

void Policy::Impl::reserve(size_t rows) {
  states.resize(rows * static_cast<size_t>(state_size));  // exactly: set_states takes it whole
  if (log_probs.size() >= rows) return;
  floats.resize(rows * static_cast<size_t>(layout.float_slots));
  bytes.resize(rows * static_cast<size_t>(layout.byte_slots));
  indices.resize(rows * std::max<size_t>(starts.size(), 1));
  log_probs.resize(rows);
  values.resize(action_space.is_box() ? rows * static_cast<size_t>(action_space.size()) : 0);
}

Policy::Policy(const std::string& path, uint64_t seed) : impl_(std::make_unique<Impl>()) {
  init(read_policy_file(path), path, seed);
}

Policy::Policy(const PolicyFile& file, const std::string& name, uint64_t seed) : impl_(std::make_unique<Impl>()) {
  init(file, name, seed);
}

void Policy::init(const PolicyFile& file, const std::string& name, uint64_t seed) {
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
    throw PolicyFileError(name + ": " + error.what());
  }
  impl.layout = impl.deterministic->observation_layout();
  impl.state_size = impl.deterministic->state_size();
  if (model.indexed_actions()) impl.categories = model.action_categories();
  impl.starts = action_starts(impl.action_space);
  impl.reserve(1);
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
  return step(observation, &state, deterministic);
}

PolicyAction Policy::step(const PolicyObservation& observation, const std::vector<float>* state, bool deterministic) {
  PolicyAction action;
  act_rows(&observation, 1, state != nullptr ? &state : nullptr, deterministic, &action);
  return action;
}

void Policy::check_observation(const PolicyObservation& observation) const { impl_->store_row(observation, nullptr); }

std::vector<PolicyAction> Policy::act_batch(const std::vector<PolicyObservation>& observations,
                                            const std::vector<const std::vector<float>*>& states, bool deterministic) {
  const size_t rows = observations.size();
  if (rows == 0) return {};
  if (!states.empty() && states.size() != rows) {
    throw std::invalid_argument("Policy::act_batch needs one state per observation (" + std::to_string(rows) + "), got " +
                                std::to_string(states.size()));
  }
  if (impl_->state_size > 0 && states.empty()) {
    throw std::invalid_argument("Policy::act_batch: this policy is recurrent: pass each row's state");
  }
  std::vector<PolicyAction> actions(rows);
  act_rows(observations.data(), rows, states.empty() ? nullptr : states.data(), deterministic, actions.data());
  return actions;
}

void Policy::act_rows(const PolicyObservation* observations, size_t rows, const std::vector<float>* const* states,
                      bool deterministic, PolicyAction* out) {
  Impl& impl = *impl_;
  impl.reserve(rows);
  const size_t float_slots = static_cast<size_t>(impl.layout.float_slots);
  const size_t byte_slots = static_cast<size_t>(impl.layout.byte_slots);
  const size_t state_size = static_cast<size_t>(impl.state_size);
  for (size_t r = 0; r < rows; ++r) {
    try {
      impl.store_row(observations[r], impl.bytes.data() + r * byte_slots);
      if (states != nullptr && states[r]->size() != state_size) {
        throw std::invalid_argument(
            "Policy::act needs a state of " + std::to_string(state_size) + " floats, got " + std::to_string(states[r]->size()) +
            (state_size > 0 ? " (initial_state() at an episode's start, then the previous step's action.state)"
                            : " (this policy is memoryless: its state, initial_state(), is empty)"));
      }
    } catch (const std::invalid_argument& error) {
      if (rows == 1) throw;
      throw std::invalid_argument("row " + std::to_string(r) + ": " + error.what());
    }
    if (float_slots > 0) std::copy(observations[r].floats, observations[r].floats + float_slots, impl.floats.begin() + r * float_slots);
    if (state_size > 0) std::copy(states[r]->begin(), states[r]->end(), impl.states.begin() + r * state_size);
  }
  RolloutPolicy& policy = deterministic ? *impl.deterministic : *impl.stochastic;
  ActOutput outputs{impl.indices.data(), impl.values.data(), policy.has_policy_outputs() ? impl.log_probs.data() : nullptr,
                    nullptr};
  const int num_rows = static_cast<int>(rows);
  if (state_size > 0) policy.set_states(impl.states, num_rows);
  policy.act(ObsBatch(impl.floats.data(), impl.bytes.data()), num_rows, outputs);
  const size_t index_width = std::max<size_t>(impl.starts.size(), 1);
  const size_t value_width = impl.action_space.is_box() ? static_cast<size_t>(impl.action_space.size()) : 0;
  for (size_t r = 0; r < rows; ++r) {
    out[r] = impl.action_of(impl.indices.data() + r * index_width, impl.values.data() + r * value_width);
    if (state_size > 0) {
      const float* next = policy.states().data() + r * state_size;
      out[r].state.assign(next, next + state_size);
    }
  }
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
