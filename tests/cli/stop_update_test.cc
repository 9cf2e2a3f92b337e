// SIGTERM while the learner's update runs longer than half the grace period (RLX_STOP_GRACE_S=2
// here, updates of several seconds): the update gives up in time, so `rlx train` ends as a clean
// signal stop (exit 6, never the watchdog's kill), with result.json saying what was abandoned and
// a checkpoint of the last complete iteration written then (checkpoint_freq is far away), which
// --resume continues. PPO's update is undone whole (the native learner in `rlx`, LibTorch's in
// rlx-torch); SAC stops between whole gradient steps and takes the rest after the resume.
#include <catch2/catch.hpp>

#include <signal.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/checkpoint_dir.h"
#include "run_rlx.h"
#include "../core/test_util.h"

namespace {

namespace fs = std::filesystem;
using rlx::test::json_lines;
using rlx::test::read_text_file;

// PPO on CartPole whose update is several seconds of minibatch steps (8192 samples, [256, 256]
// networks, many epochs) and whose sampling is a blink; no checkpoint before iteration 1000.
std::string long_ppo_update(const std::string& backend, int epochs) {
  return "long-update:\n  env: CartPole-v1\n  algorithm: PPO\n  stop: {training_iteration: 1000000}\n"
         "  config: {learner_backend: " + backend + ", num_workers: 0, checkpoint_freq: 1000, tensorboard: false, "
         "num_envs_per_worker: 8, rollout_fragment_length: 1024, train_batch_size: 8192, minibatch_size: 256, "
         // one thread, so that a machine with more cores does not finish the update before the stop is due
         "learner_threads: 1, "
         "num_epochs: " + std::to_string(epochs) + ", hidden_sizes: [256, 256]}\n";
}

// SAC on Pendulum: iteration 1 stores 1000 random steps (learning_starts: no gradient step yet),
// iteration 2 takes 500 gradient steps of batch 256 on [256, 256] networks, several seconds.
const std::string kLongSacSteps =
    "long-update:\n  env: Pendulum-v1\n  algorithm: SAC\n  stop: {training_iteration: 1000000}\n"
    "  config: {num_workers: 0, checkpoint_freq: 1000, tensorboard: false, num_envs_per_worker: 1, "
    "rollout_fragment_length: 1000, learning_starts: 1000, utd_ratio: 0.5, batch_size: 256}\n";

nlohmann::json read_json(const fs::path& path) { return nlohmann::json::parse(read_text_file(path.string())); }

// Trains `experiment_yaml` in tmp (trial "t") with RLX_STOP_GRACE_S=2 and sends SIGTERM once
// iteration 1 is in result.jsonl and iteration 2 has begun (its sampling is far shorter than a
// second, its learning several seconds). Checks the clean signal stop that must follow, with the checkpoint of
// iteration 1 written after the stop, and returns result.json.
nlohmann::json stop_during_update(const rlx::test::TempDir& tmp, const std::string& experiment_yaml) {
  const fs::path experiment = tmp / "long.yaml", trial = tmp / "runs/long-update/t";
  rlx::test::write_text(experiment, experiment_yaml);
  auto train = rlx::test::start_rlx({"train", experiment.string(), "--output", (tmp / "runs").string(), "--trial-name",
                                     "t", "-q"},
                                    tmp / "train.log", {{"RLX_STOP_GRACE_S", "2"}});
  REQUIRE(rlx::test::wait_for([&] { return rlx::test::lines_in((trial / "result.jsonl").string()) >= 1; },
                              std::chrono::seconds(120)));
  // Past the loop's check between iterations (a signal before it stops the run there, no update
  // cut short); whether iteration 2 still samples or already learns then, its learning outlasts
  // the second after which the stop is overdue.
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  ::kill(train->pid(), SIGTERM);
  const std::optional<rlx::ChildExit> exit = rlx::test::exit_within(*train, std::chrono::seconds(60));
  const std::string log = read_text_file((tmp / "train.log").string());
  INFO(log);
  REQUIRE(exit.has_value());
  CHECK(exit->describe() == "exit status 6");  // the watchdog's end would be "killed by signal 15"
  CHECK_THAT(log, !Catch::Contains("the stop took longer than"));
  const nlohmann::json result = read_json(trial / "result.json");
  INFO(result.dump());
  CHECK(result.at("stopped_by") == "signal");
  CHECK(result.at("signal") == "SIGTERM");
  CHECK(result.at("training_iteration") == 1);
  CHECK(result.at("checkpoint_note") == "written after the stop");
  const fs::path checkpoint = rlx::checkpoint_path(trial, 1);
  CHECK(result.at("last_checkpoint") == checkpoint.string());
  CHECK(rlx::read_checkpoint_dir(checkpoint).manifest.at("counters").at("training_iteration") == 1);
  CHECK(rlx::test::lines_in((trial / "result.jsonl").string()) == 1);
  return result;
}

// --resume of the checkpoint with `overrides`, to iteration 2; returns its rows.
std::vector<nlohmann::json> resume_to_iteration_2(const rlx::test::TempDir& tmp, const std::string& overrides) {
  const fs::path trial = tmp / "runs/long-update/t";
  const auto resumed = rlx::test::run_rlx("train --resume " + rlx::checkpoint_path(trial, 1).string() +
                                          " --set stop.training_iteration=2 " + overrides + " -q");
  INFO(resumed.out << resumed.err);
  CHECK(resumed.exit_code == 3);
  const std::vector<nlohmann::json> rows = json_lines(read_text_file((trial / "result.jsonl").string()));
  REQUIRE(rows.size() == 2);
  CHECK(rows[0].at("training_iteration") == 1);
  CHECK(rows[1].at("training_iteration") == 2);
  return rows;
}

}  // namespace

