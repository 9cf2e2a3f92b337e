// Learning is tested by learning: the tuned examples in experiments/ reach their stop
// criterion. Synchronous runs (num_workers: 0) are deterministic under their seeds; the runs
// with worker processes are not, and have a wide margin to their budgets.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "algorithms/evaluation.h"
#include "algorithms/trainer.h"
#include "core/experiment.h"

namespace rlx {
namespace {

namespace fs = std::filesystem;

// Trains experiments/FILE with the overrides into a temporary directory; with evaluation set,
// also evaluates the final checkpoint deterministically over 20 episodes into it.
TrainOutcome train_example(const std::string& file, const std::vector<std::string>& overrides,
                           std::optional<EvaluationResult>* evaluation = nullptr) {
  char pattern[] = "/tmp/rlx-learning-test-XXXXXX";
  const fs::path output = ::mkdtemp(pattern);
  TrainOptions options;
  options.experiment = load_experiment(fs::path(RLX_SOURCE_DIR) / "experiments" / file, "", overrides);
  options.output_root = output;
  options.progress = false;
  options.worker_program = std::string(RLX_BINARY_DIR) + "/rlx";
  TrainOutcome outcome = run_training(options);
  if (evaluation && outcome.last_checkpoint) {
    EvaluationOptions evaluate;
    evaluate.checkpoint = *outcome.last_checkpoint;
    evaluate.episodes = 20;
    evaluate.deterministic = true;
    *evaluation = evaluate_checkpoint(evaluate);
  }
  fs::remove_all(output);
  INFO(file << " stopped by " << outcome.stopped_by << ": " << outcome.final_row.dump());
  return outcome;
}

}  // namespace

TEST_CASE("PPO solves CartPole-v1 synchronously for fixed seeds", "[learning][ppo]") {
  for (int seed : {0, 1, 2}) {
    std::optional<EvaluationResult> evaluation;
    const TrainOutcome outcome =
        train_example("cartpole-ppo.yaml", {"num_workers=0", "seed=" + std::to_string(seed)}, &evaluation);
    INFO("seed " << seed << ": " << outcome.final_row.dump());
    CHECK(outcome.reward_reached);
    // The saved policy, run greedily, is as good as its training episodes said.
    REQUIRE(evaluation);
    CHECK(evaluation->return_mean >= 475.0);
  }
}

TEST_CASE("PPO solves CartPole-v1 with worker processes", "[learning][ppo][distributed]") {
  for (int seed : {0, 1}) {
    const TrainOutcome outcome = train_example("cartpole-ppo.yaml", {"seed=" + std::to_string(seed)});
    INFO("seed " << seed << ": " << outcome.final_row.dump());
    CHECK(outcome.reward_reached);
  }
}

}  // namespace rlx

namespace rlx {

TEST_CASE("PPO solves Acrobot-v1 for fixed seeds", "[learning][ppo]") {
  for (int seed : {0, 1, 2}) {
    const TrainOutcome outcome = train_example("acrobot-ppo.yaml", {"seed=" + std::to_string(seed)});
    INFO("seed " << seed << ": " << outcome.final_row.dump());
    CHECK(outcome.reward_reached);
  }
}

TEST_CASE("PPO solves Pendulum-v1 for fixed seeds", "[learning][ppo]") {
  for (int seed : {0, 1, 2}) {
    const TrainOutcome outcome = train_example("pendulum-ppo.yaml", {"seed=" + std::to_string(seed)});
    INFO("seed " << seed << ": " << outcome.final_row.dump());
    CHECK(outcome.reward_reached);
  }
}

}  // namespace rlx

namespace rlx {
namespace {

// One seed of experiments/cartpole-dqn.yaml (synchronous, so deterministic): it reaches the
// reward stop, and its final greedy policy holds it.
void check_dqn_solves_cartpole(int seed) {
  std::optional<EvaluationResult> evaluation;
  const TrainOutcome outcome = train_example("cartpole-dqn.yaml", {"seed=" + std::to_string(seed)}, &evaluation);
  INFO("seed " << seed << ": " << outcome.final_row.dump());
  CHECK(outcome.reward_reached);
  REQUIRE(evaluation);
  CHECK(evaluation->return_mean >= 475.0);
}

}  // namespace

// One test case per seed, so ctest runs them side by side.
TEST_CASE("DQN solves CartPole-v1 synchronously, seed 0", "[learning][dqn]") { check_dqn_solves_cartpole(0); }
TEST_CASE("DQN solves CartPole-v1 synchronously, seed 1", "[learning][dqn]") { check_dqn_solves_cartpole(1); }
TEST_CASE("DQN solves CartPole-v1 synchronously, seed 2", "[learning][dqn]") { check_dqn_solves_cartpole(2); }

}  // namespace rlx
