// Python envs (envs/python_env.h): spaces and dtypes crossing the bridge, seeds, both kinds of
// truncation, and the errors a Python env can make, each naming the env, the method and what was
// expected. The envs are in tests/envs/python/bridge_envs.py.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <vector>

#include "core/config_error.h"
#include "envs/python_env.h"
#include "envs/registry.h"
#include "envs/vector_env.h"

namespace {

const std::string kModule = "python:bridge_envs:";

// The registered env `name` of bridge_envs.py (registered on first use).
const rlx::EnvSpec& python_env(const std::string& name, const std::string& env_config = "{}") {
  static const bool path_added = [] {
    rlx::add_python_path({std::string(RLX_SOURCE_DIR) + "/tests/envs/python"});
    return true;
  }();
  (void)path_added;
  rlx::register_python_env(kModule + name, env_config);
  return rlx::global_env_registry().spec(kModule + name);
}

std::vector<float> reset(rlx::Env& env, std::optional<uint64_t> seed) {
  std::vector<float> obs(static_cast<size_t>(env.spec().observation_space.size()));
  env.reset(seed, obs.data());
  return obs;
}

}  // namespace

TEST_CASE("a Python env's spaces, time limit and keyword arguments come through the bridge", "[envs][python]") {
  const rlx::EnvSpec& spec = python_env("SeedEcho", R"({"offset": 0.25})");
  CHECK(spec.id == "python:bridge_envs:SeedEcho");
  CHECK(spec.observation_space.is_box());
  CHECK(spec.observation_space.shape == std::vector<int64_t>{4});
  CHECK(std::isinf(spec.observation_space.high[0]));
  CHECK(spec.action_space == rlx::Space::discrete(3, -1));
  CHECK(spec.max_episode_steps == 5);

  auto env = rlx::global_env_registry().make(spec.id);
  std::vector<float> obs = reset(*env, 7);
  CHECK(obs == std::vector<float>{7, 1, 0, 0.25f});  // seed 7, first reset, offset from env_config
  rlx::Action action;
  action.index = -1;  // Discrete(3, start=-1): the env gets the value itself
  rlx::StepResult step = env->step(action, obs.data());
  CHECK(obs == std::vector<float>{7, 1, 1, -0.75f});
  CHECK(step.reward == -0.5);
  action.index = 1;
  for (int i = 0; i < 4; ++i) step = env->step(action, obs.data());
  CHECK(obs[3] == 1.25f);
  CHECK_FALSE(step.terminated);
  CHECK(step.truncated);  // rlx's time limit: max_episode_steps = 5
}

TEST_CASE("a Python env gets rlx's per-env seeds on the first reset and none after", "[envs][python]") {
  const rlx::EnvSpec& spec = python_env("SeedEcho", R"({"offset": 0.25})");
  rlx::VectorEnv envs(rlx::global_env_registry().factory(spec.id), 3);
  std::vector<float> obs(3 * 4);
  envs.reset(100, obs.data());
  for (int i = 0; i < 3; ++i) CHECK(obs[static_cast<size_t>(i) * 4] == static_cast<float>(100 + i));
  // Five steps end each episode (truncated); the auto-reset passes no seed, as Gymnasium's vector envs do.
  std::vector<int64_t> actions(3, 1);
  std::vector<float> rewards(3), final_obs(3 * 4);
  std::vector<uint8_t> terminated(3), truncated(3);
  const rlx::VectorStepBuffers out{obs.data(), rewards.data(), terminated.data(), truncated.data(), final_obs.data()};
  for (int t = 0; t < 5; ++t) envs.step(rlx::ActionBatch{actions.data(), nullptr}, out);
  for (int i = 0; i < 3; ++i) {
    CHECK(truncated[static_cast<size_t>(i)]);
    CHECK(final_obs[static_cast<size_t>(i) * 4 + 2] == 5.0f);  // the finished episode's last observation
    CHECK(obs[static_cast<size_t>(i) * 4] == -1.0f);  // seed None
    CHECK(obs[static_cast<size_t>(i) * 4 + 1] == 2.0f);  // the second reset
  }
}

TEST_CASE("observations of float32, float64 and int64 and Box actions cross the bridge", "[envs][python]") {
  for (const char* name : {"Float32Echo", "Float64Echo", "Int64Echo"}) {
    SECTION(name) {
      const rlx::EnvSpec& spec = python_env(name);
      REQUIRE(spec.observation_space.shape == std::vector<int64_t>{3});
      CHECK(spec.observation_space.low[0] == -1e13f);
      REQUIRE(spec.action_space.is_box());
      CHECK(spec.action_space.high == std::vector<float>{2, 2});
      auto env = rlx::global_env_registry().make(spec.id);
      std::vector<float> obs = reset(*env, 0);
      // 2^40 + 1 rounds to 2^40 in float32, whichever dtype it came in.
      CHECK(obs == std::vector<float>{1, -2, static_cast<float>(1099511627777.0)});
      const std::vector<float> values = {0.5f, -1.25f};
      rlx::Action action;
      action.values = values.data();
      const rlx::StepResult step = env->step(action, obs.data());
      CHECK(obs == std::vector<float>{2, -5, 7});
      CHECK(step.reward == Approx(-0.75));
    }
  }
}

