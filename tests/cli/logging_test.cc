// Logs as a user finds them: `rlx train` leaves its own log and each worker's in the run's
// logs/, --log-level chooses the lines on stderr and in the files alike and reaches the workers.
#include <catch2/catch.hpp>

#include <filesystem>
#include <string>

#include "run_rlx.h"
#include "../core/test_util.h"

namespace {

namespace fs = std::filesystem;
using rlx::test::read_text_file;
using rlx::test::run_rlx;

const std::string kCartPole = std::string(RLX_SOURCE_DIR) + "/experiments/cartpole-ppo.yaml";

// `rlx train` of CartPole PPO for 2 short iterations into tmp/runs, trial "t".
rlx::test::CommandOutput train(const rlx::test::TempDir& tmp, int workers, const std::string& extra = "") {
  return run_rlx("train " + kCartPole + " --workers " + std::to_string(workers) +
                 " --set stop.training_iteration=2 --set num_envs_per_worker=4 --set rollout_fragment_length=32 "
                 "--set minibatch_size=64 --set num_epochs=1 --output " + (tmp / "runs").string() +
                 " --trial-name t " + extra);
}

std::string log_of(const rlx::test::TempDir& tmp, const std::string& name) {
  return read_text_file((tmp / "runs/cartpole-ppo/t/logs" / name).string());
}

}  // namespace

TEST_CASE("rlx train leaves its own log and each worker's in the run's logs/, and -q keeps its lines off stderr", "[cli][log]") {
  rlx::test::TempDir tmp;
  const auto r = train(tmp, 2);
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 3);
  CHECK(rlx::test::names_in(tmp / "runs/cartpole-ppo/t/logs") ==
        std::vector<std::string>{"driver.log", "worker_1.log", "worker_2.log"});
  CHECK_FALSE(fs::exists(tmp / "runs/cartpole-ppo/t/workers"));
  // stderr: the plain line (then the progress line); driver.log: the same with time, role and level.
  CHECK_THAT(r.err, Catch::StartsWith("rlx train: workers connect to ipc://") && Catch::Contains("\n[PPO CartPole-v1] iter "));
  // The queue's bound reads as a bound, scaled to the workers the run has, not only to max_workers.
  CHECK_THAT(r.err, Catch::Contains("(2 local, at most 1024 at once)") &&
                        Catch::Contains("rlx train: queued fragments: a bound of ") &&
                        Catch::Contains(" with the local workers, ") &&
                        Catch::Contains(" with max_workers 1024: memory is taken only as fragments arrive"));
  const std::string driver = log_of(tmp, "driver.log");
  CHECK_THAT(driver, Catch::Contains("] [driver] [info] rlx 0.1.0 train, pid ") &&
                         Catch::Contains("] [driver] [info] workers connect to ipc://") &&
                         Catch::Contains("] [driver] [info] iteration 2: timesteps_total ") &&
                         Catch::Contains("] [driver] [info] stopped by training_iteration at iteration 2"));
  // -q: no progress line, and the lines that go with it only in driver.log.
  rlx::test::TempDir quiet;
  // (and the workers' learner timeout comes from the config key)
  const auto q = train(quiet, 1, "-q --set worker_learner_timeout_s=7.5");
  CHECK(q.exit_code == 3);
  CHECK(q.err.empty());
  CHECK_THAT(log_of(quiet, "driver.log"), Catch::Contains("] [driver] [info] workers connect to ipc://"));
  CHECK_THAT(log_of(quiet, "worker_1.log"), Catch::Contains(", learner timeout 7.5 s"));
  int stopped = 0;
  for (const int worker : {1, 2}) {
    const std::string id = std::to_string(worker);
    const std::string log = log_of(tmp, "worker_" + id + ".log");
    INFO(log);
    CHECK_THAT(log, Catch::StartsWith("=== ") && Catch::Contains(": start 1 of worker " + id + " ==="));
    CHECK_THAT(log, Catch::Contains("] [worker " + id + "] [info] rlx 0.1.0 worker " + id + " starting: pid ") &&
                        Catch::Contains("connecting to ipc://") && Catch::Contains(", learner timeout 60 s"));
    CHECK_THAT(log, Catch::Contains("] [worker " + id + "] [info] joined the learner at ipc://") &&
                        Catch::Contains("CartPole-v1 x 4 envs, fragments of 32 steps"));
    CHECK_THAT(log, !Catch::Contains("[debug]"));
    // (a worker that joins as the run ends may be stopped by SIGTERM before the learner's word)
    stopped += log.find("] [worker " + id + "] [info] stopped by the learner (fragments_sent=") != std::string::npos;
  }
  CHECK(stopped >= 1);
}

