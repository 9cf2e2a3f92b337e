// Envs with structured observations, byte leaves and action masks through the env API and
// VectorEnv: what an env writes arrives in both parts of the observation, values outside their
// space and masks that allow nothing are breaches named by their path, and MultiDiscrete actions
// reach the env as its space's values.
#include <catch2/catch.hpp>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "envs/registry.h"
#include "envs/vector_env.h"

namespace {

// What a GridEnv does wrong at step `at`.
enum class GridFault { kNone, kPixelOutOfBounds, kDiscreteOutOfSpace, kEmptyMask, kBytePastEnd, kMaskIndexPastEnd };

// Dict('grid': Box(0, 1, (2, 2, 2), uint8), 'level': Discrete(3, start=1)) with MultiDiscrete([3 2]) masked actions.
rlx::EnvSpec grid_spec() {
  using rlx::Space;
  rlx::EnvSpec spec;
  spec.id = "Grid-v0";
  spec.observation_space = Space::dict({{"grid", Space::box({2, 2, 2}, 0, 1, rlx::ScalarType::kUint8)},
                                        {"level", Space::discrete(3, 1)}});
  spec.action_space = Space::multi_discrete({3, 2}, {0, 5});
  spec.action_mask = true;
  spec.max_episode_steps = 10;
  return spec;
}

// Lights grid cell (step mod 8), level 1 + step mod 3, forbids action element 0's value 0 and
// rewards the sum of the action's values; records the last action it got.
class GridEnv : public rlx::Env {
 public:
  explicit GridEnv(GridFault fault = GridFault::kNone, int at = 0) : Env(grid_spec()), fault_(fault), at_(at) {}
  std::vector<int64_t> last_action;

 protected:
  void reset_episode(rlx::Rng&, rlx::ObsSpan obs) override { write(obs, 0); }
  rlx::StepResult step_episode(const rlx::Action& action, rlx::ObsSpan obs) override {
    last_action.assign(action.indices, action.indices + 2);
    const int step = elapsed_steps() + 1;
    write(obs, step);
    if (step == at_) {
      switch (fault_) {
        case GridFault::kPixelOutOfBounds: obs.bytes()[3] = 2; break;
        case GridFault::kDiscreteOutOfSpace: obs[0] = 0.0f; break;  // Discrete(3, start=1) holds 1..3
        case GridFault::kEmptyMask: obs.action_mask()[3] = 0; obs.action_mask()[4] = 0; break;
        case GridFault::kBytePastEnd: std::memset(obs.bytes().data(), 0, 8 + 5 + 1); break;
        case GridFault::kMaskIndexPastEnd: obs.action_mask()[5] = 1; break;
        case GridFault::kNone: break;
      }
    }
    return {static_cast<double>(action.indices[0] + action.indices[1]), false, false};
  }

