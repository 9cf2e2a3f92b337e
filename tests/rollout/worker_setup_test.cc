// WorkerSetup's Welcome JSON: what the learner says survives the wire, and a missing
// behaviour_values (a learner of an earlier rlx) means the values are wanted.
#include <catch2/catch.hpp>

#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

#include "rollout/worker_setup.h"

namespace rlx {
namespace {

TEST_CASE("WorkerSetup survives its Welcome JSON and behaviour_values defaults to true", "[rollout][setup]") {
  WorkerSetup setup;
  setup.env_id = "CartPole-v1";
  setup.num_envs = 16;
  setup.fragment_length = 32;
  setup.seed = 7;
  setup.worker_index = 3;
  setup.behaviour_values = false;
  const WorkerSetup back = WorkerSetup::from_json(setup.to_json());
  CHECK(back.env_id == "CartPole-v1");
  CHECK(back.num_envs == 16);
  CHECK(back.worker_index == 3);
  CHECK_FALSE(back.behaviour_values);

  nlohmann::json older = nlohmann::json::parse(setup.to_json());
  older.erase("behaviour_values");
  CHECK(WorkerSetup::from_json(older.dump()).behaviour_values);

  older["behaviour_values"] = "no";
  CHECK_THROWS_WITH(WorkerSetup::from_json(older.dump()), Catch::Contains("behaviour_values"));
}

TEST_CASE("WorkerSetup carries a Python env's env_config, bounded and checked as network input", "[rollout][setup][python]") {
  WorkerSetup setup;
  setup.env_id = "python:cartpole_env:CartPoleEnv";
  setup.env_config = R"({"gravity":9.8,"names":["a","b"]})";
  const WorkerSetup back = WorkerSetup::from_json(setup.to_json());
  CHECK(nlohmann::json::parse(back.env_config) == nlohmann::json::parse(setup.env_config));

  nlohmann::json welcome = nlohmann::json::parse(setup.to_json());
  welcome.erase("env_config");  // a learner of an earlier rlx
  CHECK(WorkerSetup::from_json(welcome.dump()).env_config == "{}");
  welcome["env_config"] = "gravity=9.8";
  CHECK_THROWS_WITH(WorkerSetup::from_json(welcome.dump()), Catch::Contains("'env_config' must be a JSON object"));
  welcome["env_config"] = {{"blob", std::string(kMaxEnvConfigBytes, 'x')}};
  CHECK_THROWS_WITH(WorkerSetup::from_json(welcome.dump()), Catch::Contains("more than 65536"));
}

TEST_CASE("WorkerSetup carries SAC's squashed-Gaussian policy kind and its exploration rate", "[rollout][setup][sac]") {
  WorkerSetup setup;
  setup.env_id = "Pendulum-v1";
  setup.policy_kind = RolloutPolicyKind::kSquashedGaussian;
  setup.epsilon = 1.0;
  const WorkerSetup back = WorkerSetup::from_json(setup.to_json());
  CHECK(back.policy_kind == RolloutPolicyKind::kSquashedGaussian);
  CHECK(back.epsilon == 1.0);

  nlohmann::json wrong = nlohmann::json::parse(setup.to_json());
  wrong["policy_kind"] = "squashed";
  CHECK_THROWS_WITH(WorkerSetup::from_json(wrong.dump()), Catch::Contains("squashed_gaussian, got 'squashed'"));
}

}  // namespace
}  // namespace rlx
