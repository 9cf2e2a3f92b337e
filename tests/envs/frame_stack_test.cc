#include <catch2/catch.hpp>

#include <memory>
#include <string>
#include <vector>

#include "core/config_error.h"
#include "envs/frame_stack.h"
#include "envs/vector_env.h"

namespace {

using rlx::EnvSpec;
using rlx::Space;

// A counter: obs = [episode, step] (episode counts resets), action 1 terminates, the spec's limit
// of 4 steps truncates; a mask of Discrete(2) whose second entry is legal on even steps.
class CounterEnv : public rlx::Env {
 public:
  CounterEnv() : rlx::Env(make_spec()) {}

  static EnvSpec make_spec() {
    EnvSpec spec;
    spec.id = "Counter-v0";
    spec.observation_space = Space::box({2}, -100.0f, 100.0f);
    spec.action_space = Space::discrete(2);
    spec.action_mask = true;
    spec.max_episode_steps = 4;
    return spec;
  }

 protected:
  void reset_episode(rlx::Rng&, rlx::ObsSpan obs) override {
    ++episode_;
    step_ = 0;
    write(obs);
  }
  rlx::StepResult step_episode(const rlx::Action& action, rlx::ObsSpan obs) override {
    ++step_;
    write(obs);
    return {1.0, action.index == 1, false};
  }

 private:
  void write(rlx::ObsSpan& obs) const {
    obs[0] = static_cast<float>(episode_);
    obs[1] = static_cast<float>(step_);
    obs.action_mask()[0] = 1;
    obs.action_mask()[1] = step_ % 2 == 0 ? 1 : 0;
  }
  int episode_ = 0;
  int step_ = 0;
};

// A 1 x 2 image of 2 channels (uint8): pixel p, channel c holds 10 * step + 2 * p + c.
class PixelsEnv : public rlx::Env {
 public:
  PixelsEnv() : rlx::Env(make_spec()) {}

  static EnvSpec make_spec() {
    EnvSpec spec;
    spec.id = "Pixels-v0";
    spec.observation_space = Space::box({1, 2, 2}, {0, 0, 0, 0}, {200, 201, 202, 203}, rlx::ScalarType::kUint8);
    spec.action_space = Space::discrete(2);
    return spec;
  }

 protected:
  void reset_episode(rlx::Rng&, rlx::ObsSpan obs) override {
    step_ = 0;
    write(obs);
  }
  rlx::StepResult step_episode(const rlx::Action&, rlx::ObsSpan obs) override {
    ++step_;
    write(obs);
    return {0.0, false, false};
  }

 private:
  void write(rlx::ObsSpan& obs) const {
    for (int i = 0; i < 4; ++i) obs.bytes()[i] = static_cast<uint8_t>(10 * step_ + i);
  }
  int step_ = 0;
};

// The floats of one stacked Counter observation: the pairs [episode, step], oldest first.
std::vector<float> pairs(std::initializer_list<std::pair<int, int>> frames) {
  std::vector<float> out;
  for (const auto& [episode, step] : frames) {
    out.push_back(static_cast<float>(episode));
    out.push_back(static_cast<float>(step));
  }
  return out;
}

struct StackedCounter {
  StackedCounter() : env(std::make_unique<CounterEnv>(), 3), floats(6), bytes(2) {}
  rlx::StepResult step(int64_t action) {
    rlx::Action a;
    a.index = action;
    return env.step(a, rlx::ObsRow(floats.data(), bytes.data()));
  }
  rlx::FrameStackEnv env;
  std::vector<float> floats;
  std::vector<uint8_t> bytes;  // the action mask
};

}  // namespace

TEST_CASE("frame_stacked_spec stacks an image on its channel axis, oldest frame first", "[envs][frame_stack]") {
  const EnvSpec stacked = rlx::frame_stacked_spec(PixelsEnv::make_spec(), 3);
  CHECK(stacked.observation_space.shape == std::vector<int64_t>{1, 2, 6});
  CHECK(stacked.observation_space.dtype == rlx::ScalarType::kUint8);
  // Pixel 0's channels (bounds 200, 201) three times, then pixel 1's (202, 203).
  CHECK(stacked.observation_space.high == std::vector<float>{200, 201, 200, 201, 200, 201, 202, 203, 202, 203, 202, 203});
  CHECK(stacked.id == "Pixels-v0");
  CHECK(stacked.action_space == PixelsEnv::make_spec().action_space);

  const EnvSpec breakout = rlx::frame_stacked_spec(rlx::global_env_registry().spec("MinAtar/Breakout-v1"), 4);
  CHECK(breakout.observation_space.shape == std::vector<int64_t>{10, 10, 16});
  CHECK(breakout.observation_space.dtype == rlx::ScalarType::kUint8);
}

