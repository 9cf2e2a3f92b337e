// What a user sees when something goes wrong in `rlx train`: an env that breaks the env API's
// contract (NaN, infinity, a write out of bounds, a wrong spec), a worker that crashes, an env
// that throws. Each names env, worker, step and field, exits with the right status, and leaves
// result.json, the workers' logs and (where the learner is sound) a final checkpoint behind.
#include <catch2/catch.hpp>

#include <cstdio>
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "run_rlx.h"
#include "../core/test_util.h"

namespace {

namespace fs = std::filesystem;
using rlx::test::run_rlx;

// A PPO experiment on one of the misbehaving test plugin's envs (tests/plugins/misbehaving.cc:
// each misbehaves at step 7 of an env's third 50-step episode, i.e. in the second iteration).
fs::path write_experiment(const rlx::test::TempDir& tmp, const std::string& env, int workers) {
  const fs::path file = tmp / "bad.yaml";
  rlx::test::write_text(file, "bad:\n  env: " + env + "\n  algorithm: PPO\n  stop: {training_iteration: 4}\n"
                              "  plugins: [" + std::string(RLX_TEST_PLUGIN_MISBEHAVING) + "]\n"
                              "  config: {num_workers: " + std::to_string(workers) +
                              ", num_envs_per_worker: 4, rollout_fragment_length: 64, minibatch_size: 64, "
                              "num_epochs: 1, max_worker_restarts: 1, checkpoint_freq: 0}\n");
  return file;
}

// `rlx train` of the experiment into tmp/runs, trial "t".
rlx::test::CommandOutput train(const rlx::test::TempDir& tmp, const std::string& env, int workers,
                               const std::string& extra = "") {
  return run_rlx("train " + write_experiment(tmp, env, workers).string() + " --output " + (tmp / "runs").string() +
                 " --trial-name t -q " + extra);
}

nlohmann::json result_of(const rlx::test::TempDir& tmp) {
  return nlohmann::json::parse(rlx::test::read_text_file((tmp / "runs/bad/t/result.json").string()));
}

}  // namespace

TEST_CASE("A NaN observation stops the run with exit 2, naming env, worker, step and field", "[cli][failure]") {
  SECTION("from a worker process") {
    rlx::test::TempDir tmp;
    const auto r = train(tmp, "NanObs-v0", 1);
    INFO(r.out << r.err);
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains("worker 1 (pid") && Catch::Contains("NanObs-v0) exited: exit status 2"));
    CHECK_THAT(r.err, Catch::Contains("env 0: NanObs-v0: step (episode step 7): observation[2] is nan, not finite"));
    CHECK_THAT(r.err, Catch::Contains("results: " + (tmp / "runs/bad/t").string()));
    const nlohmann::json result = result_of(tmp);
    CHECK(result["stopped_by"] == "error");
    CHECK_THAT(result["error"].get<std::string>(), Catch::Contains("observation[2] is nan"));
    // The worker's own account is in its log, in the trial directory: its start, and the error that ended it.
    const std::string log = rlx::test::read_text_file((tmp / "runs/bad/t/logs/worker_1.log").string());
    CHECK_THAT(log, Catch::Contains("] [worker 1] [info] rlx 0.1.0 worker 1 starting: pid "));
    CHECK_THAT(log, Catch::Contains("] [worker 1] [error] ") && Catch::Contains("observation[2] is nan"));
  }
  SECTION("in the learner's process (num_workers: 0), with a final checkpoint") {
    rlx::test::TempDir tmp;
    const auto r = train(tmp, "NanObs-v0", 0);
    INFO(r.out << r.err);
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains("in-process sampler (num_workers: 0): env 0: NanObs-v0: step (episode step 7): "
                                      "observation[2] is nan, not finite"));
    const nlohmann::json result = result_of(tmp);
    CHECK(result["training_iteration"] == 1);  // the first iteration finished, the second failed
    CHECK(result["checkpoint_note"] == "written after the failure");
    CHECK(fs::exists(tmp / "runs/bad/t/checkpoints/checkpoint_000001/checkpoint.json"));
  }
}

