// MuJoCo tasks (Gymnasium v4): reward terms, termination, truncation and physics sanity, on
// hand-made states. Specs, seeding and observation layouts are in mujoco_test.cc.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "envs/mujoco/ant.h"
#include "envs/mujoco/half_cheetah.h"
#include "envs/mujoco/hopper.h"
#include "envs/mujoco/inverted_pendulum.h"
#include "envs/mujoco/walker2d.h"
#include "tests/envs/mujoco_test_util.h"

namespace {

using rlx::Action;
using rlx::StepResult;
using rlx::test::make_env;
using rlx::test::rest_state;

}  // namespace

TEST_CASE("MuJoCo reward terms on hand-made states", "[envs][mujoco]") {
  SECTION("Hopper: forward velocity + healthy reward - 1e-3 * |a|^2") {
    rlx::HopperEnv env;
    std::vector<float> obs(11);
    env.reset(0, obs.data());
    std::vector<double> s = rest_state(env);
    s[6] = 1.5;  // moving forward
    env.set_state(s, obs.data());
    const double x_before = env.state()[0];
    const std::vector<float> zero(3, 0.0f);
    StepResult r = env.step(Action{0, zero.data()}, obs.data());
    double x_after = env.state()[0];
    CHECK(x_after > x_before);
    CHECK(r.reward == Approx((x_after - x_before) / env.dt() + 1.0).epsilon(1e-12));
    CHECK_FALSE(r.terminated);

    const std::vector<float> action = {0.5f, -0.25f, 2.0f};  // 2.0 is outside ctrlrange: cost uses it as given
    env.set_state(s, obs.data());
    r = env.step(Action{0, action.data()}, obs.data());
    x_after = env.state()[0];
    const double forward = (x_after - s[0]) / env.dt();
    CHECK(r.reward - (forward + 1.0) == Approx(-1e-3 * (0.25 + 0.0625 + 4.0)).margin(1e-12));
    CHECK(env.data().ctrl[2] == 2.0);  // sent as is; MuJoCo clamps internally
  }
  SECTION("MuJoCo clamps out-of-range actions; the cost does not") {
    rlx::HopperEnv a;
    rlx::HopperEnv b;
    std::vector<float> obs_a(11), obs_b(11);
    a.reset(7, obs_a.data());
    b.reset(7, obs_b.data());
    const std::vector<float> big = {2.0f, -3.0f, 5.0f};
    const std::vector<float> clamped = {1.0f, -1.0f, 1.0f};
    const StepResult ra = a.step(Action{0, big.data()}, obs_a.data());
    const StepResult rb = b.step(Action{0, clamped.data()}, obs_b.data());
    CHECK(obs_a == obs_b);
    CHECK(rb.reward - ra.reward == Approx(1e-3 * (4.0 + 9.0 + 25.0 - 3.0)).margin(1e-12));
  }
  SECTION("Walker2d: forward velocity + healthy reward - 1e-3 * |a|^2") {
    rlx::Walker2dEnv env;
    std::vector<float> obs(17);
    env.reset(0, obs.data());
    std::vector<double> s = rest_state(env);
    s[0] = 4.0;
    s[9] = -0.8;  // moving backwards
    env.set_state(s, obs.data());
    const std::vector<float> action = {0.1f, 0.2f, 0.3f, -0.4f, -0.5f, -0.6f};
    const StepResult r = env.step(Action{0, action.data()}, obs.data());
    const double forward = (env.state()[0] - 4.0) / env.dt();
    CHECK(forward < 0.0);
    CHECK(r.reward - (forward + 1.0) == Approx(-1e-3 * 0.91).margin(1e-12));
  }
  SECTION("HalfCheetah: forward velocity - 0.1 * |a|^2, no healthy reward") {
    rlx::HalfCheetahEnv env;
    std::vector<float> obs(17);
    env.reset(0, obs.data());
    std::vector<double> s = rest_state(env);
    s[9] = 2.0;
    env.set_state(s, obs.data());
    const std::vector<float> zero(6, 0.0f);
    StepResult r = env.step(Action{0, zero.data()}, obs.data());
    CHECK(r.reward == Approx((env.state()[0] - 0.0) / env.dt()).epsilon(1e-12));
    CHECK(r.reward > 0.0);

    const std::vector<float> action = {1.0f, -1.0f, 0.5f, -0.5f, 0.25f, 0.0f};
    env.set_state(s, obs.data());
    r = env.step(Action{0, action.data()}, obs.data());
    const double forward = env.state()[0] / env.dt();
    CHECK(r.reward - forward == Approx(-0.1 * (1.0 + 1.0 + 0.25 + 0.25 + 0.0625)).margin(1e-12));
    CHECK_FALSE(r.terminated);
  }
  SECTION("Ant: torso xpos velocity + healthy reward - 0.5 * |a|^2") {
    rlx::AntEnv env;
    std::vector<float> obs(27);
    env.reset(0, obs.data());
    std::vector<double> s = rest_state(env);
    s[15] = 1.0;  // x velocity
    env.set_state(s, obs.data());
    const double x_before = env.torso_x();
    CHECK(x_before == 0.0);
    const std::vector<float> action = {0.5f, 0.5f, -0.5f, -0.5f, 1.0f, 0.0f, 0.0f, 0.25f};
    const StepResult r = env.step(Action{0, action.data()}, obs.data());
    const double x_after = env.torso_x();
    CHECK(x_after > x_before);
    // Gymnasium reads xpos after mj_step, which lags qpos by one physics step: within a
    // step's travel of qpos[0].
    CHECK(x_after == Approx(env.state()[0]).margin(1.5 * env.model().opt.timestep));
    const double forward = (x_after - x_before) / env.dt();
    CHECK(r.reward - (forward + 1.0) == Approx(-0.5 * (0.25 * 4 + 1.0 + 0.0625)).margin(1e-12));
  }
  SECTION("InvertedPendulum: 1 per step, also on the terminating step") {
    rlx::InvertedPendulumEnv env;
    std::vector<float> obs(4);
    env.reset(0, obs.data());
    const std::vector<float> push = {3.0f};
    const StepResult r = env.step(Action{0, push.data()}, obs.data());
    CHECK(r.reward == 1.0);
    env.set_state({0.0, 0.5, 0.0, 0.0}, obs.data());
    const StepResult fallen = env.step(Action{0, push.data()}, obs.data());
    CHECK(fallen.terminated);
    CHECK(fallen.reward == 1.0);
  }
}