TEST_CASE("A debug log level shows debug lines, in the workers' logs too, and a warn level hides info lines", "[cli][log]") {
  {
    rlx::test::TempDir tmp;
    const auto r = train(tmp, 1, "-q --log-level debug");
    INFO(r.out << r.err);
    REQUIRE(r.exit_code == 3);
    CHECK_THAT(r.err, Catch::StartsWith("rlx train: debug: iteration 1: learner {"));
    CHECK_THAT(log_of(tmp, "driver.log"), Catch::Contains("] [driver] [debug] iteration 2: learner {"));
    CHECK_THAT(log_of(tmp, "worker_1.log"), Catch::Contains("] [worker 1] [debug] policy version 1 ("));
  }
  {
    rlx::test::TempDir tmp;
    const auto r = run_rlx("--log-level=warn train " + kCartPole +
                           " --workers 1 --set stop.training_iteration=1 --output " + (tmp / "runs").string() +
                           " --trial-name t");
    INFO(r.out << r.err);
    REQUIRE(r.exit_code == 3);
    CHECK_THAT(r.err, Catch::StartsWith("[PPO CartPole-v1] iter 1 ") && !Catch::Contains("rlx train:"));
    CHECK_THAT(log_of(tmp, "driver.log"), !Catch::Contains("[info]"));
    CHECK_THAT(log_of(tmp, "worker_1.log"), !Catch::Contains("[info]"));
  }
}

TEST_CASE("The --log-level option takes one of six levels", "[cli][log]") {
  const auto r = run_rlx("train --log-level loud");
  CHECK(r.exit_code == 2);
  CHECK(r.err == "rlx: --log-level: log level 'loud' is not one of trace, debug, info, warn, error, off\n");
  const auto missing = run_rlx("envs list --log-level");
  CHECK(missing.exit_code == 2);
  CHECK_THAT(missing.err, Catch::Contains("--log-level needs a level"));
  const auto help = run_rlx("--help");
  CHECK_THAT(help.out, Catch::Contains("--log-level trace|debug|info|warn|error|off"));
}

TEST_CASE("A run's failure is in driver.log too, and a rerun of a trial that trained nothing reuses its logs/", "[cli][log]") {
  rlx::test::TempDir tmp;
  const fs::path experiment = tmp / "dqn.yaml";
  // DQN with 2 learners and a batch they cannot split: refused after the trial's log opened.
  rlx::test::write_text(experiment, "dqn:\n  env: CartPole-v1\n  algorithm: DQN\n  stop: {training_iteration: 1, timesteps_total: 100000}\n"
                                    "  config: {num_workers: 0, num_learners: 2, batch_size: 33}\n");
  const std::string args = "train " + experiment.string() + " --output " + (tmp / "runs").string() + " --trial-name t -q";
  const auto r = run_rlx(args);
  INFO(r.out << r.err);
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("batch_size 33 must be a multiple of num_learners 2"));
  const std::string driver = read_text_file((tmp / "runs/dqn/t/logs/driver.log").string());
  CHECK_THAT(driver, Catch::Contains("] [driver] [error] the run ends with an error: batch_size 33 must be a multiple"));
  const auto again = run_rlx(args);
  CHECK(again.exit_code == 2);
  CHECK_THAT(again.err, !Catch::Contains("exists already"));
}
