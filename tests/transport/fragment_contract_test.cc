// The fragment-contract check and the learner's own episode accounting, unit by unit; and the
// contract fuzz target's body run over seeded mutations of a valid fragment (under ASan and
// UBSan in scripts/sanitizer-tests.sh).
#include <catch2/catch.hpp>

#include <algorithm>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>

#include "tests/transport/fuzz/fragment_contract_target.h"
#include "transport/encode.h"
#include "transport/episode_tracker.h"
#include "transport/fragment_contract.h"

namespace rlx {
namespace {

SampleBatch kept_fragment() {
  SampleBatch batch;
  batch.policy_version = 1;
  batch.resize(16, 4, 4, 0, true);
  for (size_t i = 0; i < batch.obs.size(); ++i) batch.obs[i] = 0.01f * static_cast<float>(i);
  for (size_t i = 0; i < batch.action_indices.size(); ++i) batch.action_indices[i] = static_cast<int64_t>(i % 2);
  std::fill(batch.rewards.begin(), batch.rewards.end(), 1.f);
  batch.terminated[5] = 1;  // step 1, env 1
  batch.final_obs_index = {5};
  batch.final_obs = {0.1f, 0.2f, 0.3f, 0.4f};
  return batch;
}

std::string fault_of(const SampleBatch& batch, const FragmentContract& contract = fuzz_contract()) {
  const std::optional<FragmentRefusal> refusal = check_fragment(batch, contract);
  return refusal ? fragment_fault_name(refusal->fault) : "kept";
}

TEST_CASE("the fragment contract names the first thing a fragment breaks", "[transport][contract]") {
  CHECK(fault_of(kept_fragment()) == "kept");
  SampleBatch b = kept_fragment();
  b.resize(8, 4, 4, 0, true);
  CHECK(fault_of(b) == "wrong_steps");
  b = kept_fragment();
  CHECK(fault_of(b, {16, 8, 4, 0, true}) == "wrong_envs");
  CHECK(fault_of(b, {16, 4, 5, 0, true}) == "wrong_obs_size");
  CHECK(fault_of(b, {16, 4, 4, 2, true}) == "wrong_action_shape");
  CHECK(fault_of(b, {16, 4, 4, 0, false}) == "unexpected_policy_outputs");
  b.log_probs.clear();
  CHECK(fault_of(b) == "missing_policy_outputs");
  b = kept_fragment();
  b.values.clear();  // V(s) is optional: PPO's learners recompute it
  CHECK(fault_of(b) == "kept");
  b.values.assign(3, 0.0f);  // but present, it covers every step
  CHECK(fault_of(b) == "final_obs_mismatch");
  b = kept_fragment();
  b.log_probs.clear();
  b.values.assign(b.rewards.size(), 0.0f);  // values without log-probs
  CHECK(fault_of(b) == "missing_policy_outputs");
  b = kept_fragment();
  b.truncated[7] = 1;
  CHECK(fault_of(b) == "final_obs_mismatch");
  b = kept_fragment();
  b.terminated[5] = 0;
  CHECK(fault_of(b) == "final_obs_mismatch");
  b = kept_fragment();
  b.truncated[0] = 3;
  CHECK(fault_of(b) == "bad_flag");
  b = kept_fragment();
  b.values[63] = std::numeric_limits<float>::infinity();
  CHECK(fault_of(b) == "non_finite");
  const std::optional<FragmentRefusal> refusal = check_fragment(b, fuzz_contract());
  REQUIRE(refusal);
  CHECK(refusal->detail == "values[63] is inf");
  CHECK(fragment_bytes(kept_fragment()) <= max_fragment_bytes(fuzz_contract()));
}

TEST_CASE("an episode a fragment marks dropped is counted apart, never as a short episode", "[transport][contract]") {
  EpisodeTracker tracker(100);
  EpisodeReport report;
  SampleBatch batch = kept_fragment();  // env 1 ends at step 1 (row 5)
  batch.terminated[5] = 0;
  batch.truncated[5] = 1;
  batch.dropped_index = {5};
  batch.validate();
  REQUIRE_FALSE(tracker.add(batch, report));
  CHECK(report.returns.empty());
  CHECK(report.dropped == 1);
  // The env's next episode started in view: 14 steps here and 2 in the next fragment.
  REQUIRE_FALSE(tracker.add(kept_fragment(), report));
  CHECK(report.returns == std::vector<double>{16.0});
  CHECK(report.lengths == std::vector<int32_t>{16});
  CHECK(report.dropped == 1);
}

TEST_CASE("the learner's episode accounting spans fragments and skips episodes it did not see start",
          "[transport][contract]") {
  EpisodeTracker tracker(100);
  EpisodeReport report;
  SampleBatch first = kept_fragment();  // env 1 ends at step 1 (2 steps, return 2)
  REQUIRE_FALSE(tracker.add(first, report));
  REQUIRE(report.returns.size() == 1);
  CHECK(report.returns[0] == 2.0);
  CHECK(report.lengths[0] == 2);
  SampleBatch second = kept_fragment();
  second.terminated[5] = 0;
  second.final_obs_index = {4 * 15 + 0};  // env 0 ends at the last step: 32 steps in all
  second.truncated[60] = 1;
  REQUIRE_FALSE(tracker.add(second, report));
  REQUIRE(report.returns.size() == 2);
  CHECK(report.returns[1] == 32.0);
  CHECK(report.lengths[1] == 32);
  // A lost fragment: the episodes running now are not reported when they end.
  tracker.lose_track();
  REQUIRE_FALSE(tracker.add(second, report));
  CHECK(report.returns.size() == 2);
  REQUIRE_FALSE(tracker.add(second, report));  // env 0's next episode started in view: 16 steps
  REQUIRE(report.returns.size() == 3);
  CHECK(report.lengths[2] == 16);
}

TEST_CASE("the contract fuzz target survives seeded mutations of a valid fragment", "[transport][contract][fuzz]") {
  auto batch = std::make_shared<SampleBatch>(kept_fragment());
  const std::string seed = join_fuzz_input(encode_sample_fragment(batch, 1));
  // The seed itself is accepted, so the target's acceptance invariants are exercised.
  REQUIRE_FALSE(check_fragment(kept_fragment(), fuzz_contract()));
  std::mt19937_64 random(20261130);
  const float specials[] = {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(), -0.f, 2.f};
  int outcomes[3] = {0, 0, 0};
  for (int iteration = 0; iteration < 20000; ++iteration) {
    std::string input = seed;
    const int edits = 1 + static_cast<int>(random() % 4);
    for (int e = 0; e < edits; ++e) {
      const size_t at = random() % input.size();
      switch (random() % 4) {
        case 0: input[at] = static_cast<char>(input[at] ^ (1 << (random() % 8))); break;
        case 1: input[at] = static_cast<char>(random()); break;
        case 2:
          if (at + 4 <= input.size()) std::memcpy(&input[at], &specials[random() % 4], 4);
          break;
        case 3: input.resize(at); break;
      }
      if (input.empty()) break;
    }
    ++outcomes[static_cast<int>(fuzz_fragment_contract(reinterpret_cast<const uint8_t*>(input.data()), input.size()))];
  }
  // Every path was taken: decoder rejections, contract refusals, and accepted fragments whose
  // invariants the target checked (a broken one aborts).
  INFO("not a fragment " << outcomes[0] << ", refused " << outcomes[1] << ", accepted " << outcomes[2]);
  CHECK(outcomes[0] > 1000);
  CHECK(outcomes[1] > 100);
  CHECK(outcomes[2] > 1000);
}

}  // namespace
}  // namespace rlx