TEST_CASE("MuJoCo termination on hand-made unhealthy states", "[envs][mujoco]") {
  SECTION("Hopper") {
    rlx::HopperEnv env;
    std::vector<float> obs(11);
    const std::vector<float> zero(3, 0.0f);
    env.reset(3, obs.data());
    CHECK_FALSE(env.step(Action{0, zero.data()}, obs.data()).terminated);

    std::vector<double> low = rest_state(env);
    low[1] = 0.6;  // z below 0.7
    env.set_state(low, obs.data());
    CHECK_FALSE(env.is_healthy());
    CHECK(env.step(Action{0, zero.data()}, obs.data()).terminated);

    std::vector<double> tilted = rest_state(env);
    tilted[2] = 0.3;  // |angle| > 0.2
    env.set_state(tilted, obs.data());
    CHECK_FALSE(env.is_healthy());
    CHECK(env.step(Action{0, zero.data()}, obs.data()).terminated);

    std::vector<double> fast = rest_state(env);
    fast[10] = 150.0;  // a joint velocity outside (-100, 100)
    env.set_state(fast, obs.data());
    CHECK_FALSE(env.is_healthy());

    std::vector<double> upright = rest_state(env);
    upright[2] = 0.19;
    env.set_state(upright, obs.data());
    CHECK(env.is_healthy());
  }
  SECTION("Walker2d") {
    rlx::Walker2dEnv env;
    std::vector<float> obs(17);
    const std::vector<float> zero(6, 0.0f);
    env.reset(3, obs.data());
    CHECK_FALSE(env.step(Action{0, zero.data()}, obs.data()).terminated);

    std::vector<double> tilted = rest_state(env);
    tilted[2] = 1.2;  // angle outside (-1, 1)
    env.set_state(tilted, obs.data());
    CHECK_FALSE(env.is_healthy());
    CHECK(env.step(Action{0, zero.data()}, obs.data()).terminated);

    std::vector<double> high = rest_state(env);
    high[1] = 2.5;  // z outside (0.8, 2)
    env.set_state(high, obs.data());
    CHECK(env.step(Action{0, zero.data()}, obs.data()).terminated);

    std::vector<double> bent = rest_state(env);
    bent[2] = -0.9;  // still inside (-1, 1): Hopper's 0.2 limit does not apply here
    env.set_state(bent, obs.data());
    CHECK(env.is_healthy());
  }
  SECTION("Ant") {
    rlx::AntEnv env;
    std::vector<float> obs(27);
    const std::vector<float> zero(8, 0.0f);
    env.reset(3, obs.data());
    CHECK_FALSE(env.step(Action{0, zero.data()}, obs.data()).terminated);

    std::vector<double> high = rest_state(env);
    high[2] = 1.5;  // z above 1
    env.set_state(high, obs.data());
    CHECK_FALSE(env.is_healthy());
    CHECK(env.step(Action{0, zero.data()}, obs.data()).terminated);

    std::vector<double> edge = rest_state(env);
    edge[2] = 1.0;  // the range is closed
    env.set_state(edge, obs.data());
    CHECK(env.is_healthy());

    std::vector<double> bad = rest_state(env);
    bad[20] = std::numeric_limits<double>::quiet_NaN();
    // The state is set, but its observation is not finite: the env API refuses to hand it out.
    CHECK_THROWS_AS(env.set_state(bad, obs.data()), rlx::NonFiniteEnvOutput);
    CHECK_FALSE(env.is_healthy());
  }
  SECTION("InvertedPendulum") {
    rlx::InvertedPendulumEnv env;
    std::vector<float> obs(4);
    const std::vector<float> zero(1, 0.0f);
    env.reset(3, obs.data());
    CHECK_FALSE(env.step(Action{0, zero.data()}, obs.data()).terminated);
    env.set_state({0.0, -0.3, 0.0, 0.0}, obs.data());
    CHECK(env.is_fallen());
    CHECK(env.step(Action{0, zero.data()}, obs.data()).terminated);
    CHECK_THROWS_AS(env.set_state({0.0, 0.1, 0.0, std::numeric_limits<double>::infinity()}, obs.data()),
                    rlx::NonFiniteEnvOutput);
    CHECK(env.is_fallen());
  }
}