TEST_CASE("float64 Box actions, two-dimensional and strided observations, lists and NumPy scalars", "[envs][python]") {
  SECTION("strided two-dimensional float64") {
    const rlx::EnvSpec& spec = python_env("Float64Actions");
    CHECK(spec.observation_space.shape == std::vector<int64_t>{2, 3});
    auto env = rlx::global_env_registry().make(spec.id);
    std::vector<float> obs = reset(*env, 0);
    CHECK(obs == std::vector<float>{0, 2, 4, 6, 8, 10});  // every other column of arange(12).reshape(2, 6)
    const float value = 0.375f;
    rlx::Action action;
    action.values = &value;
    env->step(action, obs.data());
    CHECK(obs == std::vector<float>(6, 0.375f));
  }
  SECTION("lists") {
    auto env = rlx::global_env_registry().make(python_env("ListObservations").id);
    std::vector<float> obs = reset(*env, 0);
    CHECK(obs == std::vector<float>{0.25f, -0.5f});
    rlx::Action action;
    action.index = 1;
    const rlx::StepResult step = env->step(action, obs.data());
    CHECK(obs == std::vector<float>{0.75f, 1.0f});
    CHECK(step.reward == 2.5);
    CHECK(step.terminated);  // numpy.bool_
  }
}

TEST_CASE("an episode the Python env truncates itself ends truncated, not terminated", "[envs][python]") {
  const rlx::EnvSpec& spec = python_env("SelfTruncating");
  CHECK(spec.max_episode_steps == 0);
  auto env = rlx::global_env_registry().make(spec.id);
  std::vector<float> obs = reset(*env, 0);
  rlx::Action action;
  rlx::StepResult step;
  for (int t = 0; t < 3; ++t) {
    CHECK_FALSE(step.truncated);
    step = env->step(action, obs.data());
  }
  CHECK(step.truncated);
  CHECK_FALSE(step.terminated);
}

TEST_CASE("a Python exception in step is a PythonEnvError with one line and the traceback", "[envs][python]") {
  auto env = rlx::global_env_registry().make(python_env("RaisesInStep", R"({"at_step": 2})").id);
  std::vector<float> obs = reset(*env, 0);
  rlx::Action action;
  action.index = 1;
  env->step(action, obs.data());
  try {
    env->step(action, obs.data());
    FAIL("no exception");
  } catch (const rlx::PythonEnvError& error) {
    CHECK(std::string(error.what()) ==
          "python:bridge_envs:RaisesInStep: step raised RuntimeError: the env broke at step 2 (action 1)");
    CHECK_THAT(error.traceback(), Catch::StartsWith("Traceback (most recent call last):"));
    CHECK_THAT(error.traceback(), Catch::Contains("bridge_envs.py\", line"));
    CHECK_THAT(error.traceback(), Catch::Contains("in _explode"));
  }
}

TEST_CASE("wrong returns from a Python env name the env, the method and what was expected", "[envs][python]") {
  rlx::Action action;
  SECTION("the old Gym API") {
    auto env = rlx::global_env_registry().make(python_env("OldGymApi").id);
    std::vector<float> obs = reset(*env, 0);
    CHECK_THROWS_MATCHES(env->step(action, obs.data()), rlx::EnvOutputError,
                         Catch::Matchers::Message("python:bridge_envs:OldGymApi: step (episode step 1): return value is a tuple "
                                                  "((array([0., 0., 0., 0.], dtype=float32), 1.0, False, {})), expected a tuple "
                                                  "(observation, reward, terminated, truncated, info) (4 values is the old Gym "
                                                  "API: split done into terminated and truncated)"));
  }
  SECTION("a wrong observation shape") {
    auto env = rlx::global_env_registry().make(python_env("WrongShape").id);
    std::vector<float> obs = reset(*env, 0);
    CHECK_THROWS_MATCHES(env->step(action, obs.data()), rlx::EnvOutputError,
                         Catch::Matchers::Message("python:bridge_envs:WrongShape: step (episode step 1): observation has shape "
                                                  "(3,), expected shape (4,) (observation_space Box(-1, 1, (4,), float32))"));
  }
  SECTION("an observation of strings") {
    auto env = rlx::global_env_registry().make(python_env("StringObservation").id);
    CHECK_THROWS_WITH(reset(*env, 0),
                      Catch::Contains("reset (episode step 0): observation has element 0 that is no number (a str (a))"));
  }
}

TEST_CASE("unsupported spaces, missing modules and raising constructors are refused by name", "[envs][python]") {
  CHECK(python_env("DiscreteObservations").observation_space == rlx::Space::discrete(5));  // read since rlx has every space
  CHECK_THROWS_MATCHES(python_env("TupleActions"), rlx::ConfigError,
                       Catch::Matchers::Message("python:bridge_envs:TupleActions: action_space is a tuple (('not', 'a', "
                                                "'space')), which rlx cannot read (it reads Box, Discrete, MultiDiscrete, "
                                                "MultiBinary, Tuple, Dict)"));
  CHECK_THROWS_WITH(python_env("NoSuchClass"),
                    Catch::Contains("module 'bridge_envs'") && Catch::Contains("has no attribute 'NoSuchClass'"));
  CHECK_THROWS_AS(rlx::register_python_env("python:no_such_module_here:Env"), rlx::ConfigError);
  CHECK_THROWS_WITH(rlx::register_python_env("python:no_such_module_here:Env"),
                    Catch::Contains("cannot import module 'no_such_module_here'") && Catch::Contains("--python-path DIR"));
  CHECK_THROWS_WITH(rlx::register_python_env("python:only_a_module"), Catch::Contains("expected python:MODULE:CLASS"));
  CHECK_THROWS_MATCHES(python_env("RaisesInInit", R"({"size": 3})"), rlx::PythonEnvError,
                       Catch::Matchers::Message("python:bridge_envs:RaisesInInit: the constructor raised ValueError: bad "
                                                "env_config ['size']"));
  CHECK_THROWS_WITH(python_env("Discrete", "[1, 2]"), Catch::Contains("env_config must be a mapping"));
  // One id, one env_config per process.
  python_env("SelfTruncating");
  CHECK_THROWS_WITH(python_env("SelfTruncating", R"({"x": 1})"), Catch::Contains("already registered in this process"));
}
