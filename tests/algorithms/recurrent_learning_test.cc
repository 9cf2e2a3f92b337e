// Memory learns: the short version of experiments/cartpole-novel-ppo.yaml, synchronously. With the
// LSTM, PPO on CartPoleNoVel-v1 (positions only) passes a mean return of 150 within 40k steps;
// the same file with use_lstm=false stays far below, which shows the env really hides what a
// memoryless policy would need. And experiments/cartpole-novel-appo.yaml with its two worker
// processes, which ship each fragment's first states over the wire: not deterministic, so its
// bar (150 within 80k steps) sits well below where it gets (150 near 35k, 400 at 83k). And the
// short version of experiments/pendulum-novel-ppo.yaml (LSTM, gSDE): -900 within 61,440 steps,
// where seeds 0-9 stand at -556 to -766 (the memoryless file is at -1262 after 100k).
#include <catch2/catch.hpp>

#include <string>

#include "tests/algorithms/learning_test_util.h"

namespace rlx {
namespace {

TEST_CASE("Recurrent PPO learns CartPoleNoVel-v1, where the memoryless policy cannot", "[learning][ppo][recurrent]") {
  const std::vector<std::string> short_run = {"num_workers=0", "seed=0", "stop.timesteps_total=40000",
                                              "stop.episode_return_mean=150"};
  const TrainOutcome recurrent = train_example("cartpole-novel-ppo.yaml", short_run);
  INFO("recurrent: " << recurrent.final_row.dump());
  CHECK(recurrent.reward_reached);

  std::vector<std::string> memoryless = short_run;
  memoryless.push_back("use_lstm=false");
  const TrainOutcome flat = train_example("cartpole-novel-ppo.yaml", memoryless);
  INFO("memoryless: " << flat.final_row.dump());
  CHECK_FALSE(flat.reward_reached);
  REQUIRE(flat.final_row["episode_return_mean"].is_number());
  CHECK(flat.final_row["episode_return_mean"].get<double>() < 100.0);
}

TEST_CASE("Recurrent APPO learns CartPoleNoVel-v1 with worker processes, every fragment's states accepted",
          "[learning][appo][recurrent]") {
  const TrainOutcome outcome = train_example(
      "cartpole-novel-appo.yaml", {"seed=0", "stop.timesteps_total=80000", "stop.episode_return_mean=150"});
  INFO(outcome.final_row.dump());
  CHECK(outcome.reward_reached);
  CHECK(outcome.final_row["sampler"]["fragments_refused"] == 0);
  CHECK(outcome.final_row["sampler"]["messages_rejected"] == 0);
}

TEST_CASE("Recurrent PPO with gSDE learns PendulumNoVel-v1", "[learning][ppo][recurrent][sde]") {
  const TrainOutcome outcome = train_example(
      "pendulum-novel-ppo.yaml",
      {"num_workers=0", "seed=0", "stop.timesteps_total=61440", "stop.episode_return_mean=-900"});
  INFO(outcome.final_row.dump());
  CHECK(outcome.reward_reached);
}

}  // namespace
}  // namespace rlx
