#include <catch2/catch.hpp>

#include <algorithm>
#include <memory>
#include <cmath>
#include <stdexcept>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/rng.h"
#include "envs/registry.h"
#include "envs/vector_env.h"
#include "learner/prioritized_replay.h"
#include "learner/replay_buffer.h"
#include "rollout/fragment_collector.h"
#include "models/rollout_policy.h"
#include "tests/learner/replay_test_util.h"

namespace {

rlx::Transition transition(const float& obs, const float& next_obs, int64_t action) {
  rlx::Transition t;
  t.obs = &obs;
  t.next_obs = &next_obs;
  t.action = action;
  t.reward = obs * 2;
  t.terminated = action % 2 == 1;
  t.discount = 0.5f;
  return t;
}

// Random-play CartPole fragments (2 envs, 50 steps each), the same for a given seed.
std::vector<rlx::SampleBatch> cartpole_fragments(int count, uint64_t seed) {
  const rlx::EnvFactory& factory = rlx::global_env_registry().factory("CartPole-v1");
  rlx::ModelSpec model = rlx::ModelSpec::for_env(rlx::global_env_registry().spec("CartPole-v1"));
  model.hidden_sizes = {8};
  rlx::EpsilonGreedyQPolicy policy(model, 1.0, seed);
  rlx::VectorEnv envs(factory, 2);
  rlx::FragmentCollector collector(envs, policy, 50, seed);
  std::vector<rlx::SampleBatch> fragments(static_cast<size_t>(count));
  for (auto& batch : fragments) collector.collect(batch);
  return fragments;
}

}  // namespace

TEST_CASE("Replay ring: overwrites the oldest slot when full", "[learner][dqn][replay]") {
  rlx::ReplayBuffer buffer(5, 1);
  CHECK(buffer.capacity() == 5);
  CHECK(buffer.size() == 0);
  for (int i = 0; i < 8; ++i) {
    const float obs = static_cast<float>(i), next = obs + 0.5f;
    buffer.add_transition(transition(obs, next, i));
    CHECK(buffer.size() == std::min(i + 1, 5));
  }
  CHECK(buffer.total_added() == 8);
  CHECK(buffer.next_slot() == 3);
  const std::vector<float> expected = {5, 6, 7, 3, 4};
  for (int64_t slot = 0; slot < 5; ++slot) {
    const float obs = expected[static_cast<size_t>(slot)];
    CHECK(buffer.obs(slot)[0] == obs);
    CHECK(buffer.next_obs(slot)[0] == obs + 0.5f);
    CHECK(buffer.action(slot) == static_cast<int64_t>(obs));
    CHECK(buffer.reward(slot) == obs * 2);
    CHECK(buffer.terminated(slot) == (static_cast<int>(obs) % 2 == 1));
    CHECK(buffer.discount(slot) == 0.5f);
  }
}

TEST_CASE("Replay uniform sampling: frequencies and gathered columns", "[learner][dqn][replay]") {
  rlx::ReplayBuffer buffer(8, 2);
  for (int i = 0; i < 5; ++i) {
    const float obs[2] = {static_cast<float>(i), -static_cast<float>(i)};
    const float next[2] = {i + 0.5f, -i - 0.5f};
    rlx::Transition t;
    t.obs = obs;
    t.next_obs = next;
    t.action = i;
    t.reward = 10.0f * i;
    t.terminated = i == 3;
    t.discount = 0.25f;
    buffer.add_transition(t);
  }
  rlx::Rng rng(7);
  rlx::ReplaySample sample;
  std::vector<int> counts(5, 0);
  const int rounds = 2000, batch = 25;
  for (int r = 0; r < rounds; ++r) {
    buffer.sample(batch, rng, sample);
    REQUIRE(sample.size() == batch);
    for (int i = 0; i < batch; ++i) {
      const int64_t slot = sample.indices[static_cast<size_t>(i)];
      REQUIRE(slot >= 0);
      REQUIRE(slot < 5);
      ++counts[static_cast<size_t>(slot)];
      CHECK(sample.obs[2 * i] == static_cast<float>(slot));
      CHECK(sample.obs[2 * i + 1] == -static_cast<float>(slot));
      CHECK(sample.next_obs[2 * i + 1] == -slot - 0.5f);
      CHECK(sample.actions[i] == slot);
      CHECK(sample.rewards[i] == 10.0f * slot);
      CHECK(sample.terminated[i] == (slot == 3 ? 1.0f : 0.0f));
      CHECK(sample.discounts[i] == 0.25f);
      CHECK(sample.weights[i] == 1.0f);
    }
  }
  // 50,000 draws over 5 slots: chi-square with 4 degrees of freedom, far below its 0.1% tail (18.5).
  const double expected = rounds * batch / 5.0;
  double chi2 = 0.0;
  for (int c : counts) chi2 += (c - expected) * (c - expected) / expected;
  CHECK(chi2 < 18.5);

  rlx::ReplayBuffer empty(4, 1);
  CHECK_THROWS_AS(empty.sample(2, rng), std::logic_error);
  CHECK_THROWS_AS(buffer.sample(0, rng), std::invalid_argument);
  CHECK_THROWS_AS(rlx::ReplayBuffer(0, 1), std::invalid_argument);
}

