// Helpers for the native learner's tests: fragments collected on CartPole by a worker-side
// policy, synthetic fragments for models no registered env fits (e.g. Box(2) actions), and
// tolerant comparisons with the LibTorch learner.
#pragma once

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "core/rng.h"
#include "core/sample_batch.h"
#include "envs/registry.h"
#include "envs/vector_env.h"
#include "models/action_sampling.h"
#include "models/network_kernel.h"
#include "models/weights.h"
#include "native/ppo_update_metrics.h"
#include "rollout/fragment_collector.h"
#include "models/rollout_policy.h"

namespace rlx_native_test {

inline rlx::ModelSpec model_config_for(const std::string& env_id, std::vector<int64_t> hidden) {
  rlx::ModelSpec config = rlx::ModelSpec::for_env(rlx::global_env_registry().spec(env_id));
  config.hidden_sizes = std::move(hidden);
  return config;
}

// K envs of env_id sampled in fragments of T steps by a policy synced to given weights.
struct Sampler {
  Sampler(const std::string& env_id, const rlx::ModelSpec& config, int k, int t, uint64_t seed)
      : envs(std::make_unique<rlx::VectorEnv>(rlx::global_env_registry().factory(env_id), k)),
        policy(config, seed),
        collector(*envs, policy, t, seed) {}

  void sync(const rlx::Weights& w) {
    policy.load_weights(w.params.data(), w.params.size(), w.policy_version);
    if (!w.obs_mean.empty()) {
      policy.set_obs_normalizer(std::vector<float>(w.obs_mean.begin(), w.obs_mean.end()),
                                std::vector<float>(w.obs_var.begin(), w.obs_var.end()), w.obs_count);
    }
  }

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

// A fragment of T steps from K envs with random observations and rewards, actions and
// behaviour log-probs from the policy `params` (raw observations), some terminations and some
// truncations (with final observations).
inline rlx::SampleBatch synthetic_fragment(const rlx::ActorCriticLayout& layout, const std::vector<float>& params,
                                           int t_steps, int k_envs, uint64_t seed) {
  rlx::Rng rng(seed);
  rlx::ActorCriticKernel kernel(layout);
  kernel.load(params.data());
  const int64_t o = layout.obs_size, p = layout.policy_outputs;
  rlx::SampleBatch batch;
  batch.resize(t_steps, k_envs, o, layout.discrete ? 0 : p, true);
  for (float& x : batch.obs) x = static_cast<float>(rng.normal());
  for (float& x : batch.bootstrap_obs) x = static_cast<float>(rng.normal());
  const int64_t n = batch.num_transitions();
  std::vector<float> out(static_cast<size_t>(n * p)), values(static_cast<size_t>(n));
  kernel.forward(batch.obs.data(), n, out.data(), values.data());
  for (int64_t i = 0; i < n; ++i) {
    const auto s = static_cast<size_t>(i);
    if (layout.discrete) {
      batch.action_indices[s] = rlx::sample_categorical(out.data() + i * p, p, rng, false, &batch.log_probs[s]);
    } else {
      batch.log_probs[s] = rlx::sample_diagonal_gaussian(out.data() + i * p, kernel.std().data(), kernel.log_std().data(), p,
                                                         rng, false, batch.action_values.data() + i * p);
    }
    batch.values[s] = values[s];
    batch.rewards[s] = static_cast<float>(rng.normal(0.5, 1.0));
    const double u = rng.uniform();
    if (u < 0.03) {
      batch.terminated[s] = 1;
    } else if (u < 0.06) {
      batch.truncated[s] = 1;
      batch.final_obs_index.push_back(static_cast<int32_t>(i));
      for (int64_t j = 0; j < o; ++j) batch.final_obs.push_back(static_cast<float>(rng.normal()));
    }
  }
  return batch;
}

// |a - b| <= tolerance * (1 + |b|) for every element; reports the worst one.
inline void check_close(const std::vector<float>& a, const std::vector<float>& b, double tolerance, const std::string& what) {
  REQUIRE(a.size() == b.size());
  double worst = 0.0;
  size_t worst_index = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    const double excess = std::fabs(static_cast<double>(a[i]) - b[i]) / (1.0 + std::fabs(static_cast<double>(b[i])));
    if (!(excess <= worst)) {
      worst = excess;
      worst_index = i;
    }
  }
  INFO(what << ": worst element " << worst_index << " of " << a.size() << ": " << a[worst_index] << " vs " << b[worst_index]);
  CHECK(worst <= tolerance);
}

inline bool close(double a, double b, double tolerance) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  return std::fabs(a - b) <= tolerance * (1.0 + std::fabs(b));
}

// Every metric of PpoUpdateMetrics within tolerance (counts exactly).
inline void check_metrics(const rlx::PpoUpdateMetrics& a, const rlx::PpoUpdateMetrics& b, double tolerance) {
  INFO("native: policy_loss " << a.policy_loss << " vf_loss " << a.vf_loss << " entropy " << a.entropy << " approx_kl "
                              << a.approx_kl << " clip_fraction " << a.clip_fraction << " explained_variance "
                              << a.explained_variance << " lr " << a.lr << " clip_param " << a.clip_param << " grad_norm "
                              << a.grad_norm);
  INFO("torch:  policy_loss " << b.policy_loss << " vf_loss " << b.vf_loss << " entropy " << b.entropy << " approx_kl "
                              << b.approx_kl << " clip_fraction " << b.clip_fraction << " explained_variance "
                              << b.explained_variance << " lr " << b.lr << " clip_param " << b.clip_param << " grad_norm "
                              << b.grad_norm);
  CHECK(close(a.policy_loss, b.policy_loss, tolerance));
  CHECK(close(a.vf_loss, b.vf_loss, tolerance));
  CHECK(close(a.entropy, b.entropy, tolerance));
  CHECK(close(a.approx_kl, b.approx_kl, tolerance));
  CHECK(close(a.clip_fraction, b.clip_fraction, tolerance));
  CHECK(close(a.explained_variance, b.explained_variance, tolerance));
  CHECK(a.lr == b.lr);
  CHECK(a.clip_param == b.clip_param);
  CHECK(close(a.grad_norm, b.grad_norm, tolerance));
  CHECK(a.num_samples == b.num_samples);
  CHECK(a.num_minibatch_steps == b.num_minibatch_steps);
}

}  // namespace rlx_native_test
