// MinAtar learns from its pixels-like grids (the short versions of experiments/minatar-*.yaml; the
// full runs and their figures are in docs/results.md): PPO and DQN through the CNN encoder that
// encoder: auto picks for the 10x10xC grid, on LibTorch's learner, synchronously, to a mean of 3
// where a uniformly random policy scores about 0.5 (MinAtar's README). Measured 2026-12-03:
// PPO seeds 0 and 1 reach it at 106k and 102k steps, DQN at 30k and 36k.
#include <catch2/catch.hpp>

#include <string>

#include "tests/algorithms/learning_test_util.h"

namespace rlx {
namespace {

TEST_CASE("PPO with the CNN encoder learns MinAtar Breakout synchronously", "[learning][ppo][minatar]") {
  const TrainOutcome outcome = train_example(
      "minatar-breakout-ppo.yaml",
      {"num_workers=0", "encoder=auto", "stop.timesteps_total=150000", "stop.episode_return_mean=3", "seed=0"});
  INFO("final row: " << outcome.final_row.dump());
  CHECK(outcome.reward_reached);
}

TEST_CASE("DQN with the CNN encoder learns MinAtar Breakout synchronously", "[learning][dqn][minatar]") {
  const TrainOutcome outcome = train_example(
      "minatar-breakout-dqn.yaml", {"num_workers=0", "stop.timesteps_total=100000", "stop.episode_return_mean=3", "seed=0"});
  INFO("final row: " << outcome.final_row.dump());
  CHECK(outcome.reward_reached);
}

}  // namespace
}  // namespace rlx
