// The synthetic 84x84x4 pixel env of the benchmarks (bench/synthetic_pixels_env.h): its spec, a
// whole observation written every step as a shifting frame stack, the contract checks passed
// through VectorEnv, exact snapshots, and its registration for the benchmark commands only.
#include <catch2/catch.hpp>

#include <cstring>
#include <memory>
#include <optional>
#include <vector>

#include "bench/stepping_benchmark.h"
#include "bench/synthetic_pixels_env.h"
#include "envs/vector_env.h"

namespace {

using rlx::SyntheticPixelsEnv;

constexpr int kSide = SyntheticPixelsEnv::kSide;
constexpr int kStack = SyntheticPixelsEnv::kStack;

uint8_t at(const std::vector<uint8_t>& obs, int x, int y, int c) {
  return obs[static_cast<size_t>((y * kSide + x) * kStack + c)];
}

}  // namespace

TEST_CASE("Synthetic/Pixels84-v0 observes an 84x84x4 uint8 frame stack and acts in Discrete(6)", "[bench][synthetic]") {
  const rlx::EnvSpec spec = SyntheticPixelsEnv::default_spec();
  CHECK(spec.id == "Synthetic/Pixels84-v0");
  CHECK(spec.observation_space == rlx::Space::box({84, 84, 4}, 0, 255, rlx::ScalarType::kUint8));
  CHECK(spec.action_space == rlx::Space::discrete(6));
  CHECK(spec.max_episode_steps == 1000);
  SyntheticPixelsEnv env;
  CHECK(env.observation_layout().byte_slots == 84 * 84 * 4);
  CHECK(env.observation_layout().float_slots == 0);
}

TEST_CASE("Each step of the synthetic pixel env shifts the frame stack by one frame and moves the agent",
          "[bench][synthetic]") {
  SyntheticPixelsEnv env;
  std::vector<uint8_t> before(static_cast<size_t>(SyntheticPixelsEnv::kObservationBytes));
  std::vector<uint8_t> after(before.size(), 7);
  env.reset(3, rlx::ObsRow(nullptr, before.data()));
  rlx::Action right;
  right.index = 2;
  env.step(right, rlx::ObsRow(nullptr, after.data()));
  int agent_before = 0, agent_after = 0, shifted = 0, compared = 0;
  for (int y = 0; y < kSide; ++y) {
    for (int x = 0; x < kSide; ++x) {
      agent_before += at(before, x, y, 0) == 255;
      agent_after += at(after, x, y, 0) == 255;
      if (at(before, x, y, 0) == 255 || at(after, x, y, 0) == 255) continue;
      for (int c = 0; c + 1 < kStack; ++c) {
        ++compared;
        shifted += at(after, x, y, c) == at(before, x, y, c + 1);  // frame k + 1 moved down a channel
      }
    }
  }
  CHECK(agent_before == 4);  // the 2x2 agent, alone at 255
  CHECK(agent_after == 4);
  CHECK(shifted == compared);
  CHECK(after != before);
}

TEST_CASE("The synthetic pixel env passes the contract checks through VectorEnv and restores its snapshots",
          "[bench][synthetic]") {
  rlx::VectorEnv envs([] { return std::make_unique<SyntheticPixelsEnv>(); }, 2);
  CHECK(envs.obs_bytes() == 84 * 84 * 4);
  const rlx::SteppingMeasurement m =
      rlx::measure_env_stepping([] { return std::make_unique<SyntheticPixelsEnv>(); }, 2, 1200, 5);
  CHECK(m.env_steps == 2400);
  CHECK(m.episodes == 2);  // each env's 1,000-step time limit, once

  SyntheticPixelsEnv original, restored;
  std::vector<uint8_t> a(static_cast<size_t>(SyntheticPixelsEnv::kObservationBytes)), b(a.size());
  original.reset(11, rlx::ObsRow(nullptr, a.data()));
  rlx::Action action;
  for (int t = 0; t < 7; ++t) {
    action.index = t % 6;
    original.step(action, rlx::ObsRow(nullptr, a.data()));
  }
  const std::optional<rlx::EnvSnapshot> snapshot = original.snapshot();
  REQUIRE(snapshot);
  restored.restore(*snapshot);
  for (int t = 0; t < 20; ++t) {
    action.index = (t * 5) % 6;
    const rlx::StepResult x = original.step(action, rlx::ObsRow(nullptr, a.data()));
    const rlx::StepResult y = restored.step(action, rlx::ObsRow(nullptr, b.data()));
    REQUIRE(a == b);
    REQUIRE(x.reward == y.reward);
  }
  CHECK_THROWS_AS(restored.restore({snapshot->rng, true, 0, {8, 0, 0}}), std::invalid_argument);
}

TEST_CASE("register_synthetic_envs_globally adds the synthetic ids once", "[bench][synthetic]") {
  rlx::register_synthetic_envs_globally();
  rlx::register_synthetic_envs_globally();  // a second call is harmless
  CHECK(rlx::global_env_registry().contains(SyntheticPixelsEnv::kId));
  CHECK(rlx::global_env_registry().make(SyntheticPixelsEnv::kId)->spec() == SyntheticPixelsEnv::default_spec());
}
