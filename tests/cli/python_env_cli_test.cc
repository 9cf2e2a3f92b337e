// Python envs from the CLI: PPO solves the Python CartPole (examples/python_env) in worker
// processes; `rlx envs` works on Python envs; a Python exception in a worker's env ends that worker
// with the traceback in its log and one line at the learner, and the pool restarts it; a wrong
// return stops the run with exit status 2, naming the env, the method and what was expected.
#include <catch2/catch.hpp>

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "run_rlx.h"
#include "../core/test_util.h"

namespace {

namespace fs = std::filesystem;
using rlx::test::run_rlx;

const std::string kExample = std::string(RLX_SOURCE_DIR) + "/examples/python_env";
const std::string kBridgeEnvs = std::string(RLX_SOURCE_DIR) + "/tests/envs/python";

// A small PPO experiment on bridge_envs.py's env `env` with env_config `env_config` (YAML flow).
fs::path write_experiment(const rlx::test::TempDir& tmp, const std::string& env, const std::string& env_config,
                          int workers) {
  const fs::path file = tmp / "py.yaml";
  rlx::test::write_text(file, "py:\n  env: python:bridge_envs:" + env + "\n  env_config: " + env_config +
                                  "\n  python_path: [" + kBridgeEnvs + "]\n  algorithm: PPO\n  stop: {timesteps_total: 2048}\n"
                                  "  config: {num_workers: " + std::to_string(workers) +
                                  ", num_envs_per_worker: 4, rollout_fragment_length: 64, train_batch_size: 512, "
                                  "minibatch_size: 128, num_epochs: 1, max_worker_restarts: 2, checkpoint_freq: 0}\n");
  return file;
}

rlx::test::CommandOutput train(const rlx::test::TempDir& tmp, const fs::path& experiment, const std::string& extra = "") {
  return run_rlx("train " + experiment.string() + " --output " + (tmp / "runs").string() + " --trial-name t -q " + extra);
}

}  // namespace

TEST_CASE("PPO solves the Python CartPole from the CLI, in worker processes, and evaluates it", "[cli][python][learning]") {
  rlx::test::TempDir tmp;
  const auto r = train(tmp, kExample + "/cartpole-ppo.yaml", "--seed 0");
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);  // 0: the reward criterion, 475
  const fs::path trial = tmp / "runs/cartpole-python-ppo/t";
  const auto result = nlohmann::json::parse(rlx::test::read_text_file((trial / "result.json").string()));
  CHECK(result.at("episode_return_mean").get<double>() >= 475.0);
  CHECK(result.at("timesteps_total").get<int64_t>() < 100000);
  // The env_config and the resolved python_path travel with the run (params.yaml, checkpoints).
  const std::string params = rlx::test::read_text_file((trial / "params.yaml").string());
  CHECK_THAT(params, Catch::Contains("env: python:cartpole_env:CartPoleEnv"));
  CHECK_THAT(params, Catch::Contains("gravity: 9.8"));
  CHECK_THAT(params, Catch::Contains("python_path: [" + kExample + "]"));
  // Both workers stepped Python envs.
  for (const char* log : {"worker_1.log", "worker_2.log"}) {
    CHECK_THAT(rlx::test::read_text_file((trial / "logs" / log).string()),
               Catch::Contains("joined the learner at") && Catch::Contains("python:cartpole_env:CartPoleEnv x 16 envs"));
  }
  // Without --trial-name the trial is named after the env, its colons replaced.
  rlx::test::TempDir named;
  const auto unnamed = run_rlx("train " + kExample + "/cartpole-ppo.yaml --output " + named.path().string() +
                               " -q --set stop.training_iteration=1");
  INFO(unnamed.err);
  CHECK(unnamed.exit_code == 3);
  for (const auto& entry : fs::directory_iterator(named / "cartpole-python-ppo")) {
    CHECK_THAT(entry.path().filename().string(), Catch::StartsWith("PPO_python-cartpole_env-CartPoleEnv_seed0_"));
  }
  const auto evaluated = run_rlx("evaluate " + result.at("last_checkpoint").get<std::string>() + " --episodes 3 --deterministic");
  INFO(evaluated.out << evaluated.err);
  REQUIRE(evaluated.exit_code == 0);
  CHECK_THAT(evaluated.out, Catch::Contains("python:cartpole_env:CartPoleEnv"));
}

