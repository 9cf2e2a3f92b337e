// PBT exploiting a donor that already met the stop criterion: the receiving trial holds the
// donor's weights, so its segment trains nothing, and what it reports (result.json, the final
// line, the tuner's table and trials.csv) must describe those weights, not the trial's last row.
#include <catch2/catch.hpp>

#include <numeric>

#include "core/atomic_file.h"
#include "core/checkpoint_dir.h"
#include "core/config_schema.h"
#include "tests/cli/run_rlx.h"
#include "tests/core/test_util.h"
#include "tune/exploit.h"

namespace rlx {
namespace {

namespace fs = std::filesystem;

// cartpole-ppo, synchronous and seeded, into OUTPUT/cartpole-ppo/TRIAL.
test::CommandOutput train(const fs::path& output, const std::string& trial, const std::string& sets) {
  return test::run_rlx("train " + std::string(RLX_SOURCE_DIR) + "/experiments/cartpole-ppo.yaml --workers 0 --seed 2 " +
                       sets + " --output " + output.string() + " --trial-name " + trial + " -q");
}

double window_mean(const Checkpoint& checkpoint) {
  const auto& returns = checkpoint.manifest.at("episode_window").at("returns");
  double sum = 0.0;
  for (const auto& value : returns) sum += value.get<double>();
  return sum / static_cast<double>(returns.size());
}

TEST_CASE("a trial that exploited a finished donor reports the donor's weights' score, not its own last row", "[tune]") {
  test::TempDir tmp;
  const fs::path runs = tmp / "runs";
  // The donor solves a low bar; the receiver, whose lr is too small to learn, spends its budget.
  REQUIRE(train(runs, "donor", "--set stop.episode_return_mean=60").exit_code == 0);
  REQUIRE(train(runs, "receiver", "--set lr=1e-9 --set lr_schedule=constant --set stop.timesteps_total=3072").exit_code == 3);
  const fs::path donor_dir = runs / "cartpole-ppo" / "donor";
  const fs::path receiver_dir = runs / "cartpole-ppo" / "receiver";
  const fs::path donor_checkpoint = *latest_checkpoint(donor_dir);
  const fs::path receiver_checkpoint = *latest_checkpoint(receiver_dir);
  const nlohmann::json own_result = nlohmann::json::parse(read_file(receiver_dir / "result.json"));
  const double donor_score = window_mean(read_checkpoint_dir(donor_checkpoint));
  REQUIRE(donor_score >= 60);
  REQUIRE(own_result.at("episode_return_mean").get<double>() < 60);

  exploit_checkpoint(donor_checkpoint, receiver_checkpoint, nlohmann::json{{"lr", 0.001}}, "donor");
  const auto resumed = test::run_rlx("train --resume " + receiver_checkpoint.string() + " -q");
  INFO(resumed.out << resumed.err);
  REQUIRE(resumed.exit_code == 0);  // the reward criterion is met by the weights it holds
  const nlohmann::json result = nlohmann::json::parse(read_file(receiver_dir / "result.json"));
  CHECK(result.at("stopped_by") == "episode_return_mean");
  CHECK(result.at("stop_reached") == true);
  CHECK(result.at("episode_return_mean").get<double>() == Approx(donor_score).epsilon(1e-12));
  CHECK(result.at("exploited_from").at("trial") == "donor");
  // The counters stay the receiver's: it trained 3072 steps of its own.
  CHECK(result.at("timesteps_total") == own_result.at("timesteps_total"));
  CHECK(result.at("training_iteration") == own_result.at("training_iteration"));
  CHECK(result.at("last_checkpoint") == receiver_checkpoint.string());
  // The final line says the same.
  CHECK_THAT(resumed.out, Catch::Contains("episode_return_mean"));
  CHECK_THAT(resumed.out, !Catch::Contains(own_result.at("episode_return_mean").dump()));
}

// Two CartPole PPO trials: trial_00000 learns and meets the reward bar before the PBT boundary;
// trial_00001 cannot learn (lr 1e-9) and, at the boundary, exploits the finished one.
const char* kFinishedDonorYaml = R"(finished-donor:
  env: CartPole-v1
  algorithm: PPO
  stop: {episode_return_mean: 60, timesteps_total: 24576}
  config:
    num_workers: 0
    num_envs_per_worker: 8
    rollout_fragment_length: 64
    minibatch_size: 128
    num_epochs: 10
    lr_schedule: constant
    checkpoint_freq: 0
    seed: 1
  tune:
    num_samples: 1
    max_concurrent_trials: 2
    seed: 1
    param_space:
      lr: {grid_search: [0.001, 1.0e-9]}
    scheduler:
      type: pbt
      time_attr: timesteps_total
      perturbation_interval: 16384
      quantile_fraction: 0.5
      synch: true
      hyperparam_mutations:
        lr: [1.0e-9]
)";

TEST_CASE("rlx tune: a trial that exploited a finished donor is listed with the donor's score everywhere", "[tune]") {
  test::TempDir tmp;
  test::write_text(tmp / "pbt.yaml", kFinishedDonorYaml);
  const auto run = test::run_rlx("tune " + (tmp / "pbt.yaml").string() + " --output " + (tmp / "runs").string());
  INFO(run.out << run.err);
  REQUIRE(run.exit_code == 0);
  const fs::path dir = tmp / "runs" / "finished-donor";
  const nlohmann::json state = nlohmann::json::parse(read_file(dir / "experiment_state.json"));
  const auto& donor = state.at("trials").at(0);
  const auto& receiver = state.at("trials").at(1);
  INFO(state.dump(2));
  REQUIRE(donor.at("status") == "TERMINATED");
  REQUIRE(donor.at("stopped_by") == "episode_return_mean");
  // The receiver took the finished donor's last checkpoint, then ended at once on it.
  const auto log = read_pbt_log(dir / "pbt_log.jsonl");
  REQUIRE(log.size() == 1);
  CHECK(log.front().at("trial") == "trial_00001");
  CHECK(log.front().at("donor_checkpoint") == donor.at("checkpoint"));
  const double donor_score = donor.at("checkpoint_metric").get<double>();
  CHECK(donor_score >= 60);
  CHECK(receiver.at("status") == "TERMINATED");
  CHECK(receiver.at("stopped_by") == "episode_return_mean");
  CHECK(receiver.at("metric").get<double>() == donor_score);
  CHECK(receiver.at("checkpoint_metric").get<double>() == donor_score);
  CHECK(receiver.at("best_metric").get<double>() >= donor_score);
  const nlohmann::json result = nlohmann::json::parse(read_file(dir / "trial_00001" / "result.json"));
  CHECK(result.at("episode_return_mean").get<double>() == donor_score);
  CHECK(result.at("stop_reached") == true);
  // trials.csv's row of the receiver carries the same score.
  const std::string csv = read_file(dir / "trials.csv");
  const size_t row = csv.find("\ntrial_00001,");
  REQUIRE(row != std::string::npos);
  CHECK_THAT(csv.substr(row, csv.find('\n', row + 1) - row), Catch::Contains(format_double(donor_score)));
}

}  // namespace
}  // namespace rlx
