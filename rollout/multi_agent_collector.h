// MultiAgentCollector: steps K multi-agent envs with one RolloutPolicy per policy (one batched
// inference call per policy and step) and cuts each agent's stream into fragments of its policy.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "core/rng.h"
#include "core/sample_batch.h"
#include "envs/multi_agent/multi_agent_env.h"
#include "models/rollout_policy.h"
#include "rollout/policy_map.h"

namespace rlx {

// One finished episode of a multi-agent env.
struct MultiAgentEpisode {
  int32_t length = 0;                // env steps
  double total_return = 0.0;         // summed over the agents (RLlib's episode reward)
  std::vector<double> agent_returns; // per agent of the spec (0 for one that never entered)
  std::vector<int> agent_policies;   // per agent: the policy that drove it
  std::vector<bool> agent_entered;   // per agent: it was observed in this episode
};

// A lane is one agent of one env as one policy drives it: its transitions, in order, form the
// columns of that policy's fragments. An agent's transition runs from its action to its next
// observation (or its end); the rewards it earns in between, from any env step, add up in it.
// Each fragment holds one lane, T transitions ([T, 1]); its worker_id is the lane's number, so a
// learner keeping per-column state (the reward scaler's returns) sees each lane as one stream.
// Only the policies that train record lanes; frozen ones only act.
class MultiAgentCollector {
 public:
  // Takes the envs, borrows the map and the policies (policies[p] drives map's policy p; both must
  // outlive the collector) and resets env e with seed + e; the mapping's draws come from a
  // generator seeded with `seed` too. Throws std::invalid_argument when T < 1, a policy is missing
  // or does not fit its agents' spaces.
  MultiAgentCollector(std::vector<std::unique_ptr<MultiAgentEnv>> envs, const PolicyMap& map,
                      std::vector<RolloutPolicy*> policies, int fragment_length, uint64_t seed);

  // Policy p acts with `policy` from the next step on (borrowed; it must fit the agents' spaces as
  // the one it replaces did); the recurrent states of the agents it drives start from zeros.
  void set_policy(int policy, RolloutPolicy* acting);
  // Steps every env once: each acting agent's action comes from its policy. An env whose episode
  // ended is reset (its generator's stream goes on) and its agents mapped anew.
  void step();
  // The full fragments of policy p since the last call, in the order they filled; clears them.
  std::vector<SampleBatch> take_fragments(int policy);
  // Transitions in policy p's full fragments, not yet taken.
  int64_t ready_transitions(int policy) const { return ready_transitions_.at(static_cast<size_t>(policy)); }
  // Episodes finished since the last call; clears the list.
  std::vector<MultiAgentEpisode> take_finished_episodes();

  int num_envs() const { return static_cast<int>(envs_.size()); }
  int fragment_length() const { return fragment_length_; }
  const PolicyMap& policy_map() const { return map_; }
  // Env steps so far (K per step()), and agent steps (one per acting agent), over all and per policy.
  int64_t env_steps() const { return env_steps_; }
  int64_t agent_steps() const { return agent_steps_; }
  int64_t agent_steps(int policy) const { return policy_agent_steps_.at(static_cast<size_t>(policy)); }

 private:
  struct Lane {
    SampleBatch column;   // [T, 1]: rows below `filled` are closed transitions, row `filled` the open one
    int filled = 0;
    bool open = false;    // an action awaits its outcome
  };
  // What each policy's batched act() reads and writes this step.
  struct PolicyStep {
    std::vector<int> envs, agents;   // the rows: which env and agent each is
    std::vector<float> obs, states, action_values, clipped, log_probs, values;
    std::vector<uint8_t> obs_bytes;
    std::vector<int64_t> action_indices, env_indices;  // env_indices: indices + the space's starts
  };

  void start_episode(int env, std::optional<uint64_t> seed);
  void act(int policy, PolicyStep& rows);
  void record_action(int env, int agent, int policy, const PolicyStep& rows, size_t row);
  void record_outcomes(int env);
  // Closes the lane's open transition; when that fills the column, queues it with `next` as its
  // bootstrap observation and starts the next column.
  void close(Lane& lane, int policy, bool terminated, bool truncated, const ObsRow& next, int64_t lane_id);
  Lane* lane(int env, int agent, int policy);
  size_t lane_index(int env, int agent, int policy) const;

  std::vector<std::unique_ptr<MultiAgentEnv>> envs_;
  const PolicyMap& map_;
  std::vector<RolloutPolicy*> policies_;
  int fragment_length_;
  Rng mapping_rng_;
  std::vector<std::vector<int>> policy_of_;       // [env][agent] this episode
  std::vector<std::vector<float>> agent_states_;  // [env * agents + agent]: the recurrent state
  std::vector<std::vector<double>> returns_;      // [env][agent] this episode
  std::vector<std::unique_ptr<Lane>> lanes_;      // by lane_index; null for frozen policies
  std::vector<std::vector<SampleBatch>> ready_;   // per policy
  std::vector<int64_t> ready_transitions_;
  std::vector<PolicyStep> steps_;                 // per policy
  std::vector<std::vector<int64_t>> action_starts_;  // per policy: each index's smallest value
  std::vector<MultiAgentEpisode> finished_;
  int64_t env_steps_ = 0, agent_steps_ = 0;
  std::vector<int64_t> policy_agent_steps_;
};

}  // namespace rlx