TEST_CASE("SIGTERM during a long PPO update abandons it and rlx train checkpoints the last complete iteration",
          "[cli][stop]") {
  // The native learner runs in rlx; LibTorch's in rlx-torch, which rlx hands the run to (same pid).
  for (const auto& [backend, epochs] : {std::pair<std::string, int>{"native", 60}, {"torch", 45}}) {
    INFO("learner_backend " << backend);
    rlx::test::TempDir tmp;
    const nlohmann::json result = stop_during_update(tmp, long_ppo_update(backend, epochs));
    CHECK_THAT(result.at("interrupted").get<std::string>(),
               Catch::StartsWith("the PPO update was abandoned before epoch") &&
                   Catch::EndsWith("the learner is back as it was before the update"));
    CHECK(result.at("timesteps_total") == 8192);  // the abandoned iteration's samples are discarded
    // The resumed run's iteration 2 (one epoch, short) is the learner's second update.
    const std::vector<nlohmann::json> rows = resume_to_iteration_2(tmp, "--set num_epochs=1");
    CHECK(rows[1].at("learner").at("policy_version") == 3);
    CHECK(rows[1].at("timesteps_total") == 2 * 8192);
  }
}

TEST_CASE("SIGTERM during SAC's gradient steps stops between them, and the resumed run takes the ones left",
          "[cli][stop]") {
  rlx::test::TempDir tmp;
  const nlohmann::json result = stop_during_update(tmp, kLongSacSteps);
  const std::string note = result.at("interrupted").get<std::string>();
  const std::string prefix = "SAC stopped after ";
  REQUIRE_THAT(note, Catch::StartsWith(prefix) && Catch::Contains(" of 500 gradient steps due"));
  const int64_t taken = std::stoll(note.substr(prefix.size()));
  CHECK(taken < 500);
  CHECK(result.at("timesteps_total") == 2000);  // the iteration's stored steps count: the learner took them in
  // Resumed with utd_ratio 0.05, 3000 steps received call for 100 gradient steps in all: those
  // taken before the stop count.
  const std::vector<nlohmann::json> rows = resume_to_iteration_2(tmp, "--set utd_ratio=0.05");
  CHECK(rows[1].at("learner").at("num_gradient_steps") == std::max<int64_t>(100, taken));
  CHECK(rows[1].at("timesteps_total") == 3000);
}
