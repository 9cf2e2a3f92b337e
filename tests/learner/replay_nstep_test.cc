#include <catch2/catch.hpp>

#include <stdexcept>
#include <vector>

#include "learner/replay_nstep.h"
#include "tests/learner/replay_test_util.h"

using rlx_test::EnvColumn;
using rlx_test::Kept;
using rlx_test::KeepingSink;
using rlx_test::make_fragment;

namespace {

// n = 3, gamma = 0.5 (exact powers). Env 0 terminates at t = 2 and is truncated at t = 4;
// env 1 runs through the fragment. Observations encode (env, step); rewards are distinct.
std::vector<EnvColumn> first_fragment() {
  EnvColumn env0;
  env0.obs = {10, 11, 12, 13, 14, 15};
  env0.rewards = {1, 2, 3, 4, 5, 6};
  env0.terminated_at = {2};
  env0.truncated_at = {4};
  env0.final_obs = {-1, -2};
  env0.bootstrap_obs = 99;
  EnvColumn env1;
  env1.obs = {200, 201, 202, 203, 204, 205};
  env1.rewards = {10, 20, 30, 40, 50, 60};
  env1.bootstrap_obs = 299;
  return {env0, env1};
}

// The continuation: obs[0] equals the first fragment's bootstrap_obs; env 1 terminates at t = 1.
std::vector<EnvColumn> second_fragment() {
  EnvColumn env0;
  env0.obs = {99, 100};
  env0.rewards = {7, 8};
  env0.bootstrap_obs = 199;
  EnvColumn env1;
  env1.obs = {299, 300};
  env1.rewards = {70, 80};
  env1.terminated_at = {1};
  env1.final_obs = {-3};
  env1.bootstrap_obs = 399;
  return {env0, env1};
}

void check_kept(const Kept& got, const Kept& expected) {
  INFO("transition from obs " << expected.obs);
  CHECK(got.obs == expected.obs);
  CHECK(got.action == expected.action);
  CHECK(got.reward == Approx(expected.reward).epsilon(1e-6));
  CHECK(got.next_obs == expected.next_obs);
  CHECK(got.terminated == expected.terminated);
  CHECK(got.discount == Approx(expected.discount).epsilon(1e-6));
}

void check_all(const std::vector<Kept>& got, const std::vector<Kept>& expected) {
  REQUIRE(got.size() == expected.size());
  for (size_t i = 0; i < got.size(); ++i) check_kept(got[i], expected[i]);
}

// What both modes emit for the first fragment's complete windows, env by env in time order.
std::vector<Kept> first_fragment_complete() {
  return {
      // env 0: termination at t = 2 (no bootstrap), truncation at t = 4 (bootstrap from final obs)
      {10, 0, 1 + 0.5f * 2 + 0.25f * 3, -1, true, 0.125f},
      {11, 1, 2 + 0.5f * 3, -1, true, 0.25f},
      {12, 2, 3, -1, true, 0.5f},
      {13, 3, 4 + 0.5f * 5, -2, false, 0.25f},
      {14, 4, 5, -2, false, 0.5f},
  };
}

std::vector<Kept> first_fragment_env1_complete() {
  return {
      {200, 10, 10 + 0.5f * 20 + 0.25f * 30, 203, false, 0.125f},
      {201, 11, 20 + 0.5f * 30 + 0.25f * 40, 204, false, 0.125f},
      {202, 12, 30 + 0.5f * 40 + 0.25f * 50, 205, false, 0.125f},
      {203, 13, 40 + 0.5f * 50 + 0.25f * 60, 299, false, 0.125f},  // next obs: the bootstrap obs
  };
}

std::vector<Kept> concat(std::vector<Kept> a, const std::vector<Kept>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

}  // namespace

TEST_CASE("n-step windows carried across fragments of one worker", "[learner][dqn][replay]") {
  rlx::NStepAccumulator acc(1, {3, 0.5, true});
  KeepingSink sink;
  acc.add(make_fragment(first_fragment()), sink.sink());
  // env 0's t = 5 and env 1's t = 4, 5 wait for the next fragment.
  check_all(sink.kept, concat(first_fragment_complete(), first_fragment_env1_complete()));
  CHECK(acc.num_pending() == 3);

  sink.kept.clear();
  acc.add(make_fragment(second_fragment()), sink.sink());
  check_all(sink.kept, {
                           // env 0: the carried t = 5 completes with the new steps; new t = 0, 1 stay open
                           {15, 5, 6 + 0.5f * 7 + 0.25f * 8, 199, false, 0.125f},
                           // env 1: carried t = 4, 5 and new t = 0, 1 end at the termination at new t = 1
                           {204, 14, 50 + 0.5f * 60 + 0.25f * 70, 300, false, 0.125f},
                           {205, 15, 60 + 0.5f * 70 + 0.25f * 80, -3, true, 0.125f},
                           {299, 10, 70 + 0.5f * 80, -3, true, 0.25f},
                           {300, 11, 80, -3, true, 0.5f},
                       });
  CHECK(acc.num_pending() == 2);

  sink.kept.clear();
  CHECK(acc.flush(sink.sink()) == 2);
  check_all(sink.kept, {{99, 0, 7 + 0.5f * 8, 199, false, 0.25f}, {100, 1, 8, 199, false, 0.5f}});
  CHECK(acc.num_pending() == 0);
}

TEST_CASE("n-step windows cut at the fragment end when not carried", "[learner][dqn][replay]") {
  rlx::NStepAccumulator acc(1, {3, 0.5, false});
  KeepingSink sink;
  acc.add(make_fragment(first_fragment()), sink.sink());
  std::vector<Kept> expected = first_fragment_complete();
  expected.push_back({15, 5, 6, 99, false, 0.5f});  // cut: bootstrap from the bootstrap obs
  expected = concat(expected, first_fragment_env1_complete());
  expected.push_back({204, 14, 50 + 0.5f * 60, 299, false, 0.25f});
  expected.push_back({205, 15, 60, 299, false, 0.5f});
  check_all(sink.kept, expected);
  CHECK(acc.num_pending() == 0);
}

TEST_CASE("A fragment that does not continue the carried steps cuts them first", "[learner][dqn][replay]") {
  rlx::NStepAccumulator acc(1, {3, 0.5, true});
  KeepingSink sink;
  acc.add(make_fragment(first_fragment()), sink.sink());
  auto gap = second_fragment();
  gap[0].obs[0] = 98;  // env 0 lost a fragment; env 1 continues
  sink.kept.clear();
  acc.add(make_fragment(gap), sink.sink());
  REQUIRE(sink.kept.size() == 5);
  check_kept(sink.kept[0], {15, 5, 6, 99, false, 0.5f});  // cut at what it had
  check_kept(sink.kept[1], {204, 14, 50 + 0.5f * 60 + 0.25f * 70, 300, false, 0.125f});
  CHECK(acc.num_pending() == 2);  // env 0's two new steps

  // Another worker's fragments never complete worker 1's windows.
  sink.kept.clear();
  acc.add(make_fragment(second_fragment(), 2), sink.sink());
  CHECK(sink.kept.size() == 2);  // only its own env 1 episode end
  CHECK(acc.num_pending() == 4);
}

TEST_CASE("1-step transitions: next obs is obs[t+1], final_obs at episode ends, bootstrap_obs at the end",
          "[learner][dqn][replay]") {
  rlx::NStepAccumulator acc(1, {1, 0.9, true});
  KeepingSink sink;
  acc.add(make_fragment(first_fragment()), sink.sink());
  REQUIRE(sink.kept.size() == 12);
  const std::vector<float> env0_next = {11, 12, -1, 14, -2, 99};
  const std::vector<bool> env0_term = {false, false, true, false, false, false};
  for (size_t t = 0; t < 6; ++t) {
    check_kept(sink.kept[t], {10.0f + t, static_cast<int64_t>(t), 1.0f + t, env0_next[t], env0_term[t], 0.9f});
    check_kept(sink.kept[6 + t], {200.0f + t, static_cast<int64_t>(10 + t), 10.0f * (t + 1), t < 5 ? 201.0f + t : 299.0f, false, 0.9f});
  }
  CHECK(acc.num_pending() == 0);
}

TEST_CASE("a dropped episode's last step is no transition, and the windows before it end at its observation",
          "[learner][dqn][replay]") {
  EnvColumn env;
  env.obs = {10, 11, 12, 13, 14, 15};
  env.rewards = {1, 2, 3, 0, 5, 6};
  env.truncated_at = {3};  // dropped: a non-finite step after obs 13, ended at that last finite obs
  env.final_obs = {13};
  env.bootstrap_obs = 99;
  rlx::SampleBatch batch = make_fragment({env});
  batch.dropped_index = {3};

  rlx::NStepAccumulator one(1, {1, 0.5, true});
  KeepingSink sink;
  one.add(batch, sink.sink());
  check_all(sink.kept, {{10, 0, 1, 11, false, 0.5f},
                        {11, 1, 2, 12, false, 0.5f},
                        {12, 2, 3, 13, false, 0.5f},  // a truncation at obs 13: bootstraps from it
                        {14, 4, 5, 15, false, 0.5f},
                        {15, 5, 6, 99, false, 0.5f}});

  rlx::NStepAccumulator three(1, {3, 0.5, false});
  sink.kept.clear();
  three.add(batch, sink.sink());
  check_all(sink.kept, {{10, 0, 1 + 0.5f * 2 + 0.25f * 3, 13, false, 0.125f},
                        {11, 1, 2 + 0.5f * 3, 13, false, 0.25f},
                        {12, 2, 3, 13, false, 0.5f},
                        {14, 4, 5 + 0.5f * 6, 99, false, 0.25f},
                        {15, 5, 6, 99, false, 0.5f}});
}

TEST_CASE("n-step accumulator rejects malformed fragments without emitting", "[learner][dqn][replay]") {
  rlx::NStepAccumulator acc(1, {3, 0.5, true});
  KeepingSink sink;
  rlx::SampleBatch missing_final = make_fragment(first_fragment());
  missing_final.final_obs_index.pop_back();
  missing_final.final_obs.pop_back();
  CHECK_THROWS_AS(acc.add(missing_final, sink.sink()), std::invalid_argument);

  rlx::SampleBatch wrong_size;
  wrong_size.resize(2, 1, 3, 0, false);
  CHECK_THROWS_AS(acc.add(wrong_size, sink.sink()), std::invalid_argument);

  rlx::SampleBatch box;
  box.resize(2, 1, 1, 2, false);
  CHECK_THROWS_AS(acc.add(box, sink.sink()), std::invalid_argument);
  CHECK(sink.kept.empty());
  CHECK(acc.num_pending() == 0);

  CHECK_THROWS_AS(rlx::NStepAccumulator(1, {0, 0.5, true}), std::invalid_argument);
  CHECK_THROWS_AS(rlx::NStepAccumulator(1, {2, 1.5, true}), std::invalid_argument);
  CHECK_THROWS_AS(rlx::NStepAccumulator(0, {2, 0.5, true}), std::invalid_argument);
}

namespace {

// Every kept transition's bytes are those of its observations (with_bytes' rule).
void check_bytes_follow_floats(const KeepingSink& sink) {
  REQUIRE(sink.bytes.size() == sink.kept.size());
  for (size_t i = 0; i < sink.kept.size(); ++i) {
    INFO("transition from obs " << sink.kept[i].obs << " to " << sink.kept[i].next_obs);
    CHECK(sink.bytes[i].obs == rlx_test::obs_bytes_of(sink.kept[i].obs));
    CHECK(sink.bytes[i].next_obs == rlx_test::obs_bytes_of(sink.kept[i].next_obs));  // its action mask included
  }
}

}  // namespace

TEST_CASE("n-step transitions carry the bytes and the action mask of the observation they end on",
          "[learner][dqn][replay]") {
  // The carried scenario above with bytes: next observations come from the same fragment, from
  // final observations, from bootstrap observations, from the next fragment and from a flush.
  rlx::NStepAccumulator acc({1, rlx_test::kObsBytes}, {3, 0.5, true});
  KeepingSink sink;
  sink.bytes_per_obs = rlx_test::kObsBytes;
  acc.add(rlx_test::with_bytes(make_fragment(first_fragment())), sink.sink());
  check_all(sink.kept, concat(first_fragment_complete(), first_fragment_env1_complete()));
  acc.add(rlx_test::with_bytes(make_fragment(second_fragment())), sink.sink());
  CHECK(acc.flush(sink.sink()) == 2);
  REQUIRE(sink.kept.size() == 9 + 5 + 2);
  check_bytes_follow_floats(sink);
  // The carried env 0 window completed by the second fragment ends on its bootstrap obs 199,
  // whose mask (odd) allows action 0 only.
  CHECK(sink.kept[9].next_obs == 199.0f);
  CHECK(std::vector<uint8_t>(sink.bytes[9].next_obs.begin() + 2, sink.bytes[9].next_obs.end()) == std::vector<uint8_t>{1, 0});
}

TEST_CASE("A fragment whose first observation differs only in its bytes does not continue the carried steps",
          "[learner][dqn][replay]") {
  rlx::NStepAccumulator acc({1, rlx_test::kObsBytes}, {3, 0.5, true});
  KeepingSink sink;
  sink.bytes_per_obs = rlx_test::kObsBytes;
  acc.add(rlx_test::with_bytes(make_fragment(first_fragment())), sink.sink());
  rlx::SampleBatch next = rlx_test::with_bytes(make_fragment(second_fragment()));
  next.obs_u8[2] ^= 1;  // env 0's first mask differs from the carried bootstrap obs' mask
  sink.kept.clear();
  sink.bytes.clear();
  acc.add(next, sink.sink());
  REQUIRE_FALSE(sink.kept.empty());
  check_kept(sink.kept[0], {15, 5, 6, 99, false, 0.5f});  // cut at what it had
  CHECK(sink.bytes[0].next_obs == rlx_test::obs_bytes_of(99));
}

TEST_CASE("n-step accumulator refuses fragments whose bytes per observation differ", "[learner][dqn][replay]") {
  rlx::NStepAccumulator floats_only(1, {3, 0.5, true});
  rlx::NStepAccumulator with_bytes({1, rlx_test::kObsBytes}, {3, 0.5, true});
  KeepingSink sink;
  CHECK_THROWS_WITH(floats_only.add(rlx_test::with_bytes(make_fragment(first_fragment())), sink.sink()),
                    Catch::Contains("1 floats and 4 bytes differ from the replay's 1 and 0"));
  CHECK_THROWS_AS(with_bytes.add(make_fragment(first_fragment()), sink.sink()), std::invalid_argument);
  CHECK(sink.kept.empty());
  CHECK_NOTHROW(rlx::NStepAccumulator({0, 3}, {1, 0.5, true}));  // pixels alone: no floats
  CHECK_THROWS_AS(rlx::NStepAccumulator({0, 0}, {1, 0.5, true}), std::invalid_argument);
}
