// MuJoCo tasks (Gymnasium v4): specs, models, assets, seeding, reset noise, observation layouts
// and VectorEnv. Rewards, termination and physics are in mujoco_dynamics_test.cc.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "envs/mujoco/ant.h"
#include "envs/mujoco/half_cheetah.h"
#include "envs/mujoco/hopper.h"
#include "envs/mujoco/inverted_pendulum.h"
#include "envs/mujoco/mujoco_env.h"
#include "envs/mujoco/walker2d.h"
#include "envs/registry.h"
#include "envs/vector_env.h"
#include "tests/envs/mujoco_test_util.h"

namespace {

using rlx::Action;
using rlx::StepResult;
using rlx::test::make_env;
using rlx::test::rest_state;

const std::vector<std::string> kMujocoIds = {"Hopper-v4", "HalfCheetah-v4", "Walker2d-v4", "Ant-v4",
                                             "InvertedPendulum-v4"};

// What each task should look like, from Gymnasium's v4 documentation and models.
struct Expected {
  std::string id;
  int64_t obs_size;
  int64_t action_size;
  float action_high;
  int frame_skip;
  double timestep;
  std::optional<double> reward_threshold;
};

const std::vector<Expected> kExpected = {
    {"Hopper-v4", 11, 3, 1.0f, 4, 0.002, 3800.0},
    {"HalfCheetah-v4", 17, 6, 1.0f, 5, 0.01, 4800.0},
    {"Walker2d-v4", 17, 6, 1.0f, 4, 0.002, std::nullopt},
    {"Ant-v4", 27, 8, 1.0f, 5, 0.01, 6000.0},
    {"InvertedPendulum-v4", 4, 1, 3.0f, 2, 0.02, 950.0},
};

rlx::MujocoEnv& as_mujoco(rlx::Env& env) { return dynamic_cast<rlx::MujocoEnv&>(env); }

// Uniform actions inside the action space, drawn from a seeded generator.
void random_action(rlx::Rng& rng, const rlx::Space& space, std::vector<float>& values) {
  values.resize(static_cast<size_t>(space.size()));
  for (size_t i = 0; i < values.size(); ++i) {
    values[i] = static_cast<float>(rng.uniform(space.low[i], space.high[i]));
  }
}

}  // namespace

TEST_CASE("MuJoCo tasks are registered with Gymnasium v4 specs", "[envs][mujoco]") {
  for (const Expected& e : kExpected) {
    INFO(e.id);
    const auto spec = rlx::global_env_registry().find(e.id);
    REQUIRE(spec.has_value());
    CHECK(spec->observation_space == rlx::Space::box({e.obs_size}, -rlx::kInf, rlx::kInf));
    CHECK(spec->action_space == rlx::Space::box({e.action_size}, -e.action_high, e.action_high));
    CHECK(spec->max_episode_steps == 1000);
    CHECK(spec->reward_threshold == e.reward_threshold);

    auto env = make_env(e.id);
    const rlx::MujocoEnv& mj = as_mujoco(*env);
    CHECK(mj.frame_skip() == e.frame_skip);
    CHECK(mj.model().opt.timestep == e.timestep);
    CHECK(mj.dt() == Approx(e.timestep * e.frame_skip));
    // The action space is the actuators' ctrlrange, and MuJoCo clamps to it.
    REQUIRE(mj.model().nu == e.action_size);
    for (int i = 0; i < mj.model().nu; ++i) {
      CHECK(mj.model().actuator_ctrllimited[i]);
      CHECK(static_cast<float>(mj.model().actuator_ctrlrange[2 * i]) == spec->action_space.low[static_cast<size_t>(i)]);
      CHECK(static_cast<float>(mj.model().actuator_ctrlrange[2 * i + 1]) ==
            spec->action_space.high[static_cast<size_t>(i)]);
    }
    CHECK(env->state().size() == static_cast<size_t>(mj.model().nq + mj.model().nv));
  }
}

