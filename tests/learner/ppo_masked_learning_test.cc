// Learning checks for PPO with action masks and MultiDiscrete actions, on both learners
// (LibTorch's PpoLearner and the torch-free NativePpoLearner) in a synchronous in-process loop:
// on a bandit whose best arm is illegal, masked training reaches the best legal arms' return and
// never takes an illegal action; on a context-matching task, each element of a MultiDiscrete
// action learns its own target. Fixed seeds, a few seconds each.
#include "tests/learner/ppo_test_util.h"

#include <chrono>
#include <cstdio>
#include <deque>
#include <numeric>
#include <string>

#include "native/native_ppo_learner.h"
#include "tests/learner/learner_test_configs.h"
#include "tests/learner/masked_test_envs.h"

namespace {

using rlx_test::IllegalCount;

constexpr size_t kWindow = 200;  // episodes (one step each) in the running mean

struct LearningRun {
  int64_t steps = 0;         // env steps when the target was met (or the budget ran out)
  double recent_mean = 0.0;  // mean return of the last kWindow episodes then
  int64_t illegal = 0;       // illegal actions the envs were given over the whole run
  bool solved = false;
  double seconds = 0.0;
};

rlx::PpoConfig bandit_config() {
  rlx::PpoConfig config = rlx::test::ppo_test_config();
  config.lr = 3e-3;
  config.total_timesteps = 100000;
  config.num_epochs = 4;
  config.minibatch_size = 64;
  config.entropy_coeff = 0.0;
  config.normalize_observations = false;
  return config;
}

// Trains `learner` on K envs from make_envs (fragments of T steps, the workers' policy synced
// after every update) until the mean return of the last kWindow episodes reaches target.
template <typename Learner>
LearningRun train(Learner& learner, const rlx::ModelSpec& model,
                  const std::function<std::unique_ptr<rlx::VectorEnv>(const IllegalCount&)>& make_envs, double target,
                  int64_t budget, uint64_t seed) {
  const auto start = std::chrono::steady_clock::now();
  const IllegalCount illegal = std::make_shared<std::atomic<int64_t>>(0);
  rlx::ActorCriticPolicy policy(model, seed);
  rlx::FragmentCollector collector(make_envs(illegal), policy, 8, seed);
  uint64_t version = 0;
  const auto sync = [&] {
    const std::shared_ptr<rlx::Weights> w = learner.weights(++version);
    policy.load_weights(w->params.data(), w->params.size(), w->policy_version);
  };
  sync();
  std::deque<double> recent;
  LearningRun run;
  while (run.steps < budget) {
    std::vector<rlx::SampleBatch> batches(1);
    collector.collect(batches[0]);
    for (const rlx::FinishedEpisode& e : collector.take_finished_episodes()) {
      recent.push_back(e.episode_return);
      if (recent.size() > kWindow) recent.pop_front();
    }
    learner.update(batches, run.steps);
    run.steps += batches[0].num_transitions();
    sync();
    if (recent.size() == kWindow) {
      run.recent_mean = std::accumulate(recent.begin(), recent.end(), 0.0) / static_cast<double>(kWindow);
      if (run.recent_mean >= target) {
        run.solved = true;
        break;
      }
    }
  }
  run.illegal = illegal->load();
  run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return run;
}

void report(const char* name, const LearningRun& run) {
  std::printf("%s solved=%d steps=%lld recent_mean=%.3f illegal=%lld seconds=%.2f\n", name, run.solved ? 1 : 0,
              static_cast<long long>(run.steps), run.recent_mean, static_cast<long long>(run.illegal), run.seconds);
}

rlx::ModelSpec model_for(const rlx::EnvSpec& spec) {
  rlx::ModelSpec model = rlx::ModelSpec::for_env(spec);
  model.hidden_sizes = {32};
  return model;
}

}  // namespace

TEST_CASE("PPO with an action mask learns a bandit's best legal arms and never plays an illegal one",
          "[learner][ppo][mask][learning]") {
  const int previous_threads = rlx::set_inference_threads(1);
  const rlx::ModelSpec model = model_for(rlx_test::MaskedBanditEnv::spec());
  const auto envs = [](const IllegalCount& illegal) { return rlx_test::masked_bandit_envs(16, illegal); };
  // The best legal arms pay 0.7 on average, the illegal best arms 1.0, uniform legal play 0.35.
  const double target = rlx_test::MaskedBanditEnv::kBestLegalReturn - 0.01;
  {
    rlx::PpoLearner learner(model, bandit_config(), 1);
    const LearningRun run = train(learner, model, envs, target, 40000, 2);
    report("ppo_masked_bandit torch", run);
    CHECK(run.solved);
    CHECK(run.illegal == 0);
  }
  {
    rlx::NativePpoLearner learner(model, bandit_config(), 1);
    const LearningRun run = train(learner, model, envs, target, 40000, 2);
    report("ppo_masked_bandit native", run);
    CHECK(run.solved);
    CHECK(run.illegal == 0);
  }
  rlx::set_inference_threads(previous_threads);
}

TEST_CASE("PPO learns a context-matching task with MultiDiscrete actions: one target per element",
          "[learner][ppo][learning]") {
  const int previous_threads = rlx::set_inference_threads(1);
  const rlx::Space actions = rlx::Space::multi_discrete({3, 4});
  const rlx::ModelSpec model = model_for(rlx_test::ContextMatchEnv::spec(actions, false));
  const auto envs = [actions](const IllegalCount& illegal) {
    return rlx_test::context_match_envs(16, actions, false, illegal);
  };
  // Random play earns (1/3 + 1/4) / 2 = 0.29; both elements right every time 1.
  {
    rlx::PpoLearner learner(model, bandit_config(), 3);
    const LearningRun run = train(learner, model, envs, 0.95, 40000, 4);
    report("ppo_multi_discrete torch", run);
    CHECK(run.solved);
  }
  {
    rlx::NativePpoLearner learner(model, bandit_config(), 3);
    const LearningRun run = train(learner, model, envs, 0.95, 40000, 4);
    report("ppo_multi_discrete native", run);
    CHECK(run.solved);
  }
  rlx::set_inference_threads(previous_threads);
}
