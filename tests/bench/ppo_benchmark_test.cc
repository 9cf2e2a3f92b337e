// Wall time of full PPO updates (hidden: run with "[ppo-bench]"; prints one line per figure,
// asserts nothing about time).
#include "tests/learner/ppo_test_util.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

#include "models/rollout_policy.h"
#include "tests/learner/learner_test_configs.h"

namespace {

struct BenchCase {
  const char* name;
  const char* env_id;
  int envs, steps, epochs;
  int64_t minibatch;
  bool normalize;
};

void run_case(const BenchCase& c, int threads, bool analytic) {
  const rlx::ModelSpec model_config = rlx_test::model_config_for(c.env_id);
  rlx::PpoConfig config = rlx::test::ppo_test_config();
  config.num_epochs = c.epochs;
  config.minibatch_size = c.minibatch;
  config.normalize_observations = c.normalize;
  config.scale_rewards = c.normalize;
  config.analytic_gradients = analytic;
  rlx::PpoLearner learner(model_config, config, 1);
  rlx_test::Sampler sampler(c.env_id, model_config, c.envs, c.steps, 2);
  const std::vector<rlx::SampleBatch> batches = sampler.collect(1);
  const int previous = rlx::set_inference_threads(threads);
  learner.update(batches, 0);  // warm-up
  std::vector<double> ms;
  int64_t steps = 0;
  for (int i = 0; i < 7; ++i) {
    const auto start = std::chrono::steady_clock::now();
    steps = learner.update(batches, 0).num_minibatch_steps;
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  }
  rlx::set_inference_threads(previous);
  std::sort(ms.begin(), ms.end());
  std::printf("ppo_update case=%s gradients=%s samples=%d epochs=%d minibatch=%lld threads=%d steps=%lld median_ms=%.2f min_ms=%.2f per_step_ms=%.3f\n",
              c.name, analytic ? "analytic" : "autograd", c.envs * c.steps, c.epochs, static_cast<long long>(c.minibatch), threads,
              static_cast<long long>(steps), ms[ms.size() / 2], ms.front(), ms[ms.size() / 2] / static_cast<double>(steps));
}

}  // namespace

TEST_CASE("PPO update wall time", "[.][ppo-bench]") {
  const BenchCase cases[] = {
      {"pendulum_2048x10x64", "Pendulum-v1", 1, 2048, 10, 64, true},
      {"cartpole_1024x4x256", "CartPole-v1", 8, 128, 4, 256, false},
  };
  for (const BenchCase& c : cases) {
    run_case(c, 1, true);
    run_case(c, 1, false);
    run_case(c, 2, true);
  }
}
