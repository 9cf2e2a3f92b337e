#include "transport/fragment_contract.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace rlx {

namespace {

constexpr const char* kFaultNames[kNumFragmentFaults] = {
    "wrong_steps", "wrong_envs",       "wrong_obs_size", "wrong_action_shape", "missing_policy_outputs",
    "unexpected_policy_outputs",        "bad_flag",       "final_obs_mismatch", "non_finite",
    "episode_too_long", "unpublished_version", "no_credit", "illegal_action", "wrong_state_size", "wrong_policy"};

FragmentRefusal refuse(FragmentFault fault, std::string detail) { return {fault, std::move(detail)}; }

std::string mismatch(const char* what, int64_t got, int64_t expected) {
  return std::string(what) + " is " + std::to_string(got) + ", the run's contract says " + std::to_string(expected);
}

// The index of the first non-finite value in values, or nothing.
std::optional<size_t> first_non_finite(const std::vector<float>& values) {
  // One pass without branches per element; the rare hit is then located.
  bool all_finite = true;
  for (float value : values) all_finite &= std::isfinite(value);
  if (all_finite) return std::nullopt;
  for (size_t i = 0; i < values.size(); ++i) {
    if (!std::isfinite(values[i])) return i;
  }
  return std::nullopt;
}

std::optional<FragmentRefusal> check_finite(const SampleBatch& batch) {
  const std::pair<const char*, const std::vector<float>*> columns[] = {
      {"obs", &batch.obs},         {"rewards", &batch.rewards},     {"action_values", &batch.action_values},
      {"log_probs", &batch.log_probs}, {"values", &batch.values}, {"bootstrap_obs", &batch.bootstrap_obs},
      {"final_obs", &batch.final_obs},  {"initial_states", &batch.initial_states}};
  for (const auto& [name, column] : columns) {
    if (const std::optional<size_t> at = first_non_finite(*column)) {
      return refuse(FragmentFault::kNonFinite,
                    std::string(name) + "[" + std::to_string(*at) + "] is " + std::to_string((*column)[*at]));
    }
  }
  return std::nullopt;
}

// Every step that ended an episode, and no other, has its final observation, in step order.
std::optional<FragmentRefusal> check_episode_ends(const SampleBatch& batch) {
  const size_t n = batch.terminated.size();
  size_t next_final = 0;
  for (size_t i = 0; i < n; ++i) {
    const uint8_t terminated = batch.terminated[i];
    const uint8_t truncated = batch.truncated[i];
    if (terminated > 1 || truncated > 1) {
      return refuse(FragmentFault::kBadFlag, "step " + std::to_string(i) + " has terminated=" +
                                                 std::to_string(terminated) + " truncated=" + std::to_string(truncated));
    }
    if (!(terminated | truncated)) continue;
    if (next_final >= batch.final_obs_index.size() || batch.final_obs_index[next_final] != static_cast<int32_t>(i)) {
      return refuse(FragmentFault::kFinalObsMismatch,
                    "step " + std::to_string(i) + " ended an episode but has no final observation");
    }
    ++next_final;
  }
  if (next_final != batch.final_obs_index.size()) {
    return refuse(FragmentFault::kFinalObsMismatch,
                  "final observation for step " + std::to_string(batch.final_obs_index[next_final]) +
                      ", which ended no episode");
  }
  return std::nullopt;
}

// Every action index lies in its element's categories and, with a mask, is legal in the
// observation it was chosen on.
std::optional<FragmentRefusal> check_actions(const SampleBatch& batch, const FragmentContract& contract) {
  const auto& categories = contract.action_categories;
  const size_t components = categories.size();
  const size_t n = static_cast<size_t>(batch.num_transitions());
  for (size_t i = 0; i < n; ++i) {
    const int64_t* action = batch.action_indices.data() + i * components;
    const uint8_t* mask = contract.mask_size == 0 ? nullptr
                                                  : batch.obs_u8.data() + i * static_cast<size_t>(contract.obs_bytes) +
                                                        static_cast<size_t>(contract.mask_offset);
    for (size_t e = 0; e < components; ++e) {
      if (action[e] < 0 || action[e] >= categories[e]) {
        return refuse(FragmentFault::kIllegalAction, "step " + std::to_string(i) + " action element " + std::to_string(e) +
                                                         " is " + std::to_string(action[e]) + ", outside [0, " +
                                                         std::to_string(categories[e]) + ")");
      }
      if (mask != nullptr && mask[action[e]] == 0) {
        return refuse(FragmentFault::kIllegalAction, "step " + std::to_string(i) + " took action " +
                                                         std::to_string(action[e]) + " (element " + std::to_string(e) +
                                                         "), which its observation's mask forbids");
      }
      if (mask != nullptr) mask += categories[e];
    }
  }
  return std::nullopt;
}

// initial_states is present exactly when the learner's model is recurrent, with its S.
std::optional<FragmentRefusal> check_state_size(const SampleBatch& batch, const FragmentContract& contract) {
  const int64_t got = batch.state_size, expected = contract.state_size;
  if (got == expected) return std::nullopt;
  if (got == 0) {
    return refuse(FragmentFault::kWrongStateSize, "initial_states is missing; the learner's recurrent model needs [K, S = " +
                                                      std::to_string(expected) + "] (the policy's state before step 0)");
  }
  if (expected == 0) {
    return refuse(FragmentFault::kWrongStateSize, "initial_states [K, S = " + std::to_string(got) +
                                                      "] sent, but the learner's model is memoryless (no recurrent core)");
  }
  return refuse(FragmentFault::kWrongStateSize, mismatch("initial_states S", got, expected));
}

}  // namespace

