// DQN learns an env whose observations are uint8 and whose actions are masked, in the synchronous
// in-process loop of dqn_learning_test.cc: the fragments carry the observations as bytes with the
// mask last, the replay keeps them as bytes, the learner flattens them and its targets range over
// the legal actions of the next state only.
#include "tests/learner/torch_catch.h"

#include <cstdint>
#include <iostream>
#include <memory>
#include <vector>

#include "envs/env.h"
#include "envs/vector_env.h"
#include "learner/dqn_learner.h"
#include "models/rollout_policy.h"
#include "rollout/fragment_collector.h"
#include "tests/learner/learner_test_configs.h"

namespace {

// A fork of two steps. From the start, action 0 leads to Near (reward 0), action 1 to Far (reward
// 0.6); action 2 is illegal (it would pay 5). In Near, action 2 pays 1 (0 and 1 pay 0). In Far,
// action 0 pays 0.3 and 1 pays 0; action 2 is illegal (it would pay 2). The best legal return is
// 1 (start -> Near -> 2), the other path's 0.9.
//
// Observations are Box(0, 255, (8,), uint8), read by the network as /255: the start lights byte 0;
// Near lights bytes 1-6, and Far the same plus byte 7. Far is thus one byte away from Near, where
// action 2 is worth 1: a linear Q-net that never sees action 2 taken in Far values it near 1 there
// too, and an unmasked target would make Far worth 0.6 + ~1 and lure the agent to 0.9.
enum State { kStart, kNear, kFar, kDone };
constexpr int kActions = 3;
constexpr uint8_t kLegal[3][kActions] = {{1, 1, 0}, {1, 1, 1}, {1, 1, 0}};
constexpr double kReward[3][kActions] = {{0.0, 0.6, 5.0}, {0.0, 0.0, 1.0}, {0.3, 0.0, 2.0}};
constexpr double kBestLegalReturn = 1.0;

rlx::EnvSpec fork_spec() {
  rlx::EnvSpec spec;
  spec.id = "MaskedFork-v0";
  spec.observation_space = rlx::Space::box({8}, 0, 255, rlx::ScalarType::kUint8);
  spec.action_space = rlx::Space::discrete(kActions);
  spec.action_mask = true;
  spec.max_episode_steps = 10;
  return spec;
}

class MaskedForkEnv : public rlx::Env {
 public:
  // Counts every illegal action it is given into *illegal.
  explicit MaskedForkEnv(std::shared_ptr<int64_t> illegal) : Env(fork_spec()), illegal_(std::move(illegal)) {}

 protected:
  void reset_episode(rlx::Rng&, rlx::ObsSpan obs) override {
    state_ = kStart;
    write(obs);
  }
  rlx::StepResult step_episode(const rlx::Action& action, rlx::ObsSpan obs) override {
    const auto a = static_cast<size_t>(action.index);
    if (kLegal[state_][a] == 0) ++*illegal_;
    const double reward = kReward[state_][a];
    state_ = state_ == kStart && a < 2 ? (a == 0 ? kNear : kFar) : kDone;
    write(obs);
    return {reward, state_ == kDone, false};
  }

 private:
  void write(rlx::ObsSpan obs) const {
    for (int64_t i = 0; i < 8; ++i) {
      const bool lit = (state_ == kStart && i == 0) || ((state_ == kNear || state_ == kFar) && i >= 1 && i <= 6) ||
                       (state_ == kFar && i == 7);
      obs.bytes()[i] = lit ? 255 : 0;
    }
    for (int64_t a = 0; a < kActions; ++a) obs.action_mask()[a] = state_ == kDone ? 1 : kLegal[state_][a];
  }

  std::shared_ptr<int64_t> illegal_;
  State state_ = kStart;
};

struct ForkRun {
  int64_t illegal_actions = 0;
  int64_t fragment_floats = -1, fragment_bytes = -1;
  std::vector<double> greedy_returns;  // episodes of the trained policy with epsilon 0
};

ForkRun train_on_fork(uint64_t seed) {
  rlx::ModelSpec model = rlx::ModelSpec::for_env(fork_spec(), rlx::ModelKind::kQNetwork);
  model.hidden_sizes = {};  // linear: Q(Far, 2) is Q(Near, 2) plus one untrained weight
  rlx::DqnConfig config = rlx::test::dqn_test_config();
  config.lr = 1e-2;
  config.gamma = 0.99;
  config.double_q = true;
  config.learning_starts = 200;
  config.train_freq = 2;
  config.gradient_steps = 1;
  config.target_update_interval = 50;
  config.exploration_fraction = 0.5;
  config.exploration_final_eps = 0.05;
  config.total_timesteps = 3000;

  auto illegal = std::make_shared<int64_t>(0);
  rlx::DqnLearner learner(model, config, seed);
  rlx::EpsilonGreedyQPolicy policy(model, 1.0, seed + 1);
  rlx::VectorEnv envs([illegal] { return std::make_unique<MaskedForkEnv>(illegal); }, 4);
  rlx::FragmentCollector collector(envs, policy, 16, seed + 2);
  rlx::SampleBatch batch;
  ForkRun run;
  int64_t steps = 0;
  uint64_t version = 0;
  auto refresh = [&](double epsilon) {
    const auto weights = learner.weights(++version);
    policy.load_weights(weights->params.data(), weights->params.size(), weights->policy_version);
    policy.set_epsilon(epsilon);
  };
  while (steps < config.total_timesteps) {
    refresh(learner.epsilon(steps));
    collector.collect(batch);
    run.fragment_floats = batch.obs_size;
    run.fragment_bytes = batch.obs_byte_size;
    steps += batch.num_transitions();
    learner.add(batch);
    for (int64_t round = learner.training_rounds_due(steps); round > 0; --round) learner.train(config.gradient_steps, steps);
  }
  collector.take_finished_episodes();
  refresh(0.0);
  for (int i = 0; i < 4; ++i) collector.collect(batch);
  for (const auto& episode : collector.take_finished_episodes()) run.greedy_returns.push_back(episode.episode_return);
  run.illegal_actions = *illegal;
  return run;
}

}  // namespace

TEST_CASE("DQN learns a masked uint8 env whose best action is illegal, never taking an illegal action",
          "[learner][dqn][learning]") {
  const int previous = rlx::set_inference_threads(1);
  for (const uint64_t seed : {1, 2, 3}) {
    CAPTURE(seed);
    const ForkRun run = train_on_fork(seed);
    std::cout << "dqn_masked_fork seed=" << seed << " greedy_episodes=" << run.greedy_returns.size()
              << " illegal=" << run.illegal_actions << std::endl;
    // The fragments carried the observation as 8 bytes plus a 3-byte mask, and no floats.
    CHECK(run.fragment_floats == 0);
    CHECK(run.fragment_bytes == 8 + kActions);
    CHECK(run.illegal_actions == 0);
    REQUIRE(run.greedy_returns.size() >= 16);
    for (double episode_return : run.greedy_returns) CHECK(episode_return == Approx(kBestLegalReturn));
  }
  rlx::set_inference_threads(previous);
}
