#include <catch2/catch.hpp>

#include <vector>

#include "envs/registry.h"
#include "envs/vector_env.h"

namespace {

// A counter env: obs = [steps in episode, draw from reset]; reward = action index; it
// terminates after terminate_after steps and is truncated by the spec's limit of 5.
class CounterEnv : public rlx::Env {
 public:
  explicit CounterEnv(int terminate_after) : rlx::Env(make_spec()), terminate_after_(terminate_after) {}

  static rlx::EnvSpec make_spec() {
    rlx::EnvSpec spec;
    spec.id = "Counter-v0";
    spec.observation_space = rlx::Space::box({2}, -rlx::kInf, rlx::kInf);
    spec.action_space = rlx::Space::discrete(3);
    spec.max_episode_steps = 5;
    return spec;
  }

 protected:
  void reset_episode(rlx::Rng& rng, rlx::ObsSpan obs) override {
    count_ = 0;
    draw_ = static_cast<float>(rng.uniform());
    obs[0] = 0.0f;
    obs[1] = draw_;
  }
  rlx::StepResult step_episode(const rlx::Action& action, rlx::ObsSpan obs) override {
    ++count_;
    obs[0] = static_cast<float>(count_);
    obs[1] = draw_;
    return {static_cast<double>(action.index), count_ >= terminate_after_, false};
  }

 private:
  int terminate_after_;
  int count_ = 0;
  float draw_ = 0.0f;
};

struct Buffers {
  explicit Buffers(int k) : obs(2 * k), final_obs(2 * k, -1.0f), rewards(k), returns(k), lengths(k), term(k), trunc(k) {}
  rlx::VectorStepBuffers view() {
    return {obs.data(), rewards.data(), term.data(), trunc.data(), final_obs.data(), returns.data(), lengths.data()};
  }
  std::vector<float> obs, final_obs, rewards;
  std::vector<double> returns;
  std::vector<int32_t> lengths;
  std::vector<uint8_t> term, trunc;
};

}  // namespace

TEST_CASE("VectorEnv auto-resets and keeps the final observation", "[envs][vector]") {
  // env 0 terminates after 3 steps; env 1 never terminates and is truncated at 5.
  int made = 0;
  rlx::VectorEnv envs([&made] { return std::make_unique<CounterEnv>(made++ == 0 ? 3 : 100); }, 2);
  Buffers b(2);
  envs.reset(42, b.obs.data());
  const float first_draw_env0 = b.obs[1];
  const std::vector<int64_t> actions = {2, 1};
  rlx::ActionBatch batch{actions.data(), nullptr};

  for (int t = 1; t <= 2; ++t) {
    envs.step(batch, b.view());
    CHECK(b.obs[0] == t);
    CHECK_FALSE(b.term[0]);
    CHECK_FALSE(b.trunc[1]);
  }
  envs.step(batch, b.view());  // step 3: env 0 terminates
  CHECK(b.term[0]);
  CHECK_FALSE(b.trunc[0]);
  CHECK(b.final_obs[0] == 3.0f);            // last obs of the finished episode
  CHECK(b.final_obs[1] == first_draw_env0);
  CHECK(b.obs[0] == 0.0f);                  // obs is the new episode's first one
  CHECK(b.obs[1] != first_draw_env0);       // drawn anew by the continuing stream
  CHECK(b.returns[0] == 6.0);
  CHECK(b.lengths[0] == 3);
  CHECK(b.rewards[0] == 2.0f);

  envs.step(batch, b.view());  // step 4
  CHECK_FALSE(b.trunc[1]);
  envs.step(batch, b.view());  // step 5: env 1 hits the time limit
  CHECK(b.trunc[1]);
  CHECK_FALSE(b.term[1]);
  CHECK(b.final_obs[2] == 5.0f);
  CHECK(b.obs[2] == 0.0f);
  CHECK(b.returns[1] == 5.0);
  CHECK(b.lengths[1] == 5);
}

