// Classic control: parity with Gymnasium 0.29.1 reference rollouts, seeding, specs, edge cases.
#include <catch2/catch.hpp>

#include <cmath>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "envs/classic/cart_pole.h"
#include "envs/classic/pendulum.h"
#include "envs/registry.h"

namespace {

constexpr double kPi = 3.141592653589793;

const std::vector<std::string> kClassicIds = {"CartPole-v1", "Acrobot-v1", "MountainCar-v0",
                                              "MountainCarContinuous-v0", "Pendulum-v1"};

std::vector<nlohmann::json> load_reference() {
  std::ifstream in(std::string(RLX_TEST_DATA_DIR) + "/gymnasium-classic.jsonl");
  REQUIRE(in.good());
  std::vector<nlohmann::json> lines;
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty()) lines.push_back(nlohmann::json::parse(line));
  }
  return lines;
}

// A reusable action for an env: discrete index or a buffer of continuous values.
struct ActionHolder {
  rlx::Action action;
  std::vector<float> values;
};

// Builds the action for one reference step (an int, or a list of floats).
void fill_action(const nlohmann::json& source, ActionHolder& holder) {
  if (source.is_array()) {
    holder.values.clear();
    for (const auto& v : source) holder.values.push_back(v.get<float>());
    holder.action.values = holder.values.data();
  } else {
    holder.action.index = source.get<int64_t>();
  }
}

// Draws a random valid action for the env's action space.
void random_action(const rlx::Space& space, rlx::Rng& rng, ActionHolder& holder) {
  if (space.is_discrete()) {
    holder.action.index = rng.uniform_int(space.n);
    return;
  }
  holder.values.resize(static_cast<size_t>(space.size()));
  for (size_t i = 0; i < holder.values.size(); ++i) {
    holder.values[i] = static_cast<float>(rng.uniform(space.low[i], space.high[i]));
  }
  holder.action.values = holder.values.data();
}

struct Rollout {
  std::vector<float> obs;
  std::vector<double> rewards;
  std::vector<bool> dones;
};

// Resets with seed, then takes `steps` random actions (from a fixed action stream), resetting on episode end.
Rollout roll(const std::string& id, uint64_t seed, int steps) {
  auto env = rlx::global_env_registry().make(id);
  const auto& spec = env->spec();
  std::vector<float> obs(static_cast<size_t>(spec.observation_space.size()));
  Rollout out;
  env->reset(seed, obs.data());
  out.obs.insert(out.obs.end(), obs.begin(), obs.end());
  rlx::Rng action_rng(7);
  ActionHolder holder;
  for (int t = 0; t < steps; ++t) {
    random_action(spec.action_space, action_rng, holder);
    const rlx::StepResult r = env->step(holder.action, obs.data());
    out.obs.insert(out.obs.end(), obs.begin(), obs.end());
    out.rewards.push_back(r.reward);
    out.dones.push_back(r.terminated || r.truncated);
    if (r.terminated || r.truncated) env->reset(std::nullopt, obs.data());
  }
  return out;
}

}  // namespace

TEST_CASE("Classic envs replay Gymnasium 0.29.1 reference rollouts", "[envs][classic]") {
  const auto lines = load_reference();
  REQUIRE(lines.size() == 20);
  for (const auto& line : lines) {
    const std::string id = line.at("env").get<std::string>();
    const uint64_t seed = line.at("seed").get<uint64_t>();
    const auto state = line.at("state").get<std::vector<double>>();
    const auto& actions = line.at("actions");
    const auto& steps = line.at("steps");
    INFO(id << " seed " << seed);
    REQUIRE(actions.size() == steps.size());

    auto env = rlx::global_env_registry().make(id);
    std::vector<float> obs(static_cast<size_t>(env->spec().observation_space.size()));
    env->reset(seed, obs.data());
    env->set_state(state, obs.data());
    CHECK(env->state() == state);

    ActionHolder holder;
    for (size_t t = 0; t < steps.size(); ++t) {
      INFO("step " << t);
      fill_action(actions[t], holder);
      const rlx::StepResult result = env->step(holder.action, obs.data());
      const auto& expected = steps[t];
      const auto expected_obs = expected.at("obs").get<std::vector<double>>();
      REQUIRE(expected_obs.size() == obs.size());
      for (size_t i = 0; i < obs.size(); ++i) {
        INFO("obs[" << i << "]");
        REQUIRE(obs[i] == Approx(expected_obs[i]).margin(1e-4).epsilon(0));
      }
      REQUIRE(result.reward == Approx(expected.at("reward").get<double>()).margin(1e-4).epsilon(0));
      REQUIRE(result.terminated == expected.at("terminated").get<bool>());
      REQUIRE(result.truncated == expected.at("truncated").get<bool>());
    }
  }
}