TEST_CASE("Replay from CartPole fragments: next_obs is obs[t+1], final_obs or bootstrap_obs", "[learner][dqn][replay]") {
  const auto factory = rlx::global_env_registry().factory("CartPole-v1");
  rlx::ModelSpec config = rlx::ModelSpec::for_env(factory()->spec());
  rlx::EpsilonGreedyQPolicy policy(config, 1.0, 3);  // random play: many terminations
  rlx::VectorEnv envs(factory, 3);
  const int t_steps = 40, k_envs = 3;
  rlx::FragmentCollector collector(envs, policy, t_steps, 11);
  rlx::ReplayBuffer buffer(1000, 4, {1, 0.99, true});
  int ended = 0;
  for (int f = 0; f < 3; ++f) {
    rlx::SampleBatch batch;
    collector.collect(batch);
    const int64_t first = buffer.next_slot();
    REQUIRE(buffer.add(batch) == t_steps * k_envs);
    for (int k = 0; k < k_envs; ++k) {
      for (int t = 0; t < t_steps; ++t) {
        const int64_t slot = first + k * t_steps + t;  // env by env, in time order
        const size_t row = static_cast<size_t>(t * k_envs + k);
        const float* next;
        const auto it = std::find(batch.final_obs_index.begin(), batch.final_obs_index.end(), static_cast<int32_t>(row));
        if (it != batch.final_obs_index.end()) {
          next = batch.final_obs.data() + (it - batch.final_obs_index.begin()) * 4;
          ++ended;
        } else if (t + 1 < t_steps) {
          next = batch.obs.data() + (row + k_envs) * 4;
        } else {
          next = batch.bootstrap_obs.data() + k * 4;
        }
        CHECK(std::equal(next, next + 4, buffer.next_obs(slot)));
        CHECK(std::equal(batch.obs.data() + row * 4, batch.obs.data() + row * 4 + 4, buffer.obs(slot)));
        CHECK(buffer.action(slot) == batch.action_indices[row]);
        CHECK(buffer.reward(slot) == batch.rewards[row]);
        CHECK(buffer.terminated(slot) == (batch.terminated[row] != 0));
        CHECK(buffer.discount(slot) == Approx(0.99f));
      }
    }
  }
  CHECK(ended > 5);
  CHECK(buffer.size() == 3 * t_steps * k_envs);
}

TEST_CASE("Replay add counts stored transitions, and flush_pending stores the carried windows", "[learner][dqn][replay]") {
  rlx_test::EnvColumn env;
  env.obs = {1, 2, 3, 4};
  env.rewards = {1, 1, 1, 1};
  env.terminated_at = {1};
  env.final_obs = {-1};
  env.bootstrap_obs = 5;
  rlx::ReplayBuffer buffer(100, 1, {3, 0.5, true});
  CHECK(buffer.add(rlx_test::make_fragment({env, env})) == 4);  // t = 0, 1 of each env; t = 2, 3 carried
  CHECK(buffer.num_pending() == 4);
  CHECK(buffer.flush_pending() == 4);
  CHECK(buffer.num_pending() == 0);
  CHECK(buffer.size() == 8);
  // The last flushed window: t = 3 of env 1, cut at the fragment end.
  CHECK(buffer.obs(7)[0] == 4.0f);
  CHECK(buffer.next_obs(7)[0] == 5.0f);
  CHECK(buffer.reward(7) == 1.0f);
  CHECK(buffer.discount(7) == 0.5f);
  CHECK_FALSE(buffer.terminated(7));
  CHECK(buffer.terminated(0));
}

