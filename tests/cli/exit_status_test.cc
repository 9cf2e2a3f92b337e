// One exit status per kind of error, whichever command meets it: a plugin that cannot be loaded,
// a missing experiment file, a path that holds no checkpoint and an unknown env id are bad input
// (status 2) in every command that takes them.
#include <catch2/catch.hpp>

#include <filesystem>
#include <string>
#include <vector>

#include "run_rlx.h"
#include "../core/test_util.h"

namespace {

namespace fs = std::filesystem;
using rlx::test::run_rlx;

// One quick tuning run on the test plugin's env: a trial of one iteration.
const char* kTinyTuneYaml = R"(tiny-tune:
  env: PluginCounter-v0
  algorithm: PPO
  stop: {timesteps_total: 128}
  config: {num_workers: 0, num_envs_per_worker: 2, rollout_fragment_length: 64, minibatch_size: 64, num_epochs: 1}
  tune: {num_samples: 1}
)";

// A trained CartPole checkpoint, a tuning run and its trial, made once for all the checks below.
struct Runs {
  std::string experiment = std::string(RLX_SOURCE_DIR) + "/experiments/cartpole-ppo.yaml";
  std::string checkpoint;
  std::string tune_file;
  std::string tune_dir;
};

Runs make_runs(const rlx::test::TempDir& tmp) {
  Runs runs;
  auto r = run_rlx("train " + runs.experiment + " --workers 0 --set stop.training_iteration=1 --output " +
                   (tmp / "runs").string() + " --trial-name t -q");
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 3);
  runs.checkpoint = (tmp / "runs/cartpole-ppo/t/checkpoints/checkpoint_000001").string();
  runs.tune_file = (tmp / "tune.yaml").string();
  rlx::test::write_text(runs.tune_file, kTinyTuneYaml);
  r = run_rlx("tune " + runs.tune_file + " --output " + (tmp / "runs").string() + " --quiet --env-plugin " +
              RLX_TEST_PLUGIN_GOOD);
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  runs.tune_dir = (tmp / "runs/tiny-tune").string();
  return runs;
}

// Every command that loads env plugins (--env-plugin goes after each).
std::vector<std::string> plugin_commands(const Runs& runs, const rlx::test::TempDir& tmp) {
  const std::string out = " --output " + (tmp / "other").string();
  return {"train " + runs.experiment + " --workers 0 -q" + out,
          "train --resume " + runs.checkpoint + " -q" + out,
          "tune " + runs.tune_file + " --quiet" + out,
          "tune --resume " + runs.tune_dir + " --quiet",
          "tune --replay " + runs.tune_dir + "/trial_00000",
          "evaluate " + runs.checkpoint + " --episodes 1",
          "export " + runs.checkpoint + " -o " + (tmp / "policy.rlxp").string(),
          "worker --connect tcp://127.0.0.1:9 --learner-timeout 1",
          "envs list",
          "envs info CartPole-v1",
          "envs rollout CartPole-v1 --seed 1 --steps 1",
          "envs bench CartPole-v1 --steps 100 --repeats 1",
          "bench sampling --env CartPole-v1 --workers 1 --seconds 0.2"};
}

}  // namespace

TEST_CASE("A plugin that cannot be loaded exits with status 2 in every command", "[cli][plugins]") {
  rlx::test::TempDir tmp;
  const Runs runs = make_runs(tmp);
  for (const std::string& plugin : std::vector<std::string>{"nothere.so", RLX_TEST_PLUGIN_WRONG_ABI,
                                                            RLX_TEST_PLUGIN_NO_SYMBOLS}) {
    for (const std::string& command : plugin_commands(runs, tmp)) {
      const auto r = run_rlx(command + " --env-plugin " + plugin);
      INFO("rlx " << command << " --env-plugin " << plugin << "\n" << r.out << r.err);
      CHECK(r.exit_code == 2);
      CHECK_THAT(r.err, Catch::Contains(fs::path(plugin).filename().string()));
    }
  }
  CHECK_FALSE(fs::exists(tmp / "other"));  // refused before any run started
}

TEST_CASE("A missing experiment file, a path without a checkpoint and an unknown env id exit with status 2 everywhere",
          "[cli]") {
  rlx::test::TempDir tmp;
  const Runs runs = make_runs(tmp);
  fs::create_directories(tmp / "empty");
  const std::string empty = (tmp / "empty").string();
  const std::string out = " --output " + (tmp / "other").string();
  const std::string policy = " -o " + (tmp / "p.rlxp").string();
  const std::vector<std::string> commands = {
      // a missing experiment file
      "train nothere.yaml -q" + out,
      "tune nothere.yaml --quiet" + out,
      // a checkpoint path that is not there, or a folder that holds none
      "train --resume nothere -q" + out,
      "evaluate nothere",
      "export nothere" + policy,
      "train --resume " + empty + " -q" + out,
      "evaluate " + empty,
      "export " + empty + policy,
      // a folder that is no tuning run, nor a trial of one
      "tune --resume " + empty + " --quiet",
      "tune --replay " + empty,
      // an unknown env id
      "train " + runs.experiment + " --workers 0 --set env=NoSuchEnv-v0 -q" + out,
      "train --resume " + runs.checkpoint + " --set env=NoSuchEnv-v0 -q" + out,
      "evaluate " + runs.checkpoint + " --env NoSuchEnv-v0",
      "envs info NoSuchEnv-v0",
      "envs rollout NoSuchEnv-v0 --seed 1",
      "envs bench NoSuchEnv-v0",
      "bench sampling --env NoSuchEnv-v0 --workers 1"};
  for (const std::string& command : commands) {
    const auto r = run_rlx(command);
    INFO("rlx " << command << "\n" << r.out << r.err);
    CHECK(r.exit_code == 2);
  }
  CHECK_FALSE(fs::exists(tmp / "other"));
}