TEST_CASE("MuJoCo model sizes match the Gymnasium v4 models", "[envs][mujoco]") {
  rlx::HopperEnv hopper;
  CHECK(hopper.model().nq == 6);
  CHECK(hopper.model().nv == 6);
  CHECK(hopper.model().qpos0[1] == 1.25);  // rootz reads the torso height
  rlx::Walker2dEnv walker;
  CHECK(walker.model().nq == 9);
  CHECK(walker.model().qpos0[1] == 1.25);
  rlx::HalfCheetahEnv cheetah;
  CHECK(cheetah.model().nq == 9);
  double cheetah_mass = 0.0;
  for (int i = 0; i < cheetah.model().nbody; ++i) cheetah_mass += cheetah.model().body_mass[i];
  CHECK(cheetah_mass == Approx(14.0));  // settotalmass
  rlx::AntEnv ant;
  CHECK(ant.model().nq == 15);
  CHECK(ant.model().nv == 14);
  CHECK(ant.model().qpos0[2] == 0.75);
  rlx::InvertedPendulumEnv pendulum;
  CHECK(pendulum.model().nq == 2);
}

TEST_CASE("MuJoCo models are compiled once and shared, and each env owns its data", "[envs][mujoco]") {
  rlx::HopperEnv a;
  rlx::HopperEnv b;
  CHECK(&a.model() == &b.model());
  CHECK(&a.data() != &b.data());
  CHECK(rlx::shared_mujoco_model("hopper.xml").get() == &a.model());

  // Stepping one instance leaves the other alone.
  std::vector<float> obs_a(11), obs_b(11);
  a.reset(1, obs_a.data());
  b.reset(1, obs_b.data());
  const std::vector<float> action = {1.0f, -1.0f, 0.5f};
  for (int t = 0; t < 5; ++t) a.step(Action{0, action.data()}, obs_a.data());
  std::vector<float> obs_b_again(11);
  b.reset(1, obs_b_again.data());
  CHECK(obs_b == obs_b_again);
  CHECK(obs_a != obs_b);
}

TEST_CASE("MuJoCo assets are embedded and load errors name the asset", "[envs][mujoco]") {
  const std::vector<std::string> names = rlx::embedded_mujoco_asset_names();
  for (const char* name :
       {"hopper.xml", "half_cheetah.xml", "walker2d.xml", "ant.xml", "inverted_pendulum.xml"}) {
    INFO(name);
    CHECK(std::find(names.begin(), names.end(), name) != names.end());
    CHECK(rlx::embedded_mujoco_asset(name).find("<mujoco") != std::string_view::npos);
  }
  CHECK(rlx::embedded_mujoco_asset("missing.xml").empty());
  CHECK_THROWS_WITH(rlx::compile_mujoco_model("missing.xml"), Catch::Contains("missing.xml"));
  CHECK_THROWS_AS(rlx::compile_mujoco_model("missing.xml"), std::runtime_error);
}

TEST_CASE("RLX_MUJOCO_ASSETS_DIR loads assets from disk and reports MuJoCo's errors", "[envs][mujoco]") {
  // Unsets the variable however the test ends, so later tests load the embedded assets.
  struct UnsetAssetsDir {
    ~UnsetAssetsDir() { unsetenv(rlx::kMujocoAssetsDirVariable); }
  } unset_assets_dir;
  const std::string source_assets = std::string(RLX_SOURCE_DIR) + "/envs/mujoco/assets";
  REQUIRE(setenv(rlx::kMujocoAssetsDirVariable, source_assets.c_str(), 1) == 0);
  rlx::MjModelPtr from_disk = rlx::compile_mujoco_model("hopper.xml");
  REQUIRE(from_disk);
  CHECK(from_disk->nq == 6);

  const std::string broken_dir = std::string(RLX_BINARY_DIR) + "/mujoco_test_broken_assets";
  std::filesystem::create_directories(broken_dir);
  {
    std::ofstream out(broken_dir + "/hopper.xml");
    out << "<mujoco><worldbody><body><joint type=\"nonsense\"/></body></worldbody></mujoco>\n";
  }
  REQUIRE(setenv(rlx::kMujocoAssetsDirVariable, broken_dir.c_str(), 1) == 0);
  try {
    rlx::compile_mujoco_model("hopper.xml");
    FAIL("a broken model compiled");
  } catch (const std::runtime_error& error) {
    const std::string text = error.what();
    CHECK_THAT(text, Catch::Contains("hopper.xml"));
    CHECK_THAT(text, Catch::Contains("nonsense"));  // MuJoCo's own message quotes the bad value
  }
  CHECK_THROWS_WITH(rlx::compile_mujoco_model("absent.xml"), Catch::Contains("absent.xml"));
}

