#include <catch2/catch.hpp>

#include <algorithm>
#include <memory>
#include <vector>

#include "core/sample_batch.h"
#include "envs/registry.h"
#include "envs/vector_env.h"
#include "rollout/fragment_collector.h"
#include "models/rollout_policy.h"

namespace {

// Box(-1, 1, (2,)) actions; the observation is the action the env received plus the step
// count, so the test sees exactly what the collector sent. Truncated after 5 steps.
class EchoEnv : public rlx::Env {
 public:
  EchoEnv() : rlx::Env(make_spec()) {}
  static rlx::EnvSpec make_spec() {
    rlx::EnvSpec spec;
    spec.id = "Echo-v0";
    spec.observation_space = rlx::Space::box({3}, -rlx::kInf, rlx::kInf);
    spec.action_space = rlx::Space::box({2}, -1.0f, 1.0f);
    spec.max_episode_steps = 5;
    return spec;
  }

 protected:
  void reset_episode(rlx::Rng&, rlx::ObsSpan obs) override { std::fill(obs.data(), obs.data() + 3, 0.0f); }
  rlx::StepResult step_episode(const rlx::Action& action, rlx::ObsSpan obs) override {
    obs[0] = action.values[0];
    obs[1] = action.values[1];
    obs[2] = static_cast<float>(elapsed_steps() + 1);
    return {1.0, false, false};
  }
};

rlx::EnvFactory builtin(const std::string& id) { return rlx::global_env_registry().factory(id); }

rlx::ModelSpec config_for(const rlx::EnvFactory& factory, double log_std_init = 0.0) {
  rlx::ModelSpec config = rlx::ModelSpec::for_env(factory()->spec());
  config.hidden_sizes = {16, 16};
  config.log_std_init = log_std_init;
  return config;
}

template <typename T>
std::vector<T> rows(const std::vector<T>& column, size_t first, size_t count) {
  return std::vector<T>(column.begin() + static_cast<long>(first), column.begin() + static_cast<long>(first + count));
}

// Runs a second VectorEnv with the same seed on the recorded actions (clipped to the action
// space by hand) and checks every recorded column against what it returns.
void check_replay(const rlx::EnvFactory& factory, int k, uint64_t seed, const std::vector<rlx::SampleBatch>& fragments) {
  rlx::VectorEnv env(factory, k);
  const auto o = static_cast<size_t>(env.obs_size());
  const rlx::Space& space = env.spec().action_space;
  std::vector<float> obs(k * o), final_obs(k * o), rewards(k), clipped(k * space.size());
  std::vector<uint8_t> term(k), trunc(k);
  env.reset(seed, obs.data());
  for (const rlx::SampleBatch& batch : fragments) {
    REQUIRE_NOTHROW(batch.validate());
    size_t done = 0;
    for (int t = 0; t < batch.num_steps; ++t) {
      const size_t row = static_cast<size_t>(t) * k;
      REQUIRE(rows(batch.obs, row * o, k * o) == obs);
      rlx::ActionBatch actions;
      if (space.is_discrete()) {
        actions.indices = batch.action_indices.data() + row;
      } else {
        const size_t a = static_cast<size_t>(space.size());
        for (size_t i = 0; i < k * a; ++i) {
          clipped[i] = std::clamp(batch.action_values[row * a + i], space.low[i % a], space.high[i % a]);
        }
        actions.values = clipped.data();
      }
      env.step(actions, {obs.data(), rewards.data(), term.data(), trunc.data(), final_obs.data()});
      REQUIRE(rows(batch.rewards, row, k) == rewards);
      REQUIRE(rows(batch.terminated, row, k) == term);
      REQUIRE(rows(batch.truncated, row, k) == trunc);
      for (int i = 0; i < k; ++i) {
        if (!(term[i] | trunc[i])) continue;
        REQUIRE(done < batch.final_obs_index.size());
        CHECK(batch.final_obs_index[done] == static_cast<int32_t>(row + i));
        CHECK(rows(batch.final_obs, done * o, o) == rows(final_obs, i * o, o));
        ++done;
      }
    }
    CHECK(done == batch.final_obs_index.size());
    CHECK(batch.bootstrap_obs == obs);
  }
}

std::vector<rlx::SampleBatch> collect(rlx::FragmentCollector& collector, int count) {
  std::vector<rlx::SampleBatch> fragments(static_cast<size_t>(count));
  for (auto& batch : fragments) collector.collect(batch);
  return fragments;
}

bool same(const rlx::SampleBatch& a, const rlx::SampleBatch& b) {
  return a.obs == b.obs && a.action_indices == b.action_indices && a.action_values == b.action_values &&
         a.rewards == b.rewards && a.terminated == b.terminated && a.truncated == b.truncated &&
         a.log_probs == b.log_probs && a.values == b.values && a.bootstrap_obs == b.bootstrap_obs &&
         a.final_obs_index == b.final_obs_index && a.final_obs == b.final_obs;
}

}  // namespace