TEST_CASE("frame_stacked_spec puts vectors end to end and keeps their bounds", "[envs][frame_stack]") {
  const EnvSpec cartpole = rlx::global_env_registry().spec("CartPole-v1");
  const EnvSpec stacked = rlx::frame_stacked_spec(cartpole, 2);
  CHECK(stacked.observation_space.shape == std::vector<int64_t>{8});
  std::vector<float> low = cartpole.observation_space.low;
  low.insert(low.end(), cartpole.observation_space.low.begin(), cartpole.observation_space.low.end());
  CHECK(stacked.observation_space.low == low);
  CHECK(stacked.max_episode_steps == cartpole.max_episode_steps);
  CHECK(rlx::frame_stacked_spec(cartpole, 1) == cartpole);
}

TEST_CASE("frame_stacked_spec refuses spaces other than Boxes of rank 1 and 3, naming env and space", "[envs][frame_stack]") {
  const EnvSpec dict = rlx::global_env_registry().spec("Toy/DictSensors-v0");
  CHECK_THROWS_AS(rlx::frame_stacked_spec(dict, 4), rlx::ConfigError);
  CHECK_THROWS_WITH(rlx::frame_stacked_spec(dict, 4),
                    Catch::Matchers::Contains("Toy/DictSensors-v0") && Catch::Matchers::Contains("Dict("));
  CHECK(rlx::frame_stacked_spec(dict, 1) == dict);  // 1 stacks nothing, so any space will do

  EnvSpec grid = CounterEnv::make_spec();
  grid.observation_space = Space::box({3, 3}, 0.0f, 1.0f);
  CHECK_THROWS_AS(rlx::frame_stacked_spec(grid, 2), rlx::ConfigError);
  CHECK_THROWS_WITH(rlx::frame_stacked_spec(grid, 2),
                    Catch::Matchers::Contains("Counter-v0") && Catch::Matchers::Contains("(3, 3)"));
  EnvSpec discrete = CounterEnv::make_spec();
  discrete.observation_space = Space::discrete(5);
  CHECK_THROWS_AS(rlx::frame_stacked_spec(discrete, 2), rlx::ConfigError);
  CHECK_THROWS_AS(rlx::frame_stacked_spec(CounterEnv::make_spec(), rlx::kMaxFrameStack + 1), rlx::ConfigError);
  CHECK_THROWS_AS(rlx::FrameStackEnv(rlx::global_env_registry().make("Toy/DictSensors-v0"), 2), rlx::ConfigError);
}

TEST_CASE("A stack starts as the reset observation repeated and drops its oldest frame each step", "[envs][frame_stack]") {
  StackedCounter counter;
  counter.env.reset(7, rlx::ObsRow(counter.floats.data(), counter.bytes.data()));
  CHECK(counter.floats == pairs({{1, 0}, {1, 0}, {1, 0}}));
  counter.step(0);
  CHECK(counter.floats == pairs({{1, 0}, {1, 0}, {1, 1}}));
  CHECK(counter.bytes == std::vector<uint8_t>{1, 0});  // the newest frame's mask (step 1: odd)
  counter.step(0);
  counter.step(0);
  CHECK(counter.floats == pairs({{1, 1}, {1, 2}, {1, 3}}));
  CHECK(counter.bytes == std::vector<uint8_t>{1, 0});
  const rlx::StepResult last = counter.step(0);
  CHECK(last.truncated);  // the inner env's limit of 4 steps is the stacked env's too
  CHECK(counter.floats == pairs({{1, 2}, {1, 3}, {1, 4}}));
  CHECK(counter.bytes == std::vector<uint8_t>{1, 1});
  counter.env.reset(std::nullopt, rlx::ObsRow(counter.floats.data(), counter.bytes.data()));
  CHECK(counter.floats == pairs({{2, 0}, {2, 0}, {2, 0}}));
}

