// The env API's contract, as rlx enforces it: an env writes exactly its observation's floats,
// every one finite, and a finite reward; an instance carries its registered spec; and a
// snapshot restores an env exactly.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "envs/registry.h"
#include "envs/vector_env.h"

namespace {

// What a FaultyEnv does wrong, at episode step `at`.
enum class Fault { kNone, kWritePastEnd, kIndexPastEnd, kLeaveUnwritten, kNanObservation, kInfReward };

rlx::EnvSpec faulty_spec(int64_t obs_size = 5) {
  rlx::EnvSpec spec;
  spec.id = "Faulty-v0";
  spec.observation_space = rlx::Space::box({obs_size}, -rlx::kInf, rlx::kInf);
  spec.action_space = rlx::Space::discrete(2);
  spec.max_episode_steps = 20;
  return spec;
}

// obs[i] = steps * (i + 1); reward 1; breaks the contract once, at step `at` of each episode.
class FaultyEnv : public rlx::Env {
 public:
  FaultyEnv(Fault fault, int at) : Env(faulty_spec()), fault_(fault), at_(at) {}

 protected:
  void reset_episode(rlx::Rng&, rlx::ObsSpan obs) override { write(obs, 0); }
  rlx::StepResult step_episode(const rlx::Action&, rlx::ObsSpan obs) override {
    rlx::StepResult result{1.0, false, false};
    const int step = elapsed_steps() + 1;
    const bool now = step == at_;
    if (!now || fault_ != Fault::kLeaveUnwritten) write(obs, step);
    if (!now) return result;
    switch (fault_) {
      case Fault::kWritePastEnd: std::memset(obs.data(), 0, 10 * sizeof(float)); break;  // 10 into 5
      case Fault::kIndexPastEnd: obs[5] = 1.0f; break;
      case Fault::kLeaveUnwritten: obs[0] = obs[1] = obs[2] = 0.0f; break;  // obs[3], obs[4] never written
      case Fault::kNanObservation: obs[3] = std::numeric_limits<float>::quiet_NaN(); break;
      case Fault::kInfReward: result.reward = -std::numeric_limits<double>::infinity(); break;
      case Fault::kNone: break;
    }
    return result;
  }

 private:
  static void write(rlx::ObsSpan obs, int step) {
    for (int64_t i = 0; i < obs.size(); ++i) obs[i] = static_cast<float>(step * (i + 1));
  }
  Fault fault_;
  int at_;
};

// Steps env until its step throws; returns the error's message (empty if none was thrown).
template <typename Error>
std::string step_until_error(rlx::Env& env, std::vector<float>& obs, int steps) {
  for (int t = 0; t < steps; ++t) {
    try {
      env.step(rlx::Action{0, nullptr}, obs.data());
    } catch (const Error& error) {
      return error.what();
    }
  }
  return "";
}

}  // namespace

TEST_CASE("An env that writes past its observation is stopped before it corrupts memory", "[envs][contract]") {
  for (const Fault fault : {Fault::kWritePastEnd, Fault::kIndexPastEnd}) {
    FaultyEnv env(fault, 3);
    // The caller's buffer holds exactly the 5 floats, then a sentinel the env must not reach.
    std::vector<float> obs(6, 0.0f);
    obs[5] = 42.0f;
    env.reset(0, obs.data());
    const std::string message = step_until_error<rlx::EnvOutputError>(env, obs, 5);
    INFO(message);
    CHECK_THAT(message, Catch::StartsWith("Faulty-v0: step (episode step 3): observation[5]"));
    CHECK_THAT(message, Catch::Contains("the observation's 5 elements"));
    CHECK(obs[5] == 42.0f);
    CHECK(obs[0] == 2.0f);  // the last good observation, untouched by the failed step
  }
}