TEST_CASE("Classic envs are registered with Gymnasium's specs", "[envs][classic]") {
  const auto& registry = rlx::global_env_registry();
  struct Expected {
    std::string id;
    std::string action_space;
    int64_t obs_size;
    int max_steps;
    std::optional<double> threshold;
  };
  const std::vector<Expected> expected = {
      {"CartPole-v1", "Discrete(2)", 4, 500, 475.0},
      {"Acrobot-v1", "Discrete(3)", 6, 500, -100.0},
      {"MountainCar-v0", "Discrete(3)", 2, 200, -110.0},
      {"MountainCarContinuous-v0", "Box(-1, 1, (1,), float32)", 2, 999, 90.0},
      {"Pendulum-v1", "Box(-2, 2, (1,), float32)", 3, 200, std::nullopt},
  };
  for (const auto& e : expected) {
    INFO(e.id);
    REQUIRE(registry.contains(e.id));
    const rlx::EnvSpec& spec = registry.spec(e.id);
    CHECK(spec.id == e.id);
    CHECK(spec.action_space.to_string() == e.action_space);
    CHECK(spec.observation_space.size() == e.obs_size);
    CHECK(spec.max_episode_steps == e.max_steps);
    CHECK(spec.reward_threshold == e.threshold);
    CHECK(registry.make(e.id)->spec().id == e.id);
  }
  const rlx::Space& cart = registry.spec("CartPole-v1").observation_space;
  CHECK(cart.high[0] == 4.8f);
  CHECK(cart.high[2] == Approx(0.41887903f));
  CHECK(std::isinf(cart.high[1]));
  CHECK(std::isinf(cart.high[3]));
  const rlx::Space& acro = registry.spec("Acrobot-v1").observation_space;
  CHECK(acro.high[4] == static_cast<float>(4 * kPi));
  CHECK(acro.high[5] == static_cast<float>(9 * kPi));
  CHECK(registry.spec("Pendulum-v1").observation_space.high[2] == 8.0f);
  CHECK(registry.spec("MountainCar-v0").observation_space.low[0] == -1.2f);
  CHECK(registry.spec("MountainCar-v0").observation_space.high[1] == 0.07f);
}

TEST_CASE("Classic envs are deterministic under a seed", "[envs][classic]") {
  for (const auto& id : kClassicIds) {
    INFO(id);
    const Rollout a = roll(id, 42, 300);
    const Rollout b = roll(id, 42, 300);
    const Rollout c = roll(id, 43, 300);
    CHECK(a.obs == b.obs);
    CHECK(a.rewards == b.rewards);
    CHECK(a.dones == b.dones);
    CHECK(a.obs != c.obs);
  }
}

TEST_CASE("Classic reset observations lie in the documented ranges", "[envs][classic]") {
  auto& registry = rlx::global_env_registry();
  for (uint64_t seed = 0; seed < 200; ++seed) {
    float obs[6];
    auto cart = registry.make("CartPole-v1");
    cart->reset(seed, obs);
    for (int i = 0; i < 4; ++i) {
      CHECK(obs[i] >= -0.05f);
      CHECK(obs[i] <= 0.05f);
    }

    auto acrobot = registry.make("Acrobot-v1");
    acrobot->reset(seed, obs);
    const auto acro_state = acrobot->state();
    for (double v : acro_state) {
      CHECK(std::abs(v) <= 0.1);
      CHECK(static_cast<double>(static_cast<float>(v)) == v);  // float32 values, as Gymnasium stores them
    }
    CHECK(obs[0] == Approx(std::cos(acro_state[0])));
    CHECK(obs[1] == Approx(std::sin(acro_state[0])));
    CHECK(obs[4] == static_cast<float>(acro_state[2]));

    for (const char* id : {"MountainCar-v0", "MountainCarContinuous-v0"}) {
      auto car = registry.make(id);
      car->reset(seed, obs);
      CHECK(obs[0] >= -0.6f);
      CHECK(obs[0] <= -0.4f);
      CHECK(obs[1] == 0.0f);
    }

    auto pendulum = registry.make("Pendulum-v1");
    pendulum->reset(seed, obs);
    const auto pend_state = pendulum->state();
    CHECK(std::abs(pend_state[0]) <= kPi);
    CHECK(std::abs(pend_state[1]) <= 1.0);
    CHECK(std::abs(obs[2]) <= 1.0f);
    CHECK(obs[0] * obs[0] + obs[1] * obs[1] == Approx(1.0f));
  }
}