 private:
  static void write(rlx::ObsSpan obs, int step) {
    for (int64_t i = 0; i < obs.bytes().size(); ++i) obs.bytes()[i] = i == step % 8;
    obs[0] = static_cast<float>(1 + step % 3);
    const uint8_t mask[5] = {0, 1, 1, 1, 1};
    for (int64_t i = 0; i < 5; ++i) obs.action_mask()[i] = mask[i] * 7;  // any nonzero byte means legal
  }
  GridFault fault_;
  int at_;
};

std::string step_error(GridFault fault) {
  GridEnv env(fault, 2);
  std::vector<float> floats(1);
  std::vector<uint8_t> bytes(13);
  env.reset(0, rlx::ObsRow(floats.data(), bytes.data()));
  const int64_t action[2] = {1, 5};
  rlx::Action a;
  a.indices = action;
  env.step(a, rlx::ObsRow(floats.data(), bytes.data()));
  try {
    env.step(a, rlx::ObsRow(floats.data(), bytes.data()));
  } catch (const rlx::EnvOutputError& error) {
    return error.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("A Dict observation arrives as floats and bytes, its mask as 0/1 after the leaves", "[envs]") {
  GridEnv env;
  const rlx::ObservationLayout& layout = env.observation_layout();
  CHECK(layout.float_slots == 1);
  CHECK(layout.byte_slots == 8 + 5);
  CHECK(layout.mask_offset == 8);
  std::vector<float> floats(1);
  std::vector<uint8_t> bytes(13);
  env.reset(0, rlx::ObsRow(floats.data(), bytes.data()));
  CHECK(floats[0] == 1.0f);
  CHECK(std::vector<uint8_t>(bytes.begin(), bytes.begin() + 8) == std::vector<uint8_t>{1, 0, 0, 0, 0, 0, 0, 0});
  CHECK(std::vector<uint8_t>(bytes.begin() + 8, bytes.end()) == std::vector<uint8_t>{0, 1, 1, 1, 1});
}

TEST_CASE("Values outside their space, an empty mask and writes past a part are breaches named by path", "[envs]") {
  CHECK(step_error(GridFault::kNone) == "no error");
  CHECK_THAT(step_error(GridFault::kPixelOutOfBounds),
             Catch::Contains("observation['grid'][3] is 2, outside its bounds [0, 1]"));
  CHECK_THAT(step_error(GridFault::kDiscreteOutOfSpace),
             Catch::Contains("observation['level'][0] is 0.000000, not a value of Discrete(3, start=1)"));
  CHECK_THAT(step_error(GridFault::kEmptyMask), Catch::Contains("action_mask allows no action for action element 1"));
  CHECK_THAT(step_error(GridFault::kBytePastEnd), Catch::Contains("was written, past the observation's 13 bytes"));
  CHECK_THAT(step_error(GridFault::kMaskIndexPastEnd),
             Catch::Contains("action_mask[5] is outside the action mask's 5 elements"));
}

TEST_CASE("VectorEnv carries bytes to final observations and MultiDiscrete actions with their starts", "[envs]") {
  rlx::EnvRegistry registry;
  registry.add(grid_spec(), [] { return std::make_unique<GridEnv>(); });
  rlx::VectorEnv envs(registry.factory("Grid-v0"), 2);
  CHECK(envs.obs_size() == 1);
  CHECK(envs.obs_bytes() == 13);
  CHECK(envs.action_indices() == 2);
  std::vector<float> obs(2), final_obs(2), rewards(2);
  std::vector<uint8_t> obs_bytes(26), final_bytes(26, 0xee), terminated(2), truncated(2);
  CHECK_THROWS_WITH(envs.reset(0, obs.data()), Catch::Contains("needs a buffer for its observations' bytes"));
  envs.reset(0, obs.data(), obs_bytes.data());
  const std::vector<int64_t> actions = {2, 1, 0, 0};  // env 0: (2, 1) -> values (2, 6); env 1: (0, 0) -> (0, 5)
  rlx::VectorStepBuffers out;
  out.obs = obs.data();
  out.rewards = rewards.data();
  out.terminated = terminated.data();
  out.truncated = truncated.data();
  out.final_obs = final_obs.data();
  out.obs_bytes = obs_bytes.data();
  out.final_obs_bytes = final_bytes.data();
  for (int step = 1; step <= 10; ++step) envs.step(rlx::ActionBatch{actions.data(), nullptr}, out);
  CHECK(rewards == std::vector<float>{8.0f, 5.0f});
  CHECK(static_cast<GridEnv&>(envs.env(0)).last_action == std::vector<int64_t>{2, 6});
  CHECK(truncated[0] == 1);
  // The final observation (step 10: cell 2 lit, level 2) went to final_obs; obs holds the reset one.
  CHECK(final_obs[0] == 2.0f);
  CHECK(final_bytes[2] == 1);
  CHECK(final_bytes[8 + 1] == 1);
  CHECK(obs[0] == 1.0f);
  CHECK(obs_bytes[0] == 1);
}