TEST_CASE("rlx envs info, rollout and bench work on a Python env", "[cli][python]") {
  const std::string env = "python:cartpole_env:CartPoleEnv --python-path " + kExample;
  auto r = run_rlx("envs info " + env + " --env-config '{\"force_mag\": 5}'");
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  const auto info = nlohmann::json::parse(r.out);
  CHECK(info.at("id") == "python:cartpole_env:CartPoleEnv");
  CHECK(info.at("max_episode_steps") == 500);
  CHECK(info.at("reward_threshold") == 475.0);
  CHECK(info.at("action_space").at("n") == 2);

  r = run_rlx("envs rollout " + env + " --seed 3 --steps 4 --actions 1,1,0,1");
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(std::count(r.out.begin(), r.out.end(), '\n') == 5);  // the first observation, then one line per step

  r = run_rlx("envs bench " + env + " --steps 2000 --repeats 1");
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("env_steps_per_s="));

  r = run_rlx("envs info python:cartpole_env:CartPoleEnv");  // no --python-path: not found, with the fix
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("cannot import module 'cartpole_env'") && Catch::Contains("--python-path DIR"));
}

TEST_CASE("a Python exception in a worker's env: traceback in its log, one line at the learner, the worker restarted",
          "[cli][python][failure]") {
  rlx::test::TempDir tmp;
  // The first worker process to reach step 40 raises; the restarted one does not (once_file).
  const std::string config = "{at_step: 40, once_file: " + (tmp / "raised").string() + "}";
  const auto r = train(tmp, write_experiment(tmp, "RaisesInStep", config, 1));
  INFO(r.out << r.err);
  CHECK(r.exit_code == 3);  // ran to its timesteps budget
  CHECK(fs::exists(tmp / "raised"));
  CHECK_THAT(r.err, Catch::Contains("worker 1 (pid") && Catch::Contains("exited: exit status 1; restarted (restart 1 of 2)"));
  CHECK_THAT(r.err, Catch::Contains("python:bridge_envs:RaisesInStep: step raised RuntimeError: the env broke at step 40 (action"));
  const fs::path logs = tmp / "runs/py/t/logs";
  const std::string log = rlx::test::read_text_file((logs / "worker_1.log").string());
  CHECK_THAT(log, Catch::Contains("the Python traceback:") && Catch::Contains("Traceback (most recent call last):"));
  CHECK_THAT(log, Catch::Contains("bridge_envs.py\", line") && Catch::Contains("in _explode"));
  const auto result = nlohmann::json::parse(rlx::test::read_text_file((tmp / "runs/py/t/result.json").string()));
  CHECK(result.at("timesteps_total").get<int64_t>() >= 2048);
}

TEST_CASE("wrong returns and missing modules stop a Python env's run with exit status 2, named", "[cli][python][failure]") {
  SECTION("a wrong observation shape, in a worker") {
    rlx::test::TempDir tmp;
    const auto r = train(tmp, write_experiment(tmp, "WrongShape", "{}", 1));
    INFO(r.out << r.err);
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains("python:bridge_envs:WrongShape: step (episode step 1): observation has shape (3,), "
                                      "expected shape (4,)"));
  }
  SECTION("the old Gym API, synchronous sampling") {
    rlx::test::TempDir tmp;
    const auto r = train(tmp, write_experiment(tmp, "OldGymApi", "{}", 0));
    INFO(r.out << r.err);
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains("python:bridge_envs:OldGymApi: step (episode step 1): return value is a tuple") &&
                          Catch::Contains("4 values is the old Gym API"));
  }
  SECTION("a module that is not on the path") {
    rlx::test::TempDir tmp;
    const auto r = train(tmp, write_experiment(tmp, "WrongShape", "{}", 1), "--set env=python:no_such_env_module:Env");
    INFO(r.out << r.err);
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains("python:no_such_env_module:Env: cannot import module 'no_such_env_module'"));
  }
}
