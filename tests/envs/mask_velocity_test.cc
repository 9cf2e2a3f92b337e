// CartPoleNoVel-v1, PendulumNoVel-v1 and MountainCarContinuousNoVel-v0 (RL Zoo's
// MaskVelocityWrapper): the base env's observations with the velocities 0, everything else the
// base env's.
#include <catch2/catch.hpp>

#include <memory>
#include <string>
#include <vector>

#include "envs/classic/cart_pole.h"
#include "envs/classic/mask_velocity.h"
#include "envs/registry.h"

namespace {

struct NoVelCase {
  std::string id;
  std::string base_id;
  std::vector<int64_t> velocities;  // RL Zoo's MaskVelocityWrapper.velocity_indices[base_id]
};

const std::vector<NoVelCase> kNoVelCases = {{"CartPoleNoVel-v1", "CartPole-v1", {1, 3}},
                                            {"PendulumNoVel-v1", "Pendulum-v1", {2}},
                                            {"MountainCarContinuousNoVel-v0", "MountainCarContinuous-v0", {1}}};

// A registered env with its observation buffer and a stream of random actions of its space.
struct Driven {
  explicit Driven(const std::string& id, uint64_t action_seed = 11)
      : env(rlx::global_env_registry().make(id)),
        obs(static_cast<size_t>(env->spec().observation_space.size())),
        values(static_cast<size_t>(env->spec().action_space.size())),
        actions(action_seed) {}

  rlx::StepResult step() {
    const rlx::Space& space = env->spec().action_space;
    rlx::Action action;
    if (space.is_discrete()) {
      action.index = actions.uniform_int(space.n);
    } else {
      for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(actions.uniform(space.low[i], space.high[i]));
      action.values = values.data();
    }
    return env->step(action, obs.data());
  }

  std::unique_ptr<rlx::Env> env;
  std::vector<float> obs;
  std::vector<float> values;
  rlx::Rng actions;
};

// `obs` with the entries at `masked` set to 0.
std::vector<float> masked(std::vector<float> obs, const std::vector<int64_t>& indices) {
  for (const int64_t i : indices) obs[static_cast<size_t>(i)] = 0.0f;
  return obs;
}

// Steps both envs (reset alike) with the same actions until `episodes` episodes have ended,
// starting each later episode with an unseeded reset, and checks that `novel` observes `base`
// with the velocities 0 and returns the same rewards, terminations and truncations throughout.
void check_lockstep(Driven& base, Driven& novel, const std::vector<int64_t>& velocities, int episodes) {
  bool velocity_seen = false;  // the hidden entries were nonzero in the base env at some point
  const auto check_obs = [&] {
    REQUIRE(novel.obs == masked(base.obs, velocities));
    for (const int64_t i : velocities) velocity_seen = velocity_seen || base.obs[static_cast<size_t>(i)] != 0.0f;
  };
  check_obs();
  for (int episode = 0; episode < episodes;) {
    const rlx::StepResult expected = base.step();
    const rlx::StepResult got = novel.step();
    INFO("episode " << episode << ", step " << base.env->elapsed_steps());
    REQUIRE(got.reward == expected.reward);
    REQUIRE(got.terminated == expected.terminated);
    REQUIRE(got.truncated == expected.truncated);
    check_obs();
    if (expected.terminated || expected.truncated) {
      ++episode;
      base.env->reset(std::nullopt, base.obs.data());
      novel.env->reset(std::nullopt, novel.obs.data());
      check_obs();
    }
  }
  CHECK(velocity_seen);
}

// The observations (and rewards) of `steps` steps of `env`, unseeded resets where episodes end.
std::vector<float> trace(Driven& env, int steps) {
  std::vector<float> out;
  for (int t = 0; t < steps; ++t) {
    const rlx::StepResult r = env.step();
    out.insert(out.end(), env.obs.begin(), env.obs.end());
    out.push_back(static_cast<float>(r.reward));
    if (r.terminated || r.truncated) env.env->reset(std::nullopt, env.obs.data());
  }
  return out;
}

}  // namespace

TEST_CASE("A NoVel env observes its base env with the velocities 0, reward for reward, over whole episodes",
          "[envs][classic]") {
  for (const NoVelCase& c : kNoVelCases) {
    INFO(c.id);
    Driven base(c.base_id), novel(c.id);
    base.env->reset(42, base.obs.data());
    novel.env->reset(42, novel.obs.data());
    check_lockstep(base, novel, c.velocities, 3);
  }
}

