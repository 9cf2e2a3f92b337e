// Gradient-step timing of the DQN learner (hidden: run with "[dqn_speed]"), autograd against the
// hand-written backward (learner/q_network_backprop.h); prints, never asserts on time.
#include "tests/learner/torch_catch.h"

#include <chrono>
#include <ctime>
#include <iostream>
#include <vector>

#include "envs/registry.h"
#include "envs/vector_env.h"
#include "learner/dqn_learner.h"
#include "rollout/fragment_collector.h"
#include "models/rollout_policy.h"
#include "tests/learner/learner_test_configs.h"

namespace {

struct Variant {
  bool prioritized;
  bool double_q;
  bool dueling;
};

struct StepTime {
  double wall_ms = 0.0;
  double cpu_ms = 0.0;  // this process's CPU time: steadier than wall time on a shared machine
};

// Milliseconds per gradient step of batch 64 on CartPole transitions.
StepTime ms_per_step(const std::vector<int64_t>& hidden, const Variant& v, bool hand_written) {
  const auto factory = rlx::global_env_registry().factory("CartPole-v1");
  rlx::ModelSpec model = rlx::ModelSpec::for_env(factory()->spec());
  model.hidden_sizes = hidden;
  model.activation = "relu";
  model.dueling = v.dueling;
  rlx::DqnConfig config = rlx::test::dqn_test_config();
  config.batch_size = 64;
  config.learning_starts = 1000;
  config.buffer_size = 100000;
  config.prioritized_replay = v.prioritized;
  config.double_q = v.double_q;
  config.target_update_interval = 10;
  rlx::DqnLearner learner(model, config, 1);
  learner.use_hand_written_gradients(hand_written);
  rlx::EpsilonGreedyQPolicy policy(model, 1.0, 1);
  rlx::VectorEnv envs(factory, 4);
  rlx::FragmentCollector collector(envs, policy, 256, 1);
  rlx::SampleBatch batch;
  for (int i = 0; i < 5; ++i) {
    collector.collect(batch);
    learner.add(batch);
  }
  learner.train(50, 5000);  // warm-up
  const int steps = 1000;
  const auto start = std::chrono::steady_clock::now();
  const std::clock_t cpu_start = std::clock();
  for (int round = 0; round < steps / 100; ++round) learner.train(100, 5000 + round * 256);
  StepTime time;
  time.cpu_ms = 1000.0 * static_cast<double>(std::clock() - cpu_start) / CLOCKS_PER_SEC / steps;
  time.wall_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count() / steps;
  return time;
}

}  // namespace

TEST_CASE("DQN gradient step timing", "[.][dqn_speed]") {
  const int previous_threads = rlx::set_inference_threads(1);
  for (const std::vector<int64_t>& hidden :
       {std::vector<int64_t>{64, 64}, std::vector<int64_t>{128, 128}, std::vector<int64_t>{256, 256}}) {
    for (const Variant& v : {Variant{false, false, false}, Variant{true, true, true}}) {
      for (bool hand_written : {false, true}) {
        const StepTime time = ms_per_step(hidden, v, hand_written);
        std::cout << "dqn_gradient_step hidden=" << hidden[0] << "x" << hidden[1] << " batch=64 prioritized=" << v.prioritized
                  << " double_q=" << v.double_q << " dueling=" << v.dueling
                  << " gradients=" << (hand_written ? "hand-written" : "autograd")
                  << " ms_per_step=" << time.wall_ms << " cpu_ms_per_step=" << time.cpu_ms << "\n";
      }
    }
  }
  rlx::set_inference_threads(previous_threads);
}