TEST_CASE("Replay save/load: the same slots, ring position, n-step windows and priorities, so the same draws",
          "[learner][dqn][replay]") {
  for (const bool prioritized : {false, true}) {
    INFO("prioritized " << prioritized);
    const rlx::NStepConfig n_step{3, 0.9, true};
    const auto make = [&](int64_t capacity) -> std::unique_ptr<rlx::ReplayBuffer> {
      if (prioritized) return std::make_unique<rlx::PrioritizedReplayBuffer>(capacity, 4, n_step, rlx::PrioritizedReplayConfig{});
      return std::make_unique<rlx::ReplayBuffer>(capacity, 4, n_step);
    };
    std::unique_ptr<rlx::ReplayBuffer> original = make(150);
    for (const rlx::SampleBatch& batch : cartpole_fragments(4, 11)) original->add(batch);  // wraps the ring
    REQUIRE(original->size() == 150);
    REQUIRE(original->num_pending() > 0);
    if (prioritized) {
      std::vector<int64_t> slots = {3, 17, 99};
      std::vector<float> td = {0.5f, 2.0f, 0.01f};
      static_cast<rlx::PrioritizedReplayBuffer&>(*original).update_priorities(slots.data(), td.data(), 3);
    }
    rlx::BinaryWriter out;
    original->save(out);
    std::unique_ptr<rlx::ReplayBuffer> restored = make(150);
    rlx::BinaryReader in(out.bytes(), "replay");
    restored->load(in);
    in.expect_end();
    CHECK(restored->size() == original->size());
    CHECK(restored->next_slot() == original->next_slot());
    CHECK(restored->total_added() == original->total_added());
    CHECK(restored->num_pending() == original->num_pending());
    // Both continue alike: the same new transitions and the same draws.
    const std::vector<rlx::SampleBatch> more = cartpole_fragments(1, 12);
    original->add(more[0]);
    restored->add(more[0]);
    rlx::Rng a(5), b(5);
    rlx::ReplaySample sa, sb;
    if (prioritized) {
      static_cast<rlx::PrioritizedReplayBuffer&>(*original).sample(32, 0.5, a, sa);
      static_cast<rlx::PrioritizedReplayBuffer&>(*restored).sample(32, 0.5, b, sb);
    } else {
      original->sample(32, a, sa);
      restored->sample(32, b, sb);
    }
    CHECK(sa.indices == sb.indices);
    CHECK(sa.obs == sb.obs);
    CHECK(sa.rewards == sb.rewards);
    CHECK(sa.weights == sb.weights);
    // A buffer of another capacity, or truncated bytes, are refused.
    std::unique_ptr<rlx::ReplayBuffer> other = make(100);
    rlx::BinaryReader again(out.bytes(), "replay");
    CHECK_THROWS_AS(other->load(again), std::invalid_argument);
    const std::string truncated = out.bytes().substr(0, out.bytes().size() / 2);
    rlx::BinaryReader short_read(truncated, "replay");
    CHECK_THROWS_AS(make(150)->load(short_read), std::invalid_argument);
  }
}

namespace {

// Two envs over six steps with an episode end each, their observations carrying bytes (O = 1,
// rlx_test::kObsBytes bytes: replay_test_util.h's with_bytes).
rlx::SampleBatch byte_fragment(float first) {
  rlx_test::EnvColumn env0, env1;
  env0.obs = {first, first + 1, first + 2, first + 3, first + 4, first + 5};
  env0.rewards = {1, 2, 3, 4, 5, 6};
  env0.terminated_at = {2};
  env0.final_obs = {first + 50};
  env0.bootstrap_obs = first + 6;
  env1.obs = {first + 100, first + 101, first + 102, first + 103, first + 104, first + 105};
  env1.rewards = {1, 1, 1, 1, 1, 1};
  env1.truncated_at = {4};
  env1.final_obs = {first + 150};
  env1.bootstrap_obs = first + 106;
  return rlx_test::with_bytes(rlx_test::make_fragment({env0, env1}));
}

// Every slot's bytes are those of its observations' floats, as with_bytes wrote them.
void check_slots_byte_exact(const rlx::ReplayBuffer& buffer) {
  std::vector<int64_t> slots(static_cast<size_t>(buffer.size()));
  for (size_t i = 0; i < slots.size(); ++i) slots[i] = static_cast<int64_t>(i);
  rlx::ReplaySample sample;
  buffer.gather(slots.data(), buffer.size(), sample);
  const auto b = static_cast<size_t>(rlx_test::kObsBytes);
  REQUIRE(sample.obs_u8.size() == slots.size() * b);
  REQUIRE(sample.next_obs_u8.size() == slots.size() * b);
  for (size_t i = 0; i < slots.size(); ++i) {
    INFO("slot " << i << ": obs " << sample.obs[i] << ", next obs " << sample.next_obs[i]);
    const auto row = static_cast<std::ptrdiff_t>(i * b), end = static_cast<std::ptrdiff_t>((i + 1) * b);
    CHECK(std::vector<uint8_t>(sample.obs_u8.begin() + row, sample.obs_u8.begin() + end) == rlx_test::obs_bytes_of(sample.obs[i]));
    CHECK(std::vector<uint8_t>(sample.next_obs_u8.begin() + row, sample.next_obs_u8.begin() + end) ==
          rlx_test::obs_bytes_of(sample.next_obs[i]));
    CHECK(std::equal(buffer.next_obs_u8(static_cast<int64_t>(i)), buffer.next_obs_u8(static_cast<int64_t>(i)) + b,
                     sample.next_obs_u8.begin() + row));
  }
}

}  // namespace

