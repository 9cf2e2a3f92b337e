// WorkerSetup's Welcome JSON: what the learner says survives the wire (the model spec whole), a
// missing behaviour_values (a learner of an earlier rlx) means the values are wanted, and a
// worker refuses a model its env does not fit.
#include <catch2/catch.hpp>

#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

#include "rollout/worker_setup.h"

namespace rlx {
namespace {

// A Welcome's model: 4 observations, 2 actions.
ModelSpec small_model(ModelKind kind = ModelKind::kActorCritic, Space actions = Space::discrete(2)) {
  ModelSpec model;
  model.kind = kind;
  model.obs_size = 4;
  model.action_space = std::move(actions);
  model.hidden_sizes = {32};
  return model;
}

TEST_CASE("WorkerSetup survives its Welcome JSON and behaviour_values defaults to true", "[rollout][setup]") {
  WorkerSetup setup;
  setup.env_id = "CartPole-v1";
  setup.model = small_model();
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
  setup.model = small_model();
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

TEST_CASE("WorkerSetup carries SAC's squashed-Gaussian model and its exploration rate", "[rollout][setup][sac]") {
  WorkerSetup setup;
  setup.env_id = "Pendulum-v1";
  setup.model = small_model(ModelKind::kSquashedGaussian, Space::box({1}, -2.0f, 2.0f));
  setup.epsilon = 1.0;
  const WorkerSetup back = WorkerSetup::from_json(setup.to_json());
  CHECK(back.model == setup.model);
  CHECK(back.epsilon == 1.0);

  nlohmann::json wrong = nlohmann::json::parse(setup.to_json());
  wrong["model"]["kind"] = "squashed";
  CHECK_THROWS_WITH(WorkerSetup::from_json(wrong.dump()),
                    Catch::Contains("worker setup: model.kind: expected one of") && Catch::Contains("got \"squashed\""));
}

TEST_CASE("The Welcome carries the learner's model spec whole, and a worker checks it against its env",
          "[rollout][setup][model]") {
  WorkerSetup setup;
  setup.env_id = "CartPole-v1";
  setup.model = small_model(ModelKind::kQNetwork);
  setup.model.hidden_sizes = {128, 64};
  setup.model.activation = "relu";
  setup.model.dueling = true;
  const WorkerSetup back = WorkerSetup::from_json(setup.to_json());
  CHECK(back.model == setup.model);

  EnvSpec env;
  env.id = "CartPole-v1";
  env.observation_space = Space::box({4}, -1.0f, 1.0f);
  env.action_space = Space::discrete(2);
  CHECK(&back.model_for(env) == &back.model);
  env.observation_space = Space::box({6}, -1.0f, 1.0f);
  CHECK_THROWS_WITH(back.model_for(env), Catch::Contains("gives observations in Box(-1, 1, (6,), float32), the model reads Box(-inf, inf, (4,), float32)"));
  env.observation_space = Space::box({4}, -1.0f, 1.0f);
  env.action_space = Space::discrete(3);
  CHECK_THROWS_WITH(back.model_for(env), Catch::Contains("takes actions in Discrete(3), the model acts in Discrete(2)"));

  nlohmann::json welcome = nlohmann::json::parse(setup.to_json());
  welcome["model"]["encoder"]["hidden_sizes"][1] = 0;
  CHECK_THROWS_WITH(WorkerSetup::from_json(welcome.dump()),
                    Catch::Contains("worker setup: model.encoder.hidden_sizes[1]: 0 is outside [1, 65536]"));
  welcome.erase("model");  // a learner of an rlx before model specs
  CHECK_THROWS_WITH(WorkerSetup::from_json(welcome.dump()), Catch::Contains("missing key 'model'"));
}


TEST_CASE("WorkerSetup carries frame_stack, 1 when an older Welcome lacks it, and the worker's env stacks it", "[rollout][setup][frame_stack]") {
  WorkerSetup setup;
  setup.env_id = "MinAtar/Breakout-v1";
  setup.model = small_model();
  setup.frame_stack = 4;
  const WorkerSetup back = WorkerSetup::from_json(setup.to_json());
  CHECK(back.frame_stack == 4);
  CHECK(back.env_spec().observation_space.shape == std::vector<int64_t>{10, 10, 16});
  CHECK(back.env_factory()()->spec() == back.env_spec());

  nlohmann::json welcome = nlohmann::json::parse(setup.to_json());
  welcome.erase("frame_stack");  // a learner of an earlier rlx
  CHECK(WorkerSetup::from_json(welcome.dump()).frame_stack == 1);
  CHECK(WorkerSetup::from_json(welcome.dump()).env_spec() == global_env_registry().spec("MinAtar/Breakout-v1"));
  for (int bad : {0, -1, 65}) {
    welcome["frame_stack"] = bad;
    CHECK_THROWS_WITH(WorkerSetup::from_json(welcome.dump()), Catch::Contains("frame_stack"));
  }
  welcome["frame_stack"] = "4";
  CHECK_THROWS_WITH(WorkerSetup::from_json(welcome.dump()), Catch::Contains("frame_stack"));
}

}  // namespace
}  // namespace rlx