TEST_CASE("An infinite reward, a write out of bounds and a wrong spec are input errors too", "[cli][failure]") {
  rlx::test::TempDir tmp;
  auto r = train(tmp, "InfReward-v0", 0);
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("InfReward-v0: step (episode step 7): reward is inf, not finite"));
  fs::remove_all(tmp / "runs");
  r = train(tmp, "Overflow-v0", 1);
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("Overflow-v0: step (episode step 1): observation[5] was written, past the "
                                    "observation's 5 elements"));
  fs::remove_all(tmp / "runs");
  r = train(tmp, "WrongSpec-v0", 0);
  INFO(r.err);
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("an instance's spec differs from the registered one") &&
                        Catch::Contains("registered: WrongSpec-v0: observations Box(-10, 10, (5,), float32)") &&
                        Catch::Contains("instance:   WrongSpec-v0: observations Box(-10, 10, (4,), float32)"));
}

TEST_CASE("drop_nonfinite_episodes: episodes with a NaN step are dropped and counted, the run goes on", "[cli][failure]") {
  for (const int workers : {0, 1}) {
    INFO("workers " << workers);
    rlx::test::TempDir tmp;
    const auto r = train(tmp, "NanObs-v0", workers, "--set drop_nonfinite_episodes=true");
    INFO(r.out << r.err);
    CHECK(r.exit_code == 3);  // the budget (4 iterations) ended it
    const nlohmann::json result = result_of(tmp);
    CHECK(result["training_iteration"] == 4);
    CHECK(result["sampler"]["episodes_dropped_nonfinite"].get<int64_t>() >= 4);
    // The fragments mark the dropped episodes, so the learner never takes them for short (7-step)
    // truncations: the episodes it counts are the whole 50-step ones before the env went bad.
    CHECK(result["episodes_total"].get<int64_t>() >= 1);
    CHECK(result["episode_len_mean"] == 50.0);
  }
}

TEST_CASE("A crashing worker is restarted and reported with its id, env, restart count and log", "[cli][failure]") {
  rlx::test::TempDir tmp;
  const auto r = train(tmp, "Crash-v0", 1);
  INFO(r.out << r.err);
  CHECK(r.exit_code == 1);
  CHECK_THAT(r.err, Catch::Contains("worker 1 (pid") && Catch::Contains("Crash-v0) exited: killed by signal 6"));
  CHECK_THAT(r.err, Catch::Contains("restarted (restart 1 of 1)"));
  CHECK_THAT(r.err, Catch::Contains("its last lines in " + (tmp / "runs/bad/t/logs/worker_1.log").string()));
  CHECK_THAT(r.err, Catch::Contains("the restart budget (max_worker_restarts = 1) is spent"));
  const nlohmann::json result = result_of(tmp);
  CHECK(result["stopped_by"] == "error");
  CHECK(result["sampler"]["worker_restarts"] == 1);
  // A fatal error keeps the iterations done: the learner was sound, so they are checkpointed.
  REQUIRE(result["training_iteration"] >= 1);
  char name[32];
  std::snprintf(name, sizeof name, "checkpoint_%06d", result["training_iteration"].get<int>());
  CHECK(result["last_checkpoint"] == (tmp / "runs/bad/t/checkpoints" / name).string());
  CHECK(result["checkpoint_note"] == "written after the failure");
  const std::string log = rlx::test::read_text_file((tmp / "runs/bad/t/logs/worker_1.log").string());
  CHECK_THAT(log, Catch::Contains("start 1 of worker 1") && Catch::Contains("start 2 of worker 1"));
  CHECK_THAT(log, Catch::Contains("] [worker 1] [info] joined the learner at "));
}

TEST_CASE("An env that throws in the learner's process still leaves result.json and a checkpoint", "[cli][failure]") {
  rlx::test::TempDir tmp;
  const auto r = train(tmp, "Throws-v0", 0);
  INFO(r.out << r.err);
  CHECK(r.exit_code == 1);
  CHECK_THAT(r.err, Catch::Contains("Throws-v0 broke at episode 3"));
  CHECK_THAT(r.err, Catch::Contains("last checkpoint: " + (tmp / "runs/bad/t/checkpoints/checkpoint_000001").string()));
  const nlohmann::json result = result_of(tmp);
  CHECK(result["error"] == "Throws-v0 broke at episode 3");
  CHECK(result["timesteps_total"] == 256);
}