TEST_CASE("HalfCheetah never terminates and is truncated at 1000 steps", "[envs][mujoco]") {
  auto env = make_env("HalfCheetah-v4");
  std::vector<float> obs(17);
  const std::vector<float> zero(6, 0.0f);
  env->reset(11, obs.data());
  for (int t = 1; t <= 1000; ++t) {
    const StepResult r = env->step(Action{0, zero.data()}, obs.data());
    REQUIRE_FALSE(r.terminated);
    REQUIRE(r.truncated == (t == 1000));
    REQUIRE(std::abs(r.reward) < 100.0);
  }
  for (float v : obs) CHECK(std::isfinite(v));
}

TEST_CASE("MuJoCo physics sanity", "[envs][mujoco]") {
  SECTION("InvertedPendulum falls over under zero action") {
    rlx::InvertedPendulumEnv env;
    std::vector<float> obs(4);
    const std::vector<float> zero(1, 0.0f);
    for (uint64_t seed = 0; seed < 5; ++seed) {
      env.reset(seed, obs.data());
      int steps = 0;
      while (!env.step(Action{0, zero.data()}, obs.data()).terminated && steps < 1000) ++steps;
      INFO("seed " << seed << " fell after " << steps << " steps");
      CHECK(steps < 100);
    }
  }
  SECTION("InvertedPendulum pushed one way tilts the pole the other way") {
    rlx::InvertedPendulumEnv env;
    std::vector<float> obs(4);
    env.set_state({0.0, 0.0, 0.0, 0.0}, obs.data());
    const std::vector<float> push = {1.0f};
    env.step(Action{0, push.data()}, obs.data());
    CHECK(obs[2] > 0.0f);  // cart moves along +x
    CHECK(obs[1] < 0.0f);  // pole lags behind
  }
  SECTION("Hopper falls under zero action") {
    rlx::HopperEnv env;
    std::vector<float> obs(11);
    const std::vector<float> zero(3, 0.0f);
    env.reset(0, obs.data());
    int steps = 0;
    while (!env.step(Action{0, zero.data()}, obs.data()).terminated && steps < 1000) ++steps;
    CHECK(steps < 1000);
  }
  SECTION("Ant stands on its legs under zero action") {
    rlx::AntEnv env;
    std::vector<float> obs(27);
    const std::vector<float> zero(8, 0.0f);
    env.reset(0, obs.data());
    for (int t = 0; t < 200; ++t) REQUIRE_FALSE(env.step(Action{0, zero.data()}, obs.data()).terminated);
    CHECK(obs[0] > 0.3f);  // torso resting on its legs, above the floor
    CHECK(obs[0] < 0.75f);  // and lower than where it was dropped from
  }
  SECTION("Gravity pulls a raised Walker2d down") {
    rlx::Walker2dEnv env;
    std::vector<double> s = rest_state(env);
    s[1] = 1.6;
    std::vector<float> obs(17);
    env.set_state(s, obs.data());
    const std::vector<float> zero(6, 0.0f);
    for (int t = 0; t < 10; ++t) env.step(Action{0, zero.data()}, obs.data());
    // 10 steps of 8 ms in free fall: z drops by g t^2 / 2 = 0.0314 m.
    CHECK(env.state()[1] == Approx(1.6 - 0.5 * 9.81 * 0.08 * 0.08).margin(2e-3));
  }
}
