// Helpers for the PPO learner tests: CartPole configs and fragments collected with a policy
// that carries the learner's current weights.
#pragma once

#include "tests/learner/torch_catch.h"

#include <cstring>
#include <memory>
#include <vector>

#include "core/sample_batch.h"
#include "envs/registry.h"
#include "envs/vector_env.h"
#include "learner/ppo_learner.h"
#include "rollout/fragment_collector.h"
#include "models/rollout_policy.h"

namespace rlx_test {

inline rlx::ModelSpec model_config_for(const std::string& env_id, std::vector<int64_t> hidden = {64, 64}) {
  rlx::ModelSpec config = rlx::ModelSpec::for_env(rlx::global_env_registry().spec(env_id));
  config.hidden_sizes = std::move(hidden);
  return config;
}

// Installs a learner's weights (and observation statistics) into a worker-side policy.
inline void sync_policy(const rlx::PpoLearner& learner, rlx::RolloutPolicy& policy, uint64_t version) {
  const std::shared_ptr<rlx::Weights> w = learner.weights(version);
  policy.load_weights(w->params.data(), w->params.size(), w->policy_version);
  if (!w->obs_mean.empty()) {
    policy.set_obs_normalizer(std::vector<float>(w->obs_mean.begin(), w->obs_mean.end()),
                              std::vector<float>(w->obs_var.begin(), w->obs_var.end()), w->obs_count);
  }
}

// A sampler on env_id: K envs, fragments of T steps, policy synced from a learner on demand.
struct Sampler {
  Sampler(const std::string& env_id, const rlx::ModelSpec& config, int k, int t, uint64_t seed)
      : envs(std::make_unique<rlx::VectorEnv>(rlx::global_env_registry().factory(env_id), k)),
        policy(config, seed),
        collector(*envs, policy, t, seed) {}

  std::vector<rlx::SampleBatch> collect(int fragments, uint64_t worker_id = 0) {
    std::vector<rlx::SampleBatch> out(static_cast<size_t>(fragments));
    for (auto& batch : out) {
      collector.collect(batch);
      batch.worker_id = worker_id;
    }
    return out;
  }

  std::unique_ptr<rlx::VectorEnv> envs;
  rlx::ActorCriticPolicy policy;
  rlx::FragmentCollector collector;
};

// Bitwise equality of two learners' parameters.
inline bool same_parameters(const rlx::PpoLearner& a, const rlx::PpoLearner& b) {
  const auto pa = a.weights(0)->params, pb = b.weights(0)->params;
  return pa.size() == pb.size() && std::memcmp(pa.data(), pb.data(), pa.size() * sizeof(float)) == 0;
}

}  // namespace rlx_test