TEST_CASE("Replay keeps byte observations as bytes: rows come back byte-exact, masks with their next observations",
          "[learner][dqn][replay]") {
  static_assert(std::is_same_v<decltype(std::declval<rlx::ReplayBuffer>().obs_u8(0)), const uint8_t*>);
  rlx::ReplayBuffer buffer(100, {1, rlx_test::kObsBytes}, {2, 0.5, true});
  CHECK(buffer.obs_bytes() == rlx_test::kObsBytes);
  CHECK(buffer.add(byte_fragment(10)) > 0);
  CHECK(buffer.add(byte_fragment(16)) > 0);  // env 0 continues: 16 is the bootstrap obs of the first
  CHECK(buffer.flush_pending() > 0);
  REQUIRE(buffer.size() == 24);
  check_slots_byte_exact(buffer);
  // A fragment without the bytes is refused, storing nothing.
  rlx::SampleBatch floats_only = byte_fragment(30);
  floats_only.obs_byte_size = 0;
  floats_only.obs_u8.clear();
  floats_only.bootstrap_obs_u8.clear();
  floats_only.final_obs_u8.clear();
  CHECK_THROWS_AS(buffer.add(floats_only), std::invalid_argument);
  CHECK(buffer.size() == 24);
}

TEST_CASE("Replay memory: a uint8 image takes a quarter of what its floats would", "[learner][dqn][replay]") {
  // MinAtar Breakout: Box(0, 1, (10, 10, 4), uint8), 400 bytes an observation, obs and next obs a slot.
  const rlx::ReplayBuffer bytes(1, {0, 400});
  const rlx::ReplayBuffer floats(1, {400, 0});
  const int64_t scalars = 8 + 3 * 4;  // action, reward, terminated, discount
  CHECK(bytes.slot_bytes() == 2 * 400 + scalars);
  CHECK(floats.slot_bytes() == 2 * 400 * 4 + scalars);
}

TEST_CASE("Replay save/load carries the bytes of slots and of carried n-step windows", "[learner][dqn][replay]") {
  for (const bool prioritized : {false, true}) {
    INFO("prioritized " << prioritized);
    const rlx::NStepConfig n_step{3, 0.5, true};
    const rlx::StoredObsSize size{1, rlx_test::kObsBytes};
    const auto make = [&](rlx::StoredObsSize obs) -> std::unique_ptr<rlx::ReplayBuffer> {
      if (prioritized) return std::make_unique<rlx::PrioritizedReplayBuffer>(20, obs, n_step, rlx::PrioritizedReplayConfig{});
      return std::make_unique<rlx::ReplayBuffer>(20, obs, n_step);
    };
    std::unique_ptr<rlx::ReplayBuffer> original = make(size);
    original->add(byte_fragment(10));
    original->add(byte_fragment(16));
    REQUIRE(original->num_pending() > 0);
    rlx::BinaryWriter out;
    original->save(out);
    std::unique_ptr<rlx::ReplayBuffer> restored = make(size);
    rlx::BinaryReader in(out.bytes(), "replay");
    restored->load(in);
    in.expect_end();
    REQUIRE(restored->size() == original->size());
    check_slots_byte_exact(*restored);
    // The carried windows' bytes came along: flushed, they are byte-exact too, and the same.
    original->flush_pending();
    restored->flush_pending();
    check_slots_byte_exact(*restored);
    rlx::ReplaySample sa, sb;
    rlx::Rng a(3), b(3);
    original->sample(16, a, sa);
    restored->sample(16, b, sb);
    CHECK(sa.obs_u8 == sb.obs_u8);
    CHECK(sa.next_obs_u8 == sb.next_obs_u8);
    // A buffer of other bytes per observation refuses the state.
    rlx::BinaryReader again(out.bytes(), "replay");
    CHECK_THROWS_AS(make({1, rlx_test::kObsBytes + 1})->load(again), std::invalid_argument);
  }
}