TEST_CASE("MuJoCo tasks are deterministic under a seed", "[envs][mujoco]") {
  for (const std::string& id : kMujocoIds) {
    INFO(id);
    auto first = make_env(id);
    auto second = make_env(id);
    const rlx::EnvSpec& spec = first->spec();
    const auto n = static_cast<size_t>(spec.observation_space.size());
    std::vector<float> obs_a(n), obs_b(n), action;
    first->reset(123, obs_a.data());
    second->reset(123, obs_b.data());
    REQUIRE(obs_a == obs_b);
    const std::vector<float> first_obs = obs_a;

    rlx::Rng action_rng(9);
    for (int t = 0; t < 100; ++t) {
      random_action(action_rng, spec.action_space, action);
      const StepResult ra = first->step(Action{0, action.data()}, obs_a.data());
      const StepResult rb = second->step(Action{0, action.data()}, obs_b.data());
      REQUIRE(obs_a == obs_b);
      REQUIRE(ra.reward == rb.reward);
      REQUIRE(ra.terminated == rb.terminated);
      if (ra.terminated) break;
    }
    CHECK(first->state() == second->state());

    // Re-seeding replays the first observation; another seed gives another start.
    first->reset(123, obs_a.data());
    CHECK(obs_a == first_obs);
    first->reset(124, obs_a.data());
    CHECK(obs_a != first_obs);
  }
}

TEST_CASE("MuJoCo reset noise follows Gymnasium's scales", "[envs][mujoco]") {
  SECTION("Hopper: uniform 5e-3 on qpos and qvel") {
    rlx::HopperEnv env;
    std::vector<float> obs(11);
    for (uint64_t seed = 0; seed < 20; ++seed) {
      env.reset(seed, obs.data());
      const std::vector<double> s = env.state();
      for (int i = 0; i < 6; ++i) CHECK(std::abs(s[static_cast<size_t>(i)] - env.model().qpos0[i]) <= 5e-3);
      for (int i = 6; i < 12; ++i) CHECK(std::abs(s[static_cast<size_t>(i)]) <= 5e-3);
      CHECK(obs[0] == static_cast<float>(s[1]));  // x left out of the observation
      CHECK(env.is_healthy());
    }
  }
  SECTION("HalfCheetah: uniform 0.1 on qpos, 0.1 * N(0, 1) on qvel") {
    rlx::HalfCheetahEnv env;
    std::vector<float> obs(17);
    double sum_sq = 0.0, max_abs = 0.0;
    int count = 0;
    for (uint64_t seed = 0; seed < 200; ++seed) {
      env.reset(seed, obs.data());
      const std::vector<double> s = env.state();
      for (int i = 0; i < 9; ++i) CHECK(std::abs(s[static_cast<size_t>(i)]) <= 0.1);
      for (int i = 9; i < 18; ++i) {
        sum_sq += s[static_cast<size_t>(i)] * s[static_cast<size_t>(i)];
        max_abs = std::max(max_abs, std::abs(s[static_cast<size_t>(i)]));
        ++count;
      }
    }
    CHECK(std::sqrt(sum_sq / count) == Approx(0.1).epsilon(0.1));
    CHECK(max_abs > 0.1);  // normal, not uniform
  }
  SECTION("Ant: uniform 0.1 on qpos (quaternion included), normal 0.1 on qvel") {
    rlx::AntEnv env;
    std::vector<float> obs(27);
    env.reset(5, obs.data());
    const std::vector<double> s = env.state();
    for (int i = 0; i < 15; ++i) CHECK(std::abs(s[static_cast<size_t>(i)] - env.model().qpos0[i]) <= 0.1);
    CHECK(obs[0] == static_cast<float>(s[2]));  // x and y left out
    CHECK(env.is_healthy());
  }
  SECTION("InvertedPendulum: uniform 0.01 on everything") {
    rlx::InvertedPendulumEnv env;
    std::vector<float> obs(4);
    for (uint64_t seed = 0; seed < 20; ++seed) {
      env.reset(seed, obs.data());
      for (float v : obs) CHECK(std::abs(v) <= 0.01f);
      CHECK_FALSE(env.is_fallen());
    }
  }
}

