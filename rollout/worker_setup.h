// WorkerSetup: what the learner tells a rollout worker in its Welcome (env, fragment length,
// seeds, the model spec and how to act with it), as JSON over the wire.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "envs/vector_env.h"
#include "models/model_spec.h"

namespace rlx {

// The longest env_config a worker accepts in a Welcome, in bytes.
constexpr size_t kMaxEnvConfigBytes = 64 * 1024;

struct MultiAgentWorkerSetup;

// Everything a worker needs to build its VectorEnv, policy and collector.
struct WorkerSetup {
  std::string env_id;
  std::string env_config = "{}";  // a Python env's constructor arguments: a JSON object's text
  int num_envs = 8;            // K, unless the worker was started with its own --envs
  int fragment_length = 64;    // T
  uint64_t seed = 0;           // worker i seeds its envs with seed + 1'000'003 * i
  int worker_index = 0;        // assigned by the learner, in join order
  ModelSpec model;             // the learner's networks (its kind says how the worker acts)
  double epsilon = 0.0;        // kQNetwork, kSquashedGaussian: this worker's chance of a uniform random action
  bool apex_epsilons = false;  // kQNetwork: use Ape-X's fixed epsilon of worker_index of num_workers instead
  int num_workers = 1;
  bool deterministic = false;  // kActorCritic, kSquashedGaussian: argmax / mean (tanh of the mean) actions
  bool behaviour_values = true;  // kActorCritic: fragments carry V(s) (false when the learner recomputes it)
  bool drop_nonfinite_episodes = false;  // end episodes at a non-finite env step (counted) instead of failing
  int weight_delay = 0;        // act with the weights received this many publications before the newest (ablations)
  int frame_stack = 1;         // observations stacked over this many steps (envs/frame_stack.h); 1 = off
  // A multi-agent env (env_id names one): its policies and how agents map to them; null: one agent.
  std::shared_ptr<const MultiAgentWorkerSetup> multi_agent;

  // The seed of this worker's envs and action sampling.
  uint64_t worker_seed() const { return seed + 1'000'003ULL * static_cast<uint64_t>(worker_index); }
  // The exploration rate this worker starts with (Ape-X's per-worker one when apex_epsilons).
  double initial_epsilon() const;
  // What the worker's VectorEnv does with a non-finite env output.
  NonFinitePolicy non_finite_policy() const {
    return drop_nonfinite_episodes ? NonFinitePolicy::kDropEpisode : NonFinitePolicy::kError;
  }
  // The spec of the env the worker steps: env_id's, frame-stacked; throws like frame_stacked_spec.
  EnvSpec env_spec() const;
  // The factory of that env: env_id's, frame-stacked.
  EnvFactory env_factory() const;
  // The model, checked against the worker's own env: throws std::invalid_argument when the
  // env's observation size or action space differ from the model's.
  const ModelSpec& model_for(const EnvSpec& env) const;

  // JSON text for the Welcome message.
  std::string to_json() const;
  // Parses and validates Welcome JSON; throws std::invalid_argument naming the key and what
  // was expected (the text comes from the network).
  static WorkerSetup from_json(const std::string& text);
};

// A multi-agent run's part of a worker's setup.
struct MultiAgentWorkerSetup {
  // The experiment's multi-agent keys as MultiAgentSetup::to_json writes them (policies,
  // policy_mapping, policies_to_train, self_play).
  nlohmann::json setup = nlohmann::json::object();
  // By policy index (PolicyMap's order): how the policy acts (its model, seed, exploration);
  // nullopt for a scripted policy, whose rule `setup` names.
  std::vector<std::optional<WorkerSetup>> policies;
};

// The most policies a worker setup may name.
constexpr size_t kMaxWorkerPolicies = 256;

}  // namespace rlx