TEST_CASE("VectorEnv seeds env i with seed + i", "[envs][vector]") {
  rlx::VectorEnv a([] { return std::make_unique<CounterEnv>(3); }, 3);
  rlx::VectorEnv b([] { return std::make_unique<CounterEnv>(3); }, 3);
  std::vector<float> obs_a(6), obs_b(6);
  a.reset(7, obs_a.data());
  b.reset(7, obs_b.data());
  CHECK(obs_a == obs_b);
  CHECK(obs_a[1] != obs_a[3]);
  CounterEnv single(3);
  std::vector<float> obs(2);
  single.reset(8, obs.data());
  CHECK(obs[1] == obs_a[3]);
}

TEST_CASE("VectorEnv refuses bad arguments", "[envs][vector]") {
  CHECK_THROWS_AS(rlx::VectorEnv([] { return std::make_unique<CounterEnv>(3); }, 0), std::invalid_argument);
  rlx::VectorEnv envs([] { return std::make_unique<CounterEnv>(3); }, 1);
  Buffers b(1);
  envs.reset(0, b.obs.data());
  CHECK_THROWS_AS(envs.step(rlx::ActionBatch{}, b.view()), std::invalid_argument);
}

TEST_CASE("EnvRegistry refuses duplicates and lists known ids for unknown ones", "[envs][registry]") {
  rlx::EnvRegistry registry;
  registry.add(CounterEnv::make_spec(), [] { return std::make_unique<CounterEnv>(3); });
  CHECK(registry.contains("Counter-v0"));
  CHECK(registry.find("Nope-v0") == std::nullopt);
  CHECK_THROWS_AS(registry.add(CounterEnv::make_spec(), [] { return std::make_unique<CounterEnv>(3); }),
                  std::invalid_argument);
  CHECK_THROWS_WITH(registry.make("Nope-v0"), Catch::Contains("Nope-v0") && Catch::Contains("Counter-v0"));
  // A typo is a user's input error (exit status 2) with a suggestion and the plugin hint.
  CHECK_THROWS_AS(registry.spec("Countr-v0"), rlx::UnknownEnvError);
  CHECK_THROWS_WITH(registry.spec("Countr-v0"),
                    Catch::Contains("did you mean 'Counter-v0'?") && Catch::Contains("--env-plugin PATH"));
  // Actions rlx cannot act in, and a mask without a Discrete or MultiDiscrete action, are refused by name.
  rlx::EnvSpec tuple_actions = CounterEnv::make_spec();
  tuple_actions.id = "Bad-v0";
  tuple_actions.action_space = rlx::Space::tuple({rlx::Space::discrete(2), rlx::Space::discrete(3)});
  CHECK_THROWS_WITH(registry.add(tuple_actions, [] { return std::make_unique<CounterEnv>(3); }),
                    Catch::Contains("environment 'Bad-v0': action_space Tuple(Discrete(2), Discrete(3)) is not supported"));
  rlx::EnvSpec masked_box = CounterEnv::make_spec();
  masked_box.id = "Bad-v1";
  masked_box.action_space = rlx::Space::box({2}, -1, 1);
  masked_box.action_mask = true;
  CHECK_THROWS_WITH(registry.add(masked_box, [] { return std::make_unique<CounterEnv>(3); }),
                    Catch::Contains("an action mask needs a Discrete or MultiDiscrete action space"));
  rlx::EnvSpec bad_bounds = CounterEnv::make_spec();
  bad_bounds.id = "Bad-v2";
  bad_bounds.observation_space.kind = rlx::SpaceKind::kDict;  // malformed: a Dict without subspaces
  CHECK_THROWS_WITH(registry.add(bad_bounds, [] { return std::make_unique<CounterEnv>(3); }),
                    Catch::Contains("environment 'Bad-v2': observation_space: Dict space has no subspaces"));
}

TEST_CASE("Env::step adds the time limit as Gymnasium's TimeLimit does", "[envs]") {
  CounterEnv env(5);  // terminates exactly at the limit
  std::vector<float> obs(2);
  env.reset(1, obs.data());
  rlx::StepResult r;
  for (int t = 0; t < 5; ++t) r = env.step(rlx::Action{0, nullptr}, obs.data());
  CHECK(r.terminated);
  CHECK(r.truncated);  // Gymnasium's TimeLimit also sets truncated; learners treat terminated first
  CHECK(env.elapsed_steps() == 5);
}