TEST_CASE("Collector on CartPole-v1: shapes, terminations, replay, continuity", "[rollout][collector]") {
  const int k = 4, t = 64;
  const auto factory = builtin("CartPole-v1");
  rlx::ActorCriticPolicy policy(config_for(factory), 1);
  const std::vector<float> w = policy.weights();
  policy.load_weights(w.data(), w.size(), 12);
  rlx::VectorEnv envs(factory, k);
  rlx::FragmentCollector collector(envs, policy, t, 100);
  const auto fragments = collect(collector, 3);

  const rlx::SampleBatch& first = fragments.front();
  CHECK(first.num_steps == t);
  CHECK(first.num_envs == k);
  CHECK(first.obs_size == 4);
  CHECK(first.action_size == 0);
  CHECK(first.discrete());
  CHECK(first.policy_version == 12);
  CHECK(first.obs.size() == size_t{t * k * 4});
  CHECK(first.action_indices.size() == size_t{t * k});
  CHECK(first.action_values.empty());
  CHECK(first.log_probs.size() == size_t{t * k});
  CHECK(first.values.size() == size_t{t * k});
  CHECK(first.bootstrap_obs.size() == size_t{k * 4});
  CHECK(collector.env_steps() == 3 * t * k);

  size_t terminations = 0;
  for (const auto& batch : fragments) {
    terminations += static_cast<size_t>(std::count(batch.terminated.begin(), batch.terminated.end(), 1));
    CHECK(std::count(batch.truncated.begin(), batch.truncated.end(), 1) == 0);  // random play never lasts 500 steps
    for (float lp : batch.log_probs) CHECK(lp <= 0.0f);
    for (int64_t a : batch.action_indices) CHECK((a == 0 || a == 1));
  }
  CHECK(terminations > 0);
  for (size_t n = 0; n + 1 < fragments.size(); ++n) {
    CHECK(fragments[n].bootstrap_obs == rows(fragments[n + 1].obs, 0, k * 4));
  }
  check_replay(factory, k, 100, fragments);
}

TEST_CASE("Collector on Pendulum-v1: Box actions stored unclipped, truncation at 200", "[rollout][collector]") {
  const int k = 3, t = 50;
  const auto factory = builtin("Pendulum-v1");
  rlx::ActorCriticPolicy policy(config_for(factory, 1.0), 2);  // std e: many samples beyond +-2
  rlx::FragmentCollector collector(std::make_unique<rlx::VectorEnv>(factory, k), policy, t, 7);
  const auto fragments = collect(collector, 5);

  const rlx::SampleBatch& first = fragments.front();
  CHECK(first.obs_size == 3);
  CHECK(first.action_size == 1);
  CHECK(first.action_indices.empty());
  CHECK(first.action_values.size() == size_t{t * k});
  bool beyond_bounds = false;
  for (const auto& batch : fragments) {
    for (float a : batch.action_values) beyond_bounds = beyond_bounds || std::abs(a) > 2.0f;
  }
  CHECK(beyond_bounds);

  // Pendulum never terminates; every env is truncated at its 200th step: fragment 3, t = 49.
  for (size_t f = 0; f < fragments.size(); ++f) {
    const auto& batch = fragments[f];
    CHECK(std::count(batch.terminated.begin(), batch.terminated.end(), 1) == 0);
    for (int step = 0; step < t; ++step) {
      for (int i = 0; i < k; ++i) {
        const bool expected = f * t + step == 199;
        CHECK(batch.truncated[static_cast<size_t>(step * k + i)] == expected);
      }
    }
  }
  CHECK(fragments[3].final_obs_index == std::vector<int32_t>{49 * k, 49 * k + 1, 49 * k + 2});
  check_replay(factory, k, 7, fragments);
}

TEST_CASE("The env receives clipped actions while the batch keeps the samples", "[rollout][collector]") {
  const int k = 2, t = 12;
  const rlx::EnvFactory factory = [] { return std::make_unique<EchoEnv>(); };
  rlx::ActorCriticPolicy policy(config_for(factory, 0.7), 3);
  rlx::VectorEnv envs(factory, k);
  rlx::FragmentCollector collector(envs, policy, t, 0);
  rlx::SampleBatch batch;
  collector.collect(batch);
  int clipped = 0;
  for (int step = 0; step < t; ++step) {
    for (int i = 0; i < k; ++i) {
      const size_t row = static_cast<size_t>(step * k + i);
      const auto index_it = std::find(batch.final_obs_index.begin(), batch.final_obs_index.end(), static_cast<int32_t>(row));
      const bool ended = index_it != batch.final_obs_index.end();
      CHECK(batch.truncated[row] == ended);
      // What the env saw: the next row's obs, or the final obs where the episode ended.
      const float* seen = ended ? batch.final_obs.data() + (index_it - batch.final_obs_index.begin()) * 3
                          : step + 1 < t ? batch.obs.data() + (row + k) * 3
                                         : batch.bootstrap_obs.data() + i * 3;
      for (int j = 0; j < 2; ++j) {
        const float sampled = batch.action_values[row * 2 + j];
        CHECK(seen[j] == std::clamp(sampled, -1.0f, 1.0f));
        clipped += std::abs(sampled) > 1.0f;
      }
    }
  }
  CHECK(clipped > 0);
  CHECK(batch.final_obs_index.size() == size_t{2 * k});  // truncated at steps 5 and 10
  check_replay(factory, k, 0, {batch});
}

