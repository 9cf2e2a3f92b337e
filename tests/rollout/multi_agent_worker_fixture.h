// The multi-agent Welcome the worker tests use, built as the learner builds it
// (MultiAgentAlgorithm::make_remote_sampler): MultiAgentCartPole-v0's four agents under three
// policies, "frozen" (index 0, agent_2), "random_player" (index 1, scripted, agent_3) and
// "trained" (index 2, agent_0 and agent_1, the only one that learns).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/multi_agent_config.h"
#include "envs/registry.h"
#include "models/rollout_policy.h"
#include "rollout/worker_setup.h"
#include "transport/messages.h"

namespace rlx::test {

constexpr const char* kMultiAgentCartPole = "MultiAgentCartPole-v0";
constexpr int32_t kFrozenPolicy = 0, kScriptedPolicy = 1, kTrainedPolicy = 2;

// The model of a CartPole agent (4 observations, 2 actions).
inline ModelSpec cartpole_agent_model() {
  ModelSpec model = ModelSpec::for_env(global_env_registry().multi_agent_spec(kMultiAgentCartPole).agent_env_spec(0));
  model.hidden_sizes = {16};
  return model;
}

// The experiment's multi-agent keys.
inline MultiAgentSetup three_policy_keys() {
  MultiAgentSetup keys;
  keys.policies = {{"frozen", nlohmann::json::object()},
                   {"random_player", {{"scripted", "random"}}},
                   {"trained", nlohmann::json::object()}};
  keys.policy_mapping = {{"agent_0", {"trained"}}, {"agent_1", {"trained"}}, {"agent_2", {"frozen"}},
                         {"agent_3", {"random_player"}}};
  keys.policies_to_train = {"trained"};
  return keys;
}

// One model policy's part, as a policy's algorithm gives its worker setup.
inline WorkerSetup policy_part(int envs, int fragment_length) {
  WorkerSetup setup;
  setup.env_id = kMultiAgentCartPole;
  setup.num_envs = envs;
  setup.fragment_length = fragment_length;
  setup.seed = 3;
  setup.model = cartpole_agent_model();
  return setup;
}

// The Welcome's setup: the first model policy's setup as the base, with the multi-agent part.
inline WorkerSetup multi_agent_setup(int envs = 2, int fragment_length = 8) {
  WorkerSetup setup = policy_part(envs, fragment_length);
  setup.worker_index = 1;
  setup.num_workers = 2;
  auto multi = std::make_shared<MultiAgentWorkerSetup>();
  multi->setup = three_policy_keys().to_json();
  multi->policies = {policy_part(envs, fragment_length), std::nullopt, policy_part(envs, fragment_length)};
  setup.multi_agent = multi;
  return setup;
}

// Weights of a fresh CartPole agent model for policy `policy` (-1: none named), stamped `version`.
inline std::shared_ptr<Weights> agent_weights(int32_t policy, uint64_t version) {
  ActorCriticPolicy model(cartpole_agent_model(), 11);
  auto weights = std::make_shared<Weights>();
  weights->policy_version = version;
  weights->params = model.weights();
  weights->policy_index = policy;
  return weights;
}

}  // namespace rlx::test