TEST_CASE("An env that leaves an observation element unwritten is named", "[envs][contract]") {
  FaultyEnv env(Fault::kLeaveUnwritten, 2);
  std::vector<float> obs(5);
  env.reset(0, obs.data());
  CHECK_THAT(step_until_error<rlx::EnvOutputError>(env, obs, 5),
             Catch::Contains("episode step 2): observation[3] was never written"));
}

TEST_CASE("A NaN observation or an infinite reward is a NonFiniteEnvOutput naming env, step and field",
          "[envs][contract]") {
  FaultyEnv nan_obs(Fault::kNanObservation, 4);
  std::vector<float> obs(5);
  nan_obs.reset(0, obs.data());
  CHECK_THAT(step_until_error<rlx::NonFiniteEnvOutput>(nan_obs, obs, 10),
             Catch::Equals("Faulty-v0: step (episode step 4): observation[3] is nan, not finite"));
  FaultyEnv inf_reward(Fault::kInfReward, 6);
  inf_reward.reset(0, obs.data());
  CHECK_THAT(step_until_error<rlx::NonFiniteEnvOutput>(inf_reward, obs, 10),
             Catch::Equals("Faulty-v0: step (episode step 6): reward is -inf, not finite"));
}

TEST_CASE("An instance whose spec differs from its registration is refused at creation, naming both",
          "[envs][contract][registry]") {
  rlx::EnvRegistry registry;
  rlx::EnvSpec registered = faulty_spec(6);
  registry.add(registered, [] { return std::make_unique<FaultyEnv>(Fault::kNone, 0); });  // instances have 5
  try {
    registry.make("Faulty-v0");
    FAIL("no error");
  } catch (const rlx::EnvContractError& error) {
    const std::string message = error.what();
    CHECK_THAT(message, Catch::Contains("registered: Faulty-v0: observations Box(-inf, inf, (6,), float32)"));
    CHECK_THAT(message, Catch::Contains("instance:   Faulty-v0: observations Box(-inf, inf, (5,), float32)"));
  }
  CHECK_THROWS_AS(rlx::VectorEnv(registry.factory("Faulty-v0"), 2), rlx::EnvContractError);
}

TEST_CASE("VectorEnv names the env index of a contract breach", "[envs][contract][vector]") {
  int made = 0;
  rlx::VectorEnv envs([&made] { return std::make_unique<FaultyEnv>(made++ == 1 ? Fault::kNanObservation : Fault::kNone, 3); },
                      3);
  std::vector<float> obs(15), final_obs(15), rewards(3);
  std::vector<uint8_t> terminated(3), truncated(3);
  envs.reset(0, obs.data());
  const std::vector<int64_t> actions(3, 0);
  rlx::VectorStepBuffers out{obs.data(), rewards.data(), terminated.data(), truncated.data(), final_obs.data(), nullptr,
                             nullptr};
  try {
    for (int t = 0; t < 5; ++t) envs.step({actions.data(), nullptr}, out);
    FAIL("no error");
  } catch (const rlx::NonFiniteEnvOutput& error) {
    CHECK_THAT(error.what(), Catch::StartsWith("env 1: Faulty-v0: step (episode step 3): observation[3] is nan"));
    CHECK(error.field() == "observation[3]");
    CHECK(error.step() == 3);
  }
}

TEST_CASE("With kDropEpisode a non-finite step ends the episode at the last finite observation and is counted",
          "[envs][contract][vector]") {
  rlx::VectorEnv envs([] { return std::make_unique<FaultyEnv>(Fault::kNanObservation, 3); }, 1,
                      rlx::NonFinitePolicy::kDropEpisode);
  std::vector<float> obs(5), final_obs(5, -1.0f), rewards(1);
  std::vector<uint8_t> terminated(1), truncated(1);
  std::vector<double> returns(1);
  std::vector<int32_t> lengths(1);
  rlx::VectorStepBuffers out{obs.data(), rewards.data(), terminated.data(), truncated.data(),
                             final_obs.data(), returns.data(), lengths.data()};
  envs.reset(0, obs.data());
  const int64_t action = 0;
  for (int t = 1; t <= 2; ++t) {
    envs.step({&action, nullptr}, out);
    CHECK_FALSE(truncated[0]);
  }
  envs.step({&action, nullptr}, out);  // step 3 returns NaN
  CHECK(truncated[0]);
  CHECK_FALSE(terminated[0]);
  CHECK(rewards[0] == 0.0f);
  CHECK(final_obs == std::vector<float>{2, 4, 6, 8, 10});  // step 2's observation
  CHECK(lengths[0] == -1);                                 // not an episode to report
  CHECK(obs == std::vector<float>{0, 0, 0, 0, 0});         // the next episode's first observation
  CHECK(envs.episodes_dropped() == 1);
  envs.step({&action, nullptr}, out);
  CHECK_FALSE(truncated[0]);
}