TEST_CASE("Same seeds give identical fragments", "[rollout][collector]") {
  for (const char* id : {"CartPole-v1", "Pendulum-v1"}) {
    CAPTURE(id);
    const auto factory = builtin(id);
    const auto config = config_for(factory);
    rlx::ActorCriticPolicy a(config, 5), b(config, 5), c(config, 6);
    const std::vector<float> w = a.weights();
    b.load_weights(w.data(), w.size(), 0);
    c.load_weights(w.data(), w.size(), 0);
    rlx::VectorEnv envs_a(factory, 3), envs_b(factory, 3), envs_c(factory, 3);
    rlx::FragmentCollector ca(envs_a, a, 40, 11), cb(envs_b, b, 40, 11), cc(envs_c, c, 40, 11);
    for (int n = 0; n < 3; ++n) {
      rlx::SampleBatch x, y, z;
      ca.collect(x);
      cb.collect(y);
      cc.collect(z);
      CHECK(same(x, y));
      CHECK_FALSE(same(x, z));
    }
  }
}

TEST_CASE("A policy without values leaves V(s) out and samples the same fragments", "[rollout][collector]") {
  for (const char* id : {"CartPole-v1", "Pendulum-v1"}) {
    CAPTURE(id);
    const auto factory = builtin(id);
    const auto config = config_for(factory);
    rlx::ActorCriticPolicy with(config, 5), without(config, 5, /*deterministic=*/false, /*values=*/false);
    CHECK(with.has_values());
    CHECK_FALSE(without.has_values());
    CHECK(without.has_policy_outputs());
    rlx::VectorEnv envs_a(factory, 3), envs_b(factory, 3);
    rlx::FragmentCollector ca(envs_a, with, 40, 11), cb(envs_b, without, 40, 11);
    for (int n = 0; n < 3; ++n) {
      rlx::SampleBatch x, y;
      ca.collect(x);
      cb.collect(y);
      CHECK(x.values.size() == x.log_probs.size());
      CHECK(y.values.empty());
      REQUIRE_NOTHROW(y.validate());
      CHECK(x.obs == y.obs);
      CHECK(x.log_probs == y.log_probs);  // the value head changes no action or log-prob
      CHECK(x.action_indices == y.action_indices);
      CHECK(x.action_values == y.action_values);
      CHECK(x.rewards == y.rewards);
    }
  }
}

TEST_CASE("Finished episode stats match the recorded steps", "[rollout][collector]") {
  const int k = 5, t = 30;
  const auto factory = builtin("CartPole-v1");
  rlx::ActorCriticPolicy policy(config_for(factory), 8);
  rlx::VectorEnv envs(factory, k);
  rlx::FragmentCollector collector(envs, policy, t, 3);
  std::vector<int32_t> running(k, 0);
  std::vector<rlx::FinishedEpisode> expected;
  for (int n = 0; n < 4; ++n) {
    rlx::SampleBatch batch;
    collector.collect(batch);
    for (int step = 0; step < t; ++step) {
      for (int i = 0; i < k; ++i) {
        ++running[i];
        const size_t row = static_cast<size_t>(step * k + i);
        if (batch.terminated[row] || batch.truncated[row]) {
          expected.push_back({static_cast<double>(running[i]), running[i]});  // CartPole pays 1 per step
          running[i] = 0;
        }
      }
    }
  }
  const auto episodes = collector.take_finished_episodes();
  REQUIRE(episodes.size() == expected.size());
  REQUIRE_FALSE(episodes.empty());
  for (size_t e = 0; e < episodes.size(); ++e) {
    CHECK(episodes[e].length == expected[e].length);
    CHECK(episodes[e].episode_return == expected[e].episode_return);
  }
  CHECK(collector.take_finished_episodes().empty());
}

TEST_CASE("Collector with an epsilon-greedy Q policy, and misuse throws", "[rollout][collector]") {
  const auto factory = builtin("CartPole-v1");
  rlx::EpsilonGreedyQPolicy q(config_for(factory), 0.3, 4);
  rlx::VectorEnv envs(factory, 2);
  rlx::FragmentCollector collector(envs, q, 16, 9);
  rlx::SampleBatch batch;
  collector.collect(batch);
  CHECK(batch.log_probs.empty());
  CHECK(batch.values.empty());
  check_replay(factory, 2, 9, {batch});

  rlx::ActorCriticPolicy pendulum(config_for(builtin("Pendulum-v1")), 1);
  CHECK_THROWS_AS(rlx::FragmentCollector(envs, pendulum, 16, 0), std::invalid_argument);
  CHECK_THROWS_AS(rlx::FragmentCollector(envs, q, 0, 0), std::invalid_argument);
  CHECK_THROWS_AS(rlx::FragmentCollector(std::unique_ptr<rlx::VectorEnv>(), q, 16, 0), std::invalid_argument);
}
