// Learning is tested by learning: the tuned examples in experiments/ reach their stop
// criterion. Synchronous runs (num_workers: 0) are deterministic under their seeds on one
// machine, but not across machines: another CPU or OpenBLAS kernel rounds differently and the
// run takes another course. So every assertion here holds with a margin under each float path
// scripts/learning-matrix.sh tries (default, SkylakeX + AVX-512, Prescott without SIMD
// dispatch), as measured there and recorded beside each test: budgets well above the steps the
// seeds need, greedy evaluations held to 450 where they score 475-500.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "algorithms/evaluation.h"
#include "core/experiment.h"
#include "tests/algorithms/learning_test_util.h"

namespace rlx {
namespace {

namespace fs = std::filesystem;

// Seeds 0-2 of experiments/cartpole-ppo.yaml, synchronous, on the given learner_backend: each
// reaches the reward criterion and its saved policy, run greedily, scores 450 or more.
void check_ppo_solves_cartpole_synchronously(const std::string& backend) {
  for (int seed : {0, 1, 2}) {
    std::optional<EvaluationResult> evaluation;
    const TrainOutcome outcome = train_example(
        "cartpole-ppo.yaml", {"num_workers=0", "learner_backend=" + backend, "seed=" + std::to_string(seed)}, &evaluation);
    INFO(backend << " seed " << seed << ": " << outcome.final_row.dump());
    CHECK(outcome.reward_reached);
    // The saved policy, run greedily, is as good as its training episodes said.
    REQUIRE(evaluation);
    CHECK(evaluation->return_mean >= 450.0);
  }
}

// Seeds 0, 1, 2 of experiments/FILE with its worker processes until one solves; every run must
// have learned (a final 100-episode mean of 300 or more) and pass check_row on its final row.
void check_solves_with_workers(const std::string& file,
                               const std::function<void(const nlohmann::json&)>& check_row = {}) {
  bool solved = false;
  for (int seed : {0, 1, 2}) {
    const TrainOutcome outcome = train_example(file, {"seed=" + std::to_string(seed)});
    INFO(file << " seed " << seed << ": " << outcome.final_row.dump());
    REQUIRE(outcome.final_row["episode_return_mean"].is_number());
    CHECK(outcome.final_row["episode_return_mean"].get<double>() >= 300.0);
    if (check_row) check_row(outcome.final_row);
    if (outcome.reward_reached) {
      solved = true;
      break;
    }
  }
  CHECK(solved);
}

}  // namespace

// The native learner (the example's auto): seeds 0-11 solved in 58k-88k of the 100k steps.
TEST_CASE("PPO solves CartPole-v1 synchronously for fixed seeds (native learner)", "[learning][ppo]") {
  check_ppo_solves_cartpole_synchronously("native");
}

// LibTorch's learner: seeds 0-11 under three float paths solved in 56k-80k of the 100k steps.
TEST_CASE("PPO solves CartPole-v1 synchronously for fixed seeds (LibTorch learner)", "[learning][ppo]") {
  check_ppo_solves_cartpole_synchronously("torch");
}

// With worker processes a run is not deterministic even on one machine (fragments arrive in
// another order, some from the previous policy). 25 runs of seeds 0 and 1 solved in 50k-94k of
// the 100k steps (2026-11-30); so seeds are tried until one solves, and every run must have
// learned (a final 100-episode mean of 300 or more).
TEST_CASE("PPO solves CartPole-v1 with worker processes", "[learning][ppo][distributed]") {
  check_solves_with_workers("cartpole-ppo.yaml");
}

}  // namespace rlx

namespace rlx {

// Seeds 0-2 under three float paths: solved in 127k-188k of the 300k steps.
TEST_CASE("PPO solves Acrobot-v1 for fixed seeds", "[learning][ppo]") {
  for (int seed : {0, 1, 2}) {
    const TrainOutcome outcome = train_example("acrobot-ppo.yaml", {"seed=" + std::to_string(seed)});
    INFO("seed " << seed << ": " << outcome.final_row.dump());
    CHECK(outcome.reward_reached);
  }
}

// Seeds 0-2 under three float paths: solved in 119k-148k of the 500k steps.
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

// One seed of experiments/cartpole-dqn.yaml (synchronous): its final greedy policy scores 450 or
// more, and its last 100 training episodes averaged 300 or more. Seeds 0-4 under three float
// paths: every greedy evaluation 500; training means reached the 475 stop in 14 of 15 runs, the
// 15th ended at 388.
void check_dqn_learns_cartpole(int seed) {
  std::optional<EvaluationResult> evaluation;
  const TrainOutcome outcome =
      train_example("cartpole-dqn.yaml", {"num_workers=0", "seed=" + std::to_string(seed)}, &evaluation);
  INFO("seed " << seed << ": " << outcome.final_row.dump());
  REQUIRE(outcome.final_row["episode_return_mean"].is_number());
  CHECK(outcome.final_row["episode_return_mean"].get<double>() >= 300.0);
  REQUIRE(evaluation);
  CHECK(evaluation->return_mean >= 450.0);
}

}  // namespace