TEST_CASE("Classic set_state refuses a wrong size", "[envs][classic]") {
  for (const auto& id : kClassicIds) {
    INFO(id);
    auto env = rlx::global_env_registry().make(id);
    std::vector<float> obs(static_cast<size_t>(env->spec().observation_space.size()));
    env->reset(0, obs.data());
    const size_t size = env->state().size();
    CHECK(size >= 2);
    CHECK_THROWS_AS(env->set_state(std::vector<double>(size + 1, 0.0), obs.data()), std::invalid_argument);
    CHECK_THROWS_AS(env->set_state(std::vector<double>(size - 1, 0.0), obs.data()), std::invalid_argument);
    CHECK_THROWS_AS(env->set_state({}, obs.data()), std::invalid_argument);
    std::vector<double> state(size, 0.0);
    env->set_state(state, obs.data());
    CHECK(env->state() == state);
  }
}

TEST_CASE("Classic discrete envs refuse out-of-range actions", "[envs][classic]") {
  for (const char* id : {"CartPole-v1", "Acrobot-v1", "MountainCar-v0"}) {
    INFO(id);
    auto env = rlx::global_env_registry().make(id);
    std::vector<float> obs(static_cast<size_t>(env->spec().observation_space.size()));
    env->reset(0, obs.data());
    rlx::Action action;
    action.index = env->spec().action_space.n;
    CHECK_THROWS_AS(env->step(action, obs.data()), std::invalid_argument);
    action.index = -1;
    CHECK_THROWS_AS(env->step(action, obs.data()), std::invalid_argument);
  }
}

TEST_CASE("CartPole terminates on Gymnasium's thresholds", "[envs][classic]") {
  rlx::CartPoleEnv env;
  float obs[4];
  env.reset(0, obs);
  rlx::Action push_right;
  push_right.index = 1;
  const double theta_limit = 12 * 2 * kPi / 360;

  // Cart moving out past +2.4 (x advances by tau * x_dot before the check).
  env.set_state({2.39, 1.0, 0.0, 0.0}, obs);
  rlx::StepResult r = env.step(push_right, obs);
  CHECK(r.terminated);
  CHECK(r.reward == 1.0);  // the terminating step still pays 1
  CHECK(obs[0] == Approx(2.41f));
  // Stepping past termination pays 0, as in Gymnasium.
  r = env.step(push_right, obs);
  CHECK(r.terminated);
  CHECK(r.reward == 0.0);

  // Cart moving out past -2.4.
  env.set_state({-2.39, -1.0, 0.0, 0.0}, obs);
  r = env.step(push_right, obs);
  CHECK(r.terminated);
  CHECK(r.reward == 1.0);

  // Pole falling past +12 degrees, and past -12 degrees.
  env.set_state({0.0, 0.0, theta_limit - 0.001, 1.0}, obs);
  CHECK(env.step(push_right, obs).terminated);
  env.set_state({0.0, 0.0, -theta_limit + 0.001, -1.0}, obs);
  CHECK(env.step(push_right, obs).terminated);

  // Inside the limits: no termination; exactly on the boundary is not a failure.
  env.set_state({2.0, 0.0, 0.1, 0.0}, obs);
  r = env.step(push_right, obs);
  CHECK_FALSE(r.terminated);
  CHECK(r.reward == 1.0);
  CHECK_FALSE(rlx::CartPoleEnv::is_failure(2.4, theta_limit));
  CHECK_FALSE(rlx::CartPoleEnv::is_failure(-2.4, -theta_limit));
  CHECK(rlx::CartPoleEnv::is_failure(2.4000001, 0.0));
  CHECK(rlx::CartPoleEnv::is_failure(0.0, -theta_limit - 1e-9));
}

TEST_CASE("CartPole truncates at 500 steps when balanced", "[envs][classic]") {
  rlx::CartPoleEnv env;
  float obs[4];
  env.reset(0, obs);
  rlx::Action action;
  rlx::StepResult r;
  // A simple angle controller keeps the pole up; truncation must come exactly at step 500.
  for (int t = 0; t < 500; ++t) {
    action.index = (obs[2] + 0.5f * obs[3]) > 0 ? 1 : 0;
    r = env.step(action, obs);
    if (r.terminated) break;
    CHECK(r.truncated == (t == 499));
  }
  CHECK(env.elapsed_steps() == 500);
  CHECK(r.truncated);
}

TEST_CASE("Pendulum angle_normalize uses a floored modulo", "[envs][classic]") {
  CHECK(rlx::PendulumEnv::angle_normalize(0.0) == Approx(0.0).margin(1e-15));
  CHECK(rlx::PendulumEnv::angle_normalize(3 * kPi / 2) == Approx(-kPi / 2));
  CHECK(rlx::PendulumEnv::angle_normalize(-3 * kPi / 2) == Approx(kPi / 2));
  CHECK(rlx::PendulumEnv::angle_normalize(-7.0) == Approx(-7.0 + 2 * kPi));
  CHECK(rlx::PendulumEnv::angle_normalize(13.0) == Approx(13.0 - 4 * kPi));
}