const char* fragment_fault_name(FragmentFault fault) { return kFaultNames[static_cast<size_t>(fault)]; }

std::optional<FragmentRefusal> check_fragment(const SampleBatch& batch, const FragmentContract& contract) {
  if (batch.num_steps != contract.num_steps) {
    return refuse(FragmentFault::kWrongSteps, mismatch("T", batch.num_steps, contract.num_steps));
  }
  if (batch.num_envs != contract.num_envs) {
    return refuse(FragmentFault::kWrongEnvs, mismatch("K", batch.num_envs, contract.num_envs));
  }
  if (batch.obs_size != contract.obs_size) {
    return refuse(FragmentFault::kWrongObsSize, mismatch("observation size", batch.obs_size, contract.obs_size));
  }
  if (batch.obs_byte_size != contract.obs_bytes) {
    return refuse(FragmentFault::kWrongObsSize, mismatch("observation bytes", batch.obs_byte_size, contract.obs_bytes));
  }
  if (batch.action_size != contract.action_size) {
    return refuse(FragmentFault::kWrongActionShape, mismatch("action size", batch.action_size, contract.action_size));
  }
  const auto components = std::max<int64_t>(1, static_cast<int64_t>(contract.action_categories.size()));
  if (batch.discrete() && batch.action_components != components) {
    return refuse(FragmentFault::kWrongActionShape, mismatch("action elements", batch.action_components, components));
  }
  if (auto refusal = check_state_size(batch, contract)) return refusal;
  try {
    batch.validate();  // the decoder checked this; a fragment built in memory may not be
  } catch (const std::invalid_argument& error) {
    return refuse(FragmentFault::kFinalObsMismatch, error.what());
  }
  // V(s) is optional (validate() checked its size when present): PPO's learners recompute it.
  const bool has_outputs = !batch.log_probs.empty();
  const bool has_any_output = !batch.log_probs.empty() || !batch.values.empty();
  if (contract.policy_outputs && !has_outputs) {
    return refuse(FragmentFault::kMissingPolicyOutputs, "the algorithm needs log_probs");
  }
  if (!contract.policy_outputs && has_any_output) {
    return refuse(FragmentFault::kUnexpectedPolicyOutputs, "the algorithm takes no log_probs or values");
  }
  if (auto refusal = check_episode_ends(batch)) return refusal;
  if (batch.discrete() && !contract.action_categories.empty()) {
    if (auto refusal = check_actions(batch, contract)) return refusal;
  }
  return check_finite(batch);
}

size_t fragment_bytes(const SampleBatch& batch) {
  return sizeof(SampleBatch) + batch.obs.size() * sizeof(float) + batch.action_indices.size() * sizeof(int64_t) +
         batch.action_values.size() * sizeof(float) + batch.rewards.size() * sizeof(float) + batch.terminated.size() +
         batch.truncated.size() + batch.log_probs.size() * sizeof(float) + batch.values.size() * sizeof(float) +
         batch.bootstrap_obs.size() * sizeof(float) + batch.final_obs_index.size() * sizeof(int32_t) +
         batch.final_obs.size() * sizeof(float) + batch.obs_u8.size() + batch.bootstrap_obs_u8.size() +
         batch.final_obs_u8.size() + batch.initial_states.size() * sizeof(float);
}

size_t max_fragment_bytes(const FragmentContract& contract) {
  const auto n = static_cast<size_t>(contract.num_steps) * static_cast<size_t>(contract.num_envs);
  const size_t row = static_cast<size_t>(contract.obs_size) * sizeof(float) + static_cast<size_t>(contract.obs_bytes);
  const size_t action_bytes = contract.action_size == 0
                                  ? std::max<size_t>(contract.action_categories.size(), 1) * sizeof(int64_t)
                                  : static_cast<size_t>(contract.action_size) * sizeof(float);
  const size_t per_step = row + action_bytes + sizeof(float) + 2 * sizeof(uint8_t) +
                          (contract.policy_outputs ? 2 * sizeof(float) : 0) +
                          sizeof(int32_t) + row;  // a final observation at every step, at most
  const size_t per_env = row + static_cast<size_t>(contract.state_size) * sizeof(float);  // bootstrap_obs, initial_states
  return sizeof(SampleBatch) + n * per_step + static_cast<size_t>(contract.num_envs) * per_env;
}

}  // namespace rlx