// One test case per seed, so ctest runs them side by side.
TEST_CASE("DQN learns CartPole-v1 synchronously, seed 0", "[learning][dqn]") { check_dqn_learns_cartpole(0); }
TEST_CASE("DQN learns CartPole-v1 synchronously, seed 1", "[learning][dqn]") { check_dqn_learns_cartpole(1); }
TEST_CASE("DQN learns CartPole-v1 synchronously, seed 2", "[learning][dqn]") { check_dqn_learns_cartpole(2); }

}  // namespace rlx

namespace rlx {

// APPO with every fragment 8 policy versions old (worker_weight_delay: 8, synchronous and so
// deterministic under the seed): V-trace reaches 475, the lag is recorded as 8, and the saved
// policy plays greedily at 450 or more. Seeds 0-4 solved in 96k-109k steps of the 250k here
// (bench/appo_lag_ablation.sh, 2026-12-01; with V-trace off 4 of 5 solved, median 197k).
TEST_CASE("APPO solves CartPole-v1 with fragments 8 versions stale, synchronously", "[learning][appo]") {
  for (int seed : {0, 1, 2}) {
    std::optional<EvaluationResult> evaluation;
    const TrainOutcome outcome = train_example(
        "cartpole-appo.yaml",
        {"num_workers=0", "worker_weight_delay=8", "stop.timesteps_total=250000", "seed=" + std::to_string(seed)},
        &evaluation);
    INFO("seed " << seed << ": " << outcome.final_row.dump());
    CHECK(outcome.reward_reached);
    const nlohmann::json& lag = outcome.final_row.at("learner").at("policy_lag");
    CHECK(lag.at("mean").get<double>() == 8.0);
    CHECK(lag.at("max").get<int>() == 8);
    CHECK(lag.at("histogram").at(4).at("lag") == "8-15");
    CHECK(lag.at("histogram").at(4).at("fragments").get<int>() >= 1);
    REQUIRE(evaluation);
    CHECK(evaluation->return_mean >= 450.0);
  }
}

// APPO with worker processes that sample on while the learner updates: not deterministic, so
// seeds are tried until one solves, and every run must have learned (a 100-episode mean of 300
// or more) and have trained on fragments older than the newest weights.
TEST_CASE("APPO solves CartPole-v1 with worker processes", "[learning][appo][distributed]") {
  check_solves_with_workers("cartpole-appo.yaml", [](const nlohmann::json& row) {
    CHECK(row.at("learner").at("policy_lag").at("max").get<int>() >= 1);
    CHECK(row.at("sampler").at("worker_idle_share").is_number());
  });
}

}  // namespace rlx

namespace rlx {
namespace {

// One seed of experiments/pendulum-sac.yaml, synchronous (deterministic under its seed), stopped
// after 15k steps: its policy run deterministically (the tanh of the mean) scores -200 or better
// over 20 episodes. Seeds 0-5 on this machine (2026-12-01) scored -170, -167, -167, -175, -168,
// -167 after the 15k steps (after 10k, seeds 0-2: -252, -177, -174).
void check_sac_learns_pendulum(int seed) {
  std::optional<EvaluationResult> evaluation;
  const TrainOutcome outcome = train_example(
      "pendulum-sac.yaml",
      {"stop.episode_return_mean=null", "stop.timesteps_total=15000", "seed=" + std::to_string(seed)}, &evaluation);
  INFO("seed " << seed << ": " << outcome.final_row.dump());
  CHECK(outcome.final_row.at("timesteps_total").get<int64_t>() == 15000);
  REQUIRE(evaluation);
  INFO("deterministic evaluation: " << evaluation->return_mean);
  CHECK(evaluation->return_mean >= -200.0);
}

}  // namespace

// One test case per seed, so ctest runs them side by side.
TEST_CASE("SAC learns Pendulum-v1 synchronously, seed 0", "[learning][sac]") { check_sac_learns_pendulum(0); }
TEST_CASE("SAC learns Pendulum-v1 synchronously, seed 1", "[learning][sac]") { check_sac_learns_pendulum(1); }
TEST_CASE("SAC learns Pendulum-v1 synchronously, seed 2", "[learning][sac]") { check_sac_learns_pendulum(2); }

}  // namespace rlx