TEST_CASE("Every built-in env restored from a snapshot continues bit for bit", "[envs][contract][snapshot]") {
  const rlx::EnvRegistry& registry = rlx::global_env_registry();
  for (const std::string& id : registry.ids()) {
    INFO(id);
    const rlx::EnvSpec& spec = registry.spec(id);
    std::unique_ptr<rlx::Env> original = registry.make(id);
    const rlx::ObservationLayout& layout = original->observation_layout();
    const auto a = static_cast<size_t>(spec.action_space.is_discrete() ? 1 : spec.action_space.size());
    std::vector<float> floats(static_cast<size_t>(layout.float_slots)), action_values(a);
    std::vector<int64_t> action_indices(a);  // MultiDiscrete (Toy/DictSensors-v0)
    std::vector<uint8_t> bytes(static_cast<size_t>(layout.byte_slots));  // MinAtar's grids
    const rlx::ObsRow obs(floats.data(), bytes.data());
    rlx::Rng actions(7);
    const auto next_action = [&] {
      rlx::Action action;
      if (spec.action_space.is_discrete()) {
        action.index = actions.uniform_int(spec.action_space.n);
      } else if (spec.action_space.is_multi_discrete()) {
        for (size_t j = 0; j < a; ++j) action_indices[j] = spec.action_space.starts[j] + actions.uniform_int(spec.action_space.nvec[j]);
        action.indices = action_indices.data();
      } else {
        for (size_t j = 0; j < a; ++j) action_values[j] = static_cast<float>(actions.uniform(-1.0, 1.0));
        action.values = action_values.data();
      }
      return action;
    };
    // Run into an episode, snapshot, then record what follows (episodes end and restart with
    // the env's own generator).
    original->reset(3, obs);
    for (int t = 0; t < 25; ++t) {
      if (original->step(next_action(), obs).terminated) original->reset(std::nullopt, obs);
    }
    const std::optional<rlx::EnvSnapshot> snapshot = original->snapshot();
    REQUIRE(snapshot);
    // 300 steps' observations (both parts) and rewards, resetting where episodes end.
    const auto record = [&](rlx::Env& env) {
      std::vector<float> trace;
      for (int t = 0; t < 300; ++t) {
        const rlx::StepResult r = env.step(next_action(), obs);
        trace.insert(trace.end(), floats.begin(), floats.end());
        trace.insert(trace.end(), bytes.begin(), bytes.end());
        trace.push_back(static_cast<float>(r.reward));
        if (r.terminated || r.truncated) env.reset(std::nullopt, obs);
      }
      return trace;
    };
    const rlx::Rng::State action_state = actions.state();
    const std::vector<float> expected = record(*original);
    std::unique_ptr<rlx::Env> restored = registry.make(id);
    restored->restore(*snapshot);
    actions.set_state(action_state);
    const std::vector<float> replayed = record(*restored);
    CHECK(std::memcmp(expected.data(), replayed.data(), expected.size() * sizeof(float)) == 0);
  }
  // An env without exact_state() cannot be snapshot.
  FaultyEnv plain(Fault::kNone, 0);
  CHECK_FALSE(plain.snapshot());
}
