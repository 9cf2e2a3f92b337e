// Learning check: PPO with a synchronous in-process loop (FragmentCollector over a VectorEnv,
// policy weights refreshed from the learner after every update) solves CartPole-v1.
#include "ppo_test_util.h"

#include <chrono>
#include <cstdio>
#include <deque>
#include <numeric>

#include "models/rollout_policy.h"
#include "tests/learner/learner_test_configs.h"

namespace {

struct LearningRun {
  int64_t steps = 0;          // env steps when the criterion was met (or the budget ran out)
  double recent_mean = 0.0;   // mean return over the last kWindow episodes at that point
  bool solved = false;
  double seconds = 0.0;
};

constexpr size_t kWindow = 20;

LearningRun train_cartpole(const rlx::PpoConfig& config, int envs, int fragment, double target, int64_t budget, uint64_t seed) {
  const rlx::ModelSpec model_config = rlx_test::model_config_for("CartPole-v1");
  const int previous_threads = rlx::set_inference_threads(1);
  const auto start = std::chrono::steady_clock::now();
  rlx::PpoLearner learner(model_config, config, seed);
  rlx_test::Sampler sampler("CartPole-v1", model_config, envs, fragment, seed + 1);
  std::deque<double> recent;
  LearningRun run;
  uint64_t version = 0;
  rlx_test::sync_policy(learner, sampler.policy, ++version);
  while (run.steps < budget) {
    const std::vector<rlx::SampleBatch> batches = sampler.collect(1);
    for (const rlx::FinishedEpisode& e : sampler.collector.take_finished_episodes()) {
      recent.push_back(e.episode_return);
      if (recent.size() > kWindow) recent.pop_front();
    }
    learner.update(batches, run.steps);
    run.steps += batches.front().num_transitions();
    rlx_test::sync_policy(learner, sampler.policy, ++version);
    if (recent.size() == kWindow) {
      run.recent_mean = std::accumulate(recent.begin(), recent.end(), 0.0) / static_cast<double>(kWindow);
      if (run.recent_mean >= target) {
        run.solved = true;
        break;
      }
    }
  }
  run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  rlx::set_inference_threads(previous_threads);
  return run;
}

rlx::PpoConfig cartpole_config() {
  rlx::PpoConfig config = rlx::test::ppo_test_config();
  config.lr = 1e-3;
  config.total_timesteps = 100000;
  config.gamma = 0.98;
  config.lambda = 0.8;
  config.clip_param = 0.2;
  config.entropy_coeff = 0.0;
  config.num_epochs = 10;
  config.minibatch_size = 256;
  config.grad_clip = 0.5;
  return config;
}

}  // namespace

TEST_CASE("PPO learns CartPole-v1 (mean return 195 over 20 episodes) within 60k steps", "[learner][ppo][learning]") {
  const LearningRun run = train_cartpole(cartpole_config(), 8, 64, 195.0, 60000, 1);
  std::printf("ppo_cartpole solved=%d steps=%lld recent_mean=%.1f seconds=%.2f\n", run.solved ? 1 : 0,
              static_cast<long long>(run.steps), run.recent_mean, run.seconds);
  CHECK(run.solved);
}

TEST_CASE("PPO CartPole-v1 sweep over seeds and settings", "[.][ppo-sweep]") {
  struct Setting {
    const char* name;
    int envs, fragment, epochs;
    int64_t minibatch;
    double lr;
  };
  const Setting settings[] = {
      {"8x64_e10_mb256_lr1e-3", 8, 64, 10, 256, 1e-3},
      {"8x32_e20_mb256_lr1e-3", 8, 32, 20, 256, 1e-3},
      {"8x128_e4_mb256_lr1e-3", 8, 128, 4, 256, 1e-3},
      {"8x128_e10_mb256_lr1e-3", 8, 128, 10, 256, 1e-3},
  };
  for (const Setting& s : settings) {
    for (uint64_t seed = 1; seed <= 5; ++seed) {
      rlx::PpoConfig config = cartpole_config();
      config.num_epochs = s.epochs;
      config.minibatch_size = s.minibatch;
      config.lr = s.lr;
      const LearningRun r195 = train_cartpole(config, s.envs, s.fragment, 195.0, 100000, seed);
      const LearningRun r475 = train_cartpole(config, s.envs, s.fragment, 475.0, 200000, seed);
      std::printf("ppo_sweep setting=%s seed=%llu steps195=%lld s195=%.2f steps475=%lld solved475=%d s475=%.2f\n", s.name,
                  static_cast<unsigned long long>(seed), static_cast<long long>(r195.steps), r195.seconds,
                  static_cast<long long>(r475.steps), r475.solved ? 1 : 0, r475.seconds);
    }
  }
}
