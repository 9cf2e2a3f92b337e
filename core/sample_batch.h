// SampleBatch: a time-major trajectory fragment of T steps from K envs, the one column
// layout that rollout workers produce, the wire carries, and PPO and DQN learners consume.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace rlx {

// Columns are flat row-major arrays; [T, K, ...] means step-major, env-minor. An observation has
// two parts (core/observation_layout.h): O floats in obs and B bytes in obs_u8 (uint8 leaves and
// the action mask); most spaces have B = 0, pixel spaces O = 0.
struct SampleBatch {
  uint64_t worker_id = 0;
  uint64_t policy_version = 0;  // version of the weights that chose these actions
  int32_t num_steps = 0;        // T
  int32_t num_envs = 0;         // K
  int64_t obs_size = 0;         // O
  int64_t action_size = 0;      // A for Box actions; 0 for indexed ones (Discrete, MultiDiscrete, MultiBinary)
  int64_t obs_byte_size = 0;    // B
  int64_t action_components = 1;// D: indices per action (1 for Discrete); 1 for Box
  int64_t state_size = 0;       // S: a recurrent policy's state floats per env (0: memoryless)
  int32_t policy_index = -1;    // multi-agent: the policy that chose the actions (its index in the run's map); -1: one agent
  int32_t lane = -1;            // multi-agent: the worker's lane (an agent of an env as one policy drives it), with K = 1

  std::vector<float> obs;                // [T, K, O] observation the action was chosen on
  std::vector<int64_t> action_indices;   // [T, K, D] indexed actions, each from 0 (empty for Box)
  std::vector<float> action_values;      // [T, K, A] Box actions as sampled, before clipping (empty for Discrete)
  std::vector<float> rewards;            // [T, K]
  std::vector<uint8_t> terminated;       // [T, K] 1 where the step ended the episode in a terminal state
  std::vector<uint8_t> truncated;        // [T, K] 1 where the step was cut by a time limit
  std::vector<float> log_probs;          // [T, K] log pi(a|s) of the behaviour policy (empty if unused)
  std::vector<float> values;             // [T, K] V(s) of the behaviour policy (empty if unused)
  std::vector<float> bootstrap_obs;      // [K, O] observation after the fragment's last step
  std::vector<int32_t> final_obs_index;  // [D] flat t * K + k of the steps that ended an episode
  std::vector<float> final_obs;          // [D, O] last observation of each such episode
  std::vector<uint8_t> obs_u8;           // [T, K, B] the observations' bytes
  std::vector<uint8_t> bootstrap_obs_u8; // [K, B]
  std::vector<uint8_t> final_obs_u8;     // [D, B]
  std::vector<float> initial_states;     // [K, S] the recurrent policy's state before step 0 (zeros at an episode start)
  // Increasing flat t * K + k of the steps that ended an episode dropped for a non-finite env
  // output (drop_nonfinite_episodes): each is truncated, with reward 0 and its final_obs the last
  // finite observation. Not a real step: episodes, returns and replay leave it out.
  std::vector<int32_t> dropped_index;

  bool discrete() const { return action_size == 0; }
  int64_t num_transitions() const { return int64_t{num_steps} * num_envs; }

  // Sizes every column for T steps of K envs (initial_states for the state_size already set) (log_probs/values only when with_policy_outputs),
  // observations of obs_dim floats and obs_bytes bytes, actions of action_dim floats (Box) or, when
  // action_dim is 0, of `components` indices.
  void resize(int32_t steps, int32_t envs, int64_t obs_dim, int64_t action_dim, bool with_policy_outputs,
              int64_t obs_bytes = 0, int64_t components = 1) {
    num_steps = steps;
    num_envs = envs;
    obs_size = obs_dim;
    action_size = action_dim;
    obs_byte_size = obs_bytes;
    action_components = action_dim == 0 ? components : 1;
    const auto n = static_cast<size_t>(num_transitions());
    obs.resize(n * obs_dim);
    obs_u8.resize(n * static_cast<size_t>(obs_bytes));
    bootstrap_obs_u8.resize(static_cast<size_t>(envs) * static_cast<size_t>(obs_bytes));
    final_obs_u8.clear();
    action_indices.resize(action_dim == 0 ? n * static_cast<size_t>(action_components) : 0);
    action_values.resize(n * action_dim);
    rewards.resize(n);
    terminated.resize(n);
    truncated.resize(n);
    log_probs.resize(with_policy_outputs ? n : 0);
    values.resize(with_policy_outputs ? n : 0);
    bootstrap_obs.resize(static_cast<size_t>(envs) * obs_dim);
    final_obs_index.clear();
    final_obs.clear();
    dropped_index.clear();
    initial_states.resize(static_cast<size_t>(envs) * static_cast<size_t>(state_size));
  }

  // Throws std::invalid_argument naming the first column whose size disagrees with T, K, O, A.
  void validate() const {
    const auto n = static_cast<size_t>(num_transitions());
    const auto o = static_cast<size_t>(obs_size);
    const auto b = static_cast<size_t>(obs_byte_size);
    if (num_steps < 0 || num_envs < 0 || obs_size < 0 || action_size < 0 || obs_byte_size < 0 || action_components < 1 ||
        state_size < 0) {
      throw std::invalid_argument("SampleBatch has a negative dimension");
    }
    check("obs", obs.size(), n * o);
    check("obs_u8", obs_u8.size(), n * b);
    check("bootstrap_obs_u8", bootstrap_obs_u8.size(), static_cast<size_t>(num_envs) * b);
    check("final_obs_u8", final_obs_u8.size(), final_obs_index.size() * b);
    check("action_indices", action_indices.size(), discrete() ? n * static_cast<size_t>(action_components) : 0);
    check("action_values", action_values.size(), n * static_cast<size_t>(action_size));
    check("rewards", rewards.size(), n);
    check("terminated", terminated.size(), n);
    check("truncated", truncated.size(), n);
    if (!log_probs.empty()) check("log_probs", log_probs.size(), n);
    if (!values.empty()) check("values", values.size(), n);
    check("bootstrap_obs", bootstrap_obs.size(), static_cast<size_t>(num_envs) * o);
    check("final_obs", final_obs.size(), final_obs_index.size() * o);
    check("initial_states", initial_states.size(), static_cast<size_t>(num_envs) * static_cast<size_t>(state_size));
    for (int32_t index : final_obs_index) {
      if (index < 0 || static_cast<size_t>(index) >= n) throw std::invalid_argument("SampleBatch final_obs_index out of range");
    }
    for (size_t j = 0; j < dropped_index.size(); ++j) {
      const int32_t index = dropped_index[j];
      if (index < 0 || static_cast<size_t>(index) >= n || (j > 0 && index <= dropped_index[j - 1]) ||
          !truncated[static_cast<size_t>(index)]) {
        throw std::invalid_argument("SampleBatch dropped_index " + std::to_string(index) +
                                    " is not an increasing index of a truncated step");
      }
    }
  }

  // Whether each step is one of dropped_index's ([T, K] of 0 and 1).
  std::vector<uint8_t> dropped_rows() const {
    std::vector<uint8_t> rows(static_cast<size_t>(num_transitions()), 0);
    for (int32_t index : dropped_index) rows[static_cast<size_t>(index)] = 1;
    return rows;
  }

 private:
  static void check(const char* column, size_t got, size_t expected) {
    if (got != expected) {
      throw std::invalid_argument(std::string("SampleBatch column ") + column + " holds " + std::to_string(got) +
                                  " values, expected " + std::to_string(expected));
    }
  }
};

}  // namespace rlx