TEST_CASE("A stacked image interleaves its frames per pixel, oldest first", "[envs][frame_stack]") {
  rlx::FrameStackEnv env(std::make_unique<PixelsEnv>(), 2);
  std::vector<uint8_t> bytes(8);
  env.reset(0, rlx::ObsRow(nullptr, bytes.data()));
  CHECK(bytes == std::vector<uint8_t>{0, 1, 0, 1, 2, 3, 2, 3});
  env.step(rlx::Action{}, rlx::ObsRow(nullptr, bytes.data()));
  CHECK(bytes == std::vector<uint8_t>{0, 1, 10, 11, 2, 3, 12, 13});
  env.step(rlx::Action{}, rlx::ObsRow(nullptr, bytes.data()));
  CHECK(bytes == std::vector<uint8_t>{10, 11, 20, 21, 12, 13, 22, 23});
}

TEST_CASE("Under a VectorEnv the stack restarts at an autoreset and the final observation is stacked", "[envs][frame_stack]") {
  rlx::VectorEnv envs(rlx::frame_stacked_factory([] { return std::make_unique<CounterEnv>(); }, 3), 2);
  REQUIRE(envs.obs_size() == 6);
  REQUIRE(envs.obs_bytes() == 2);
  std::vector<float> obs(12), final_obs(12, -1.0f), rewards(2);
  std::vector<uint8_t> bytes(4), final_bytes(4), terminated(2), truncated(2);
  envs.reset(0, obs.data(), bytes.data());
  const rlx::VectorStepBuffers out{obs.data(), rewards.data(), terminated.data(), truncated.data(), final_obs.data(),
                                   nullptr, nullptr, bytes.data(), final_bytes.data()};
  auto row = [](const std::vector<float>& values, int i) {
    return std::vector<float>(values.begin() + 6 * i, values.begin() + 6 * (i + 1));
  };
  const int64_t actions[2][2] = {{0, 0}, {1, 0}};  // step 2: env 0 terminates
  envs.step({actions[0], nullptr}, out);
  envs.step({actions[1], nullptr}, out);
  CHECK(terminated[0] == 1);
  CHECK(row(final_obs, 0) == pairs({{1, 0}, {1, 1}, {1, 2}}));
  CHECK(row(obs, 0) == pairs({{2, 0}, {2, 0}, {2, 0}}));  // the new episode's first observation, repeated
  CHECK(row(obs, 1) == pairs({{1, 0}, {1, 1}, {1, 2}}));
  envs.step({actions[0], nullptr}, out);
  CHECK(row(obs, 0) == pairs({{2, 0}, {2, 0}, {2, 1}}));
  envs.step({actions[0], nullptr}, out);  // step 4 of env 1: truncated by the time limit
  CHECK(truncated[1] == 1);
  CHECK(row(final_obs, 1) == pairs({{1, 2}, {1, 3}, {1, 4}}));  // what a bootstrap reads
  CHECK(final_bytes[2] == 1);
  CHECK(final_bytes[3] == 1);  // the final frame's mask (step 4: even)
  CHECK(row(obs, 1) == pairs({{2, 0}, {2, 0}, {2, 0}}));
}

TEST_CASE("A stacked env's snapshot restores the inner env and the stack exactly", "[envs][frame_stack]") {
  const rlx::EnvFactory factory = rlx::frame_stacked_factory(rlx::global_env_registry().factory("MinAtar/Breakout-v1"), 4);
  const std::unique_ptr<rlx::Env> env = factory();
  std::vector<uint8_t> bytes(static_cast<size_t>(env->observation_layout().byte_slots));
  env->reset(3, rlx::ObsRow(nullptr, bytes.data()));
  rlx::Action action;
  for (int t = 0; t < 6; ++t) {
    action.index = t % 3;
    env->step(action, rlx::ObsRow(nullptr, bytes.data()));
  }
  const std::optional<rlx::EnvSnapshot> snapshot = env->snapshot();
  REQUIRE(snapshot);
  const std::unique_ptr<rlx::Env> copy = factory();
  std::vector<uint8_t> copy_bytes(bytes.size());
  copy->reset(99, rlx::ObsRow(nullptr, copy_bytes.data()));
  copy->restore(*snapshot);
  for (int t = 0; t < 20; ++t) {
    action.index = t % 3;
    const rlx::StepResult a = env->step(action, rlx::ObsRow(nullptr, bytes.data()));
    const rlx::StepResult b = copy->step(action, rlx::ObsRow(nullptr, copy_bytes.data()));
    REQUIRE(bytes == copy_bytes);
    REQUIRE(a.reward == b.reward);
    REQUIRE(a.terminated == b.terminated);
    if (a.terminated || a.truncated) break;
  }
  CHECK(&rlx::unstacked_env(*env) != env.get());
  CHECK(rlx::unstacked_env(*env).spec() == rlx::global_env_registry().spec("MinAtar/Breakout-v1"));
}
