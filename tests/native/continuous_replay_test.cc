// ContinuousReplay: which observation follows each step of a fragment (the next step's, the
// final one at an episode's end, bootstrap_obs after the last step), terminations versus
// truncations, actions mapped back to [-1, 1], and its save/load.
#include <catch2/catch.hpp>

#include <stdexcept>

#include "native/continuous_replay.h"

namespace rlx {
namespace {

// T = 3 steps of K = 2 envs, O = 1 (obs = 10 t + k), A = 1 on the Box [0, 4]: env 1 is truncated
// at t = 1 (final obs 91), env 0 terminates at t = 2 (final obs 80).
SampleBatch fragment() {
  SampleBatch batch;
  batch.resize(3, 2, 1, 1, false);
  for (int t = 0; t < 3; ++t) {
    for (int k = 0; k < 2; ++k) {
      const int i = t * 2 + k;
      batch.obs[i] = static_cast<float>(10 * t + k);
      batch.action_values[i] = static_cast<float>(i % 5);  // 0..4 -> -1..1
      batch.rewards[i] = static_cast<float>(i);
    }
  }
  batch.truncated[1 * 2 + 1] = 1;
  batch.terminated[2 * 2 + 0] = 1;
  batch.final_obs_index = {3, 4};
  batch.final_obs = {91.0f, 80.0f};
  batch.bootstrap_obs = {100.0f, 101.0f};
  return batch;
}

}  // namespace

TEST_CASE("ContinuousReplay stores each step with its next observation and its action in [-1, 1]", "[native][sac][replay]") {
  ContinuousReplay replay(16, 1, Space::box({1}, 0.0f, 4.0f));
  REQUIRE(replay.add(fragment()) == 6);
  REQUIRE(replay.size() == 6);
  // Sampling every slot many times recovers each transition; index them by their reward.
  Rng rng(3);
  ContinuousSample sample;
  replay.sample(200, rng, sample);
  const float next_of[6] = {10, 11, 20, 91, 80, 101};
  const float terminated_of[6] = {0, 0, 0, 0, 1, 0};
  bool seen[6] = {};
  for (int64_t r = 0; r < sample.rows; ++r) {
    const int i = static_cast<int>(sample.rewards[r]);
    seen[i] = true;
    INFO("step " << i);
    CHECK(sample.obs[r] == static_cast<float>(10 * (i / 2) + i % 2));
    CHECK(sample.next_obs[r] == next_of[i]);
    CHECK(sample.terminated[r] == terminated_of[i]);
    CHECK(sample.actions[r] == Approx((i % 5) / 2.0 - 1.0));
  }
  for (bool s : seen) CHECK(s);
}

TEST_CASE("ContinuousReplay leaves out a dropped episode's last step", "[native][sac][replay]") {
  SampleBatch batch = fragment();
  batch.dropped_index = {3};  // env 1's truncation at t = 1 ended an episode dropped for a non-finite step
  ContinuousReplay replay(16, 1, Space::box({1}, 0.0f, 4.0f));
  REQUIRE(replay.add(batch) == 5);
  REQUIRE(replay.size() == 5);
  Rng rng(3);
  ContinuousSample sample;
  replay.sample(200, rng, sample);
  for (int64_t r = 0; r < sample.rows; ++r) CHECK(sample.rewards[r] != 3.0f);  // step 3's transition
}

TEST_CASE("ContinuousReplay overwrites the oldest, saves and loads, and refuses mismatches", "[native][sac][replay]") {
  ContinuousReplay replay(4, 1, Space::box({1}, 0.0f, 4.0f));
  replay.add(fragment());
  CHECK(replay.size() == 4);
  BinaryWriter out;
  replay.save(out);
  ContinuousReplay copy(4, 1, Space::box({1}, 0.0f, 4.0f));
  BinaryReader in(out.bytes(), "replay");
  copy.load(in);
  Rng a(1), b(1);
  ContinuousSample x, y;
  replay.sample(32, a, x);
  copy.sample(32, b, y);
  CHECK(x.obs == y.obs);
  CHECK(x.next_obs == y.next_obs);
  CHECK(x.rewards == y.rewards);
  for (float reward : x.rewards) CHECK(reward >= 2.0f);  // the first two steps were overwritten

  ContinuousReplay other(8, 1, Space::box({1}, 0.0f, 4.0f));
  BinaryReader again(out.bytes(), "replay");
  CHECK_THROWS_AS(other.load(again), std::invalid_argument);
  SampleBatch wide = fragment();
  wide.obs_size = 2;
  CHECK_THROWS_AS(replay.add(wide), std::invalid_argument);
  CHECK_THROWS_AS(ContinuousReplay(4, 1, Space::discrete(2)), std::invalid_argument);
}

}  // namespace rlx
