// WorkerSetup: what the learner tells a rollout worker in its Welcome (env, fragment length,
// seeds, policy kind and network shape), as JSON over the wire.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "envs/vector_env.h"
#include "models/model_config.h"

namespace rlx {

// How a worker chooses actions.
enum class RolloutPolicyKind { kActorCritic, kEpsilonGreedyQ, kSquashedGaussian };

// The longest env_config a worker accepts in a Welcome, in bytes.
constexpr size_t kMaxEnvConfigBytes = 64 * 1024;

// Everything a worker needs to build its VectorEnv, policy and collector.
struct WorkerSetup {
  std::string env_id;
  std::string env_config = "{}";  // a Python env's constructor arguments: a JSON object's text
  int num_envs = 8;            // K, unless the worker was started with its own --envs
  int fragment_length = 64;    // T
  uint64_t seed = 0;           // worker i seeds its envs with seed + 1'000'003 * i
  int worker_index = 0;        // assigned by the learner, in join order
  RolloutPolicyKind policy_kind = RolloutPolicyKind::kActorCritic;
  std::vector<int64_t> hidden_sizes{64, 64};
  std::string activation = "tanh";
  bool shared_trunk = false;
  double log_std_init = 0.0;
  bool dueling = false;
  double epsilon = 0.0;        // kEpsilonGreedyQ, kSquashedGaussian: this worker's chance of a uniform random action
  bool apex_epsilons = false;  // kEpsilonGreedyQ: use Ape-X's fixed epsilon of worker_index of num_workers instead
  int num_workers = 1;
  bool deterministic = false;  // kActorCritic, kSquashedGaussian: argmax / mean (tanh of the mean) actions
  bool behaviour_values = true;  // kActorCritic: fragments carry V(s) (false when the learner recomputes it)
  bool drop_nonfinite_episodes = false;  // end episodes at a non-finite env step (counted) instead of failing
  int weight_delay = 0;        // act with the weights received this many publications before the newest (ablations)

  // The seed of this worker's envs and action sampling.
  uint64_t worker_seed() const { return seed + 1'000'003ULL * static_cast<uint64_t>(worker_index); }
  // The exploration rate this worker starts with (Ape-X's per-worker one when apex_epsilons).
  double initial_epsilon() const;
  // What the worker's VectorEnv does with a non-finite env output.
  NonFinitePolicy non_finite_policy() const {
    return drop_nonfinite_episodes ? NonFinitePolicy::kDropEpisode : NonFinitePolicy::kError;
  }
  // The network config for an env with this spec.
  PolicyModelConfig model_config(const EnvSpec& spec) const;

  // JSON text for the Welcome message.
  std::string to_json() const;
  // Parses and validates Welcome JSON; throws std::invalid_argument naming the key and what
  // was expected (the text comes from the network).
  static WorkerSetup from_json(const std::string& text);
};

}  // namespace rlx
