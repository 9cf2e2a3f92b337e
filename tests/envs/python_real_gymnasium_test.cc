// Hidden ("[.][gymnasium]"): the bridge against real Gymnasium spaces and envs
// (tests/envs/python/gymnasium_envs.py). The suite has no Gymnasium, so ctest never lists it;
// run it by hand with Gymnasium 0.29.1 from /work/shared/peers/setup.sh:
//   . $PEERS/env.sh && build/tests/rlx_envs_tests "[gymnasium]"
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "core/observation_layout.h"
#include "envs/python_env.h"
#include "envs/registry.h"

namespace {

using rlx::Space;

std::unique_ptr<rlx::Env> gymnasium_env(const std::string& attribute) {
  rlx::add_python_path({std::string(RLX_SOURCE_DIR) + "/tests/envs/python"});
  const std::string id = "python:gymnasium_envs:" + attribute;
  rlx::register_python_env(id);
  return rlx::global_env_registry().make(id);
}

// Both parts of one observation of env.
struct Row {
  std::vector<float> floats;
  std::vector<uint8_t> bytes;
  explicit Row(const rlx::Env& env)
      : floats(static_cast<size_t>(env.observation_layout().float_slots)),
        bytes(static_cast<size_t>(env.observation_layout().byte_slots)) {}
  rlx::ObsRow row() { return {floats.data(), bytes.data()}; }
  const uint8_t* mask(const rlx::Env& env) const { return bytes.data() + env.observation_layout().mask_offset; }
};

}  // namespace

TEST_CASE("Real Gymnasium spaces, RLlib's mask and gymnasium.spaces.flatten through the bridge", "[.][gymnasium]") {
  auto env = gymnasium_env("RealSpaces");
  const rlx::EnvSpec& spec = env->spec();
  CHECK(spec.action_mask);
  CHECK(spec.action_space == Space::discrete(4, 1));
  REQUIRE(spec.observation_space.keys == std::vector<std::string>{"observations"});
  const Space& inner = spec.observation_space.children[0];
  REQUIRE(inner.keys == std::vector<std::string>{"expected", "sample"});
  const rlx::ObservationLayout& layout = env->observation_layout();
  const int64_t dim = inner.children[0].size();
  REQUIRE(layout.flat_size == 2 * dim);  // expected, then the sample's flattening
  Row obs(*env);
  std::vector<float> flat(static_cast<size_t>(layout.flat_size));
  for (int t = 0; t < 200; ++t) {
    if (t % 50 == 0) {
      env->reset(static_cast<uint64_t>(t), obs.row());
    } else {
      rlx::Action action;
      for (int64_t i = 0; i < 4; ++i) {
        if (obs.mask(*env)[i] != 0) {
          action.index = 1 + i;  // the first legal action: a value of Discrete(4, start=1)
          break;
        }
      }
      env->step(action, obs.row());  // the env asserts the action is legal
    }
    rlx::flatten_observations(layout, obs.floats.data(), obs.bytes.data(), 1, flat.data());
    for (int64_t i = 0; i < dim; ++i) {
      INFO("step " << t << ", flat element " << i);
      CHECK(flat[static_cast<size_t>(dim + i)] == Approx(flat[static_cast<size_t>(i)]).epsilon(1e-6).margin(1e-7));
    }
  }
}

TEST_CASE("SB3's action_masks() behind gymnasium.make's wrappers, MultiDiscrete actions with starts", "[.][gymnasium]") {
  auto env = gymnasium_env("make_sb3_masked");
  const rlx::EnvSpec& spec = env->spec();
  CHECK(spec.action_mask);
  CHECK(spec.max_episode_steps == 7);
  CHECK(spec.action_space == Space::multi_discrete({3, 2}, {1, -1}));
  Row obs(*env);
  env->reset(0, obs.row());
  int truncations = 0;
  for (int t = 0; t < 30; ++t) {
    const uint8_t* mask = obs.mask(*env);
    int64_t values[2] = {0, 0};
    for (int64_t i = 2; i >= 0; --i) values[0] = mask[i] != 0 ? 1 + i : values[0];
    for (int64_t i = 1; i >= 0; --i) values[1] = mask[3 + i] != 0 ? -1 + i : values[1];
    rlx::Action action;
    action.indices = values;
    if (env->step(action, obs.row()).truncated) {
      ++truncations;
      env->reset(std::nullopt, obs.row());
    }
  }
  CHECK(truncations == 4);  // 30 steps, 7 per episode
}

TEST_CASE("Gymnasium's Blackjack (a Tuple of Discretes) and FrozenLake (a Discrete) run through the bridge", "[.][gymnasium]") {
  SECTION("Blackjack-v1") {
    auto env = gymnasium_env("make_blackjack");
    CHECK(env->spec().observation_space == Space::tuple({Space::discrete(32), Space::discrete(11), Space::discrete(2)}));
    Row obs(*env);
    env->reset(3, obs.row());
    int episodes = 0;
    for (int t = 0; t < 300; ++t) {
      rlx::Action action;
      action.index = obs.floats[0] < 17 ? 1 : 0;  // hit below 17
      const rlx::StepResult step = env->step(action, obs.row());
      if (step.terminated || step.truncated) {
        ++episodes;
        env->reset(std::nullopt, obs.row());
      }
      CHECK(obs.floats[0] >= 4);
    }
    CHECK(episodes > 50);
  }
  SECTION("FrozenLake-v1") {
    auto env = gymnasium_env("make_frozen_lake");
    CHECK(env->spec().observation_space == Space::discrete(16));
    CHECK(env->spec().max_episode_steps == 100);
    Row obs(*env);
    env->reset(0, obs.row());
    CHECK(obs.floats == std::vector<float>{0});
  }
}
