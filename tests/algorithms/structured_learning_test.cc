// Learning on structured spaces, the short versions of experiments/illegal-moves-ppo.yaml (an
// action mask), experiments/dict-sensors-ppo.yaml (a Dict observation, MultiDiscrete actions)
// and experiments/pixel-quadrants-ppo.yaml (a Dict with an image key, convolved by the cnn
// encoder while the other key is carried past it), synchronously: each reaches its env's threshold, and masked training never takes an
// illegal move (one would pay -10 and end its episode: every return of the last 100 episodes
// stays >= 0).
#include <catch2/catch.hpp>

#include <string>

#include "tests/algorithms/learning_test_util.h"

namespace rlx {
namespace {

TEST_CASE("PPO with an action mask solves Toy/IllegalMoves-v0 and never moves illegally", "[learning][ppo][mask]") {
  for (const std::string backend : {"native", "torch"}) {
    const TrainOutcome outcome =
        train_example("illegal-moves-ppo.yaml", {"num_workers=0", "learner_backend=" + backend, "seed=0"});
    INFO(backend << ": " << outcome.final_row.dump());
    CHECK(outcome.reward_reached);
    REQUIRE(outcome.final_row["episode_return_min"].is_number());
    CHECK(outcome.final_row["episode_return_min"].get<double>() >= 0.0);
    CHECK(outcome.final_row["sampler"]["fragments_refused"] == 0);
  }
}

TEST_CASE("PPO reads every key of a Dict observation and acts in MultiDiscrete: Toy/DictSensors-v0",
          "[learning][ppo][dict]") {
  const TrainOutcome outcome = train_example("dict-sensors-ppo.yaml", {"num_workers=0", "seed=0"});
  INFO(outcome.final_row.dump());
  CHECK(outcome.reward_reached);
}

TEST_CASE("PPO's cnn encoder reads the image key of a Dict and the key beside it: Toy/PixelQuadrants-v0",
          "[learning][ppo][dict][cnn]") {
  const TrainOutcome outcome = train_example("pixel-quadrants-ppo.yaml", {"num_workers=0", "seed=0"});
  INFO(outcome.final_row.dump());
  CHECK(outcome.reward_reached);
}

}  // namespace
}  // namespace rlx
