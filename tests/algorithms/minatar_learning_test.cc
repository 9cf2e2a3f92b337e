// MinAtar learns from its pixels-like grids (the short versions of experiments/minatar-*.yaml; the
// full runs and their figures are in docs/results.md): PPO through the CNN encoder that
// encoder: auto picks for the 10x10xC grid, on LibTorch's learner, synchronously. A uniformly
// random policy scores about 0.5 per episode on Breakout (docs/minatar.md).
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
  REQUIRE(outcome.final_row["episode_return_mean"].is_number());
  CHECK(outcome.reward_reached);
}

}  // namespace
}  // namespace rlx