TEST_CASE("MuJoCo observations follow Gymnasium's layouts", "[envs][mujoco]") {
  SECTION("Hopper and Walker2d clip velocities to [-10, 10]") {
    rlx::HopperEnv hopper;
    std::vector<double> s = rest_state(hopper);
    s[6] = 50.0;   // x velocity
    s[8] = -30.0;  // torso angular velocity
    s[9] = 3.0;
    std::vector<float> obs(11);
    hopper.set_state(s, obs.data());
    CHECK(obs[0] == 1.25f);
    CHECK(obs[5] == 10.0f);
    CHECK(obs[7] == -10.0f);
    CHECK(obs[8] == 3.0f);
    CHECK(hopper.state() == s);

    rlx::Walker2dEnv walker;
    std::vector<double> w = rest_state(walker);
    w[9] = -12.0;
    std::vector<float> wobs(17);
    walker.set_state(w, wobs.data());
    CHECK(wobs[8] == -10.0f);
  }
  SECTION("HalfCheetah and Ant do not clip") {
    rlx::HalfCheetahEnv cheetah;
    std::vector<double> s = rest_state(cheetah);
    s[0] = 3.0;   // x, left out
    s[9] = 50.0;  // x velocity
    std::vector<float> obs(17);
    cheetah.set_state(s, obs.data());
    CHECK(obs[0] == 0.0f);
    CHECK(obs[8] == 50.0f);

    rlx::AntEnv ant;
    std::vector<double> a = rest_state(ant);
    a[0] = 2.0;
    a[1] = -1.0;
    a[15] = 20.0;  // x velocity
    std::vector<float> aobs(27);
    ant.set_state(a, aobs.data());
    CHECK(aobs[0] == 0.75f);
    CHECK(aobs[1] == 1.0f);  // quaternion w
    CHECK(aobs[13] == 20.0f);
    CHECK(ant.torso_x() == 2.0);  // set_state runs mj_forward
  }
  SECTION("set_state checks its size") {
    rlx::HopperEnv hopper;
    std::vector<float> obs(11);
    CHECK_THROWS_AS(hopper.set_state(std::vector<double>(11, 0.0), obs.data()), std::invalid_argument);
    CHECK_THROWS_AS(hopper.step(Action{}, obs.data()), std::invalid_argument);
  }
}

TEST_CASE("MuJoCo tasks run in a VectorEnv with auto-reset", "[envs][mujoco]") {
  rlx::VectorEnv vec(rlx::global_env_registry().factory("Hopper-v4"), 3);
  const auto n = static_cast<size_t>(vec.obs_size());
  std::vector<float> obs(3 * n), final_obs(3 * n), rewards(3), actions(3 * 3);
  std::vector<uint8_t> terminated(3), truncated(3);
  vec.reset(5, obs.data());
  rlx::Rng rng(2);
  int episodes = 0;
  for (int t = 0; t < 300; ++t) {
    for (float& a : actions) a = static_cast<float>(rng.uniform(-1.0, 1.0));
    rlx::VectorStepBuffers out;
    out.obs = obs.data();
    out.rewards = rewards.data();
    out.terminated = terminated.data();
    out.truncated = truncated.data();
    out.final_obs = final_obs.data();
    vec.step(rlx::ActionBatch{nullptr, actions.data()}, out);
    for (int i = 0; i < 3; ++i) episodes += terminated[static_cast<size_t>(i)];
  }
  CHECK(episodes > 0);  // random hopping falls over
  for (float v : obs) CHECK(std::isfinite(v));
}