TEST_CASE("A NoVel env's spec is its base env's under its own id, bounds of the hidden entries included",
          "[envs][classic]") {
  const rlx::EnvRegistry& registry = rlx::global_env_registry();
  for (const NoVelCase& c : kNoVelCases) {
    INFO(c.id);
    const rlx::EnvSpec& spec = registry.spec(c.id);
    rlx::EnvSpec base = registry.spec(c.base_id);
    CHECK(spec.id == c.id);
    CHECK(spec.observation_space == base.observation_space);
    CHECK(spec.action_space == base.action_space);
    CHECK(spec.max_episode_steps == base.max_episode_steps);
    CHECK(spec.reward_threshold == base.reward_threshold);
    base.id = c.id;
    CHECK(spec == base);
    const std::unique_ptr<rlx::Env> env = registry.make(c.id);
    CHECK(dynamic_cast<const rlx::MaskVelocityEnv&>(*env).masked_indices() == c.velocities);
    CHECK(env->render_fps() == registry.make(c.base_id)->render_fps());
  }
  // RL Zoo leaves the observation space alone: CartPole's velocities keep their infinite bounds.
  const rlx::Space& cart = registry.spec("CartPoleNoVel-v1").observation_space;
  CHECK(cart.low[1] == -rlx::kInf);
  CHECK(cart.high[3] == rlx::kInf);
}

TEST_CASE("A NoVel env's snapshot is its base env's, and either restores it exactly", "[envs][classic][snapshot]") {
  for (const NoVelCase& c : kNoVelCases) {
    INFO(c.id);
    Driven base(c.base_id), novel(c.id);
    base.env->reset(5, base.obs.data());
    novel.env->reset(5, novel.obs.data());
    for (int t = 0; t < 1100; ++t) {  // past the first episode (999 steps at most) into the next
      const rlx::StepResult r = base.step();
      novel.step();
      if (r.terminated || r.truncated) {
        base.env->reset(std::nullopt, base.obs.data());
        novel.env->reset(std::nullopt, novel.obs.data());
      }
    }
    const rlx::EnvSnapshot from_base = base.env->snapshot().value();
    const rlx::EnvSnapshot from_novel = novel.env->snapshot().value();
    CHECK(from_novel.exact_state == from_base.exact_state);
    CHECK(from_novel.elapsed_steps == from_base.elapsed_steps);
    CHECK(from_novel.seeded == from_base.seeded);
    for (int w = 0; w < 4; ++w) CHECK(from_novel.rng.words[w] == from_base.rng.words[w]);
    CHECK(novel.env->state() == base.env->state());

    const rlx::Rng::State actions = novel.actions.state();
    const std::vector<float> expected = trace(novel, 400);
    for (const rlx::EnvSnapshot* snapshot : {&from_novel, &from_base}) {
      Driven restored(c.id);
      restored.env->restore(*snapshot);
      restored.actions.set_state(actions);
      CHECK(trace(restored, 400) == expected);
    }
  }
}

TEST_CASE("set_state sets the base env's physical state and writes it with the velocities 0", "[envs][classic]") {
  Driven base("CartPole-v1"), novel("CartPoleNoVel-v1");
  const std::vector<double> state = {0.1, -0.5, 0.02, 0.3};
  base.env->reset(9, base.obs.data());
  novel.env->reset(9, novel.obs.data());
  base.env->set_state(state, base.obs.data());
  novel.env->set_state(state, novel.obs.data());
  CHECK(novel.env->state() == state);
  CHECK(novel.obs == masked(base.obs, {1, 3}));
  CHECK(novel.obs[0] == 0.1f);
  check_lockstep(base, novel, {1, 3}, 1);
  CHECK_THROWS_WITH(novel.env->set_state({1.0}, novel.obs.data()),
                    Catch::Contains("CartPoleNoVel-v1") && Catch::Contains("needs 4 values, got 1"));
}

TEST_CASE("A NoVel env refuses a bad action, or a bad mask at construction, by its own id", "[envs][classic]") {
  Driven novel("CartPoleNoVel-v1");
  novel.env->reset(1, novel.obs.data());
  rlx::Action bad;
  bad.index = 2;
  CHECK_THROWS_WITH(novel.env->step(bad, novel.obs.data()),
                    Catch::StartsWith("CartPoleNoVel-v1: ") && Catch::Contains("must be 0 or 1, got 2"));
  const auto make = [](std::vector<int64_t> indices) {
    return rlx::MaskVelocityEnv("MyNoVel-v0", std::make_unique<rlx::CartPoleEnv>(), std::move(indices));
  };
  CHECK_THROWS_WITH(make({1, 4}), Catch::Contains("MyNoVel-v0") && Catch::Contains("masked index 4 is outside"));
  CHECK_THROWS_WITH(make({3, 3}), Catch::Contains("MyNoVel-v0") && Catch::Contains("index 3 is given twice"));
  CHECK_THROWS_WITH(make({}), Catch::Contains("MyNoVel-v0") && Catch::Contains("no observation entries"));
  CHECK_THROWS_WITH(rlx::MaskVelocityEnv("MyNoVel-v0", nullptr, {1}), Catch::Contains("MyNoVel-v0"));
  CHECK(make({3, 1}).masked_indices() == std::vector<int64_t>{1, 3});
}
