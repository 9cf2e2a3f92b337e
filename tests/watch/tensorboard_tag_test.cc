// The tags result columns get in TensorBoard.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "watch/tensorboard_logger.h"

TEST_CASE("tensorboard_tag groups result columns", "[watch]") {
  CHECK(rlx::tensorboard_tag("episode_return_mean") == "episode/return_mean");
  CHECK(rlx::tensorboard_tag("episode_len_mean") == "episode/len_mean");
  CHECK(rlx::tensorboard_tag("episodes_total") == "episode/episodes_total");
  CHECK(rlx::tensorboard_tag("env_steps_per_s") == "perf/env_steps_per_s");
  CHECK(rlx::tensorboard_tag("time_total_s") == "perf/time_total_s");
  CHECK(rlx::tensorboard_tag("timesteps_total") == "progress/timesteps_total");
  CHECK(rlx::tensorboard_tag("learner/policy_loss") == "learner/policy_loss");
  CHECK(rlx::tensorboard_tag("learner/policy_lag/mean") == "learner/policy_lag/mean");
}

TEST_CASE("markdown_table lists nested keys and escapes pipes", "[watch]") {
  const nlohmann::json object = {{"env", "CartPole-v1"}, {"config", {{"lr", 0.001}, {"note", "a|b"}}}};
  CHECK(rlx::markdown_table(object) ==
        "| key | value |\n|---|---|\n| config/lr | 0.001 |\n| config/note | a\\|b |\n| env | CartPole-v1 |\n");
}
