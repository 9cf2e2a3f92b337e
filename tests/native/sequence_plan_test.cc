// native/sequence_plan.h: a recurrent update's streams and sequences cut at episode starts and
// at max_seq_len, where each sequence's state comes from, and the extra rows' states.
#include <catch2/catch.hpp>

#include <vector>

#include "native/sequence_plan.h"

namespace rlx {
namespace {

// T = 5 steps of K = 2 envs with states of 3 floats: env 0's episode terminates at step 1, env
// 1's is truncated at step 3.
SampleBatch two_env_fragment() {
  SampleBatch batch;
  batch.state_size = 3;
  batch.resize(5, 2, 1, 0, true);
  batch.terminated[1 * 2 + 0] = 1;
  batch.truncated[3 * 2 + 1] = 1;
  batch.final_obs_index = {1 * 2 + 0, 3 * 2 + 1};
  batch.final_obs = {0.5f, 0.7f};
  batch.initial_states = {1, 2, 3, 4, 5, 6};
  batch.validate();
  return batch;
}

TEST_CASE("sequences never cross an episode start and hold at most max_seq_len steps", "[native][recurrent]") {
  const SequencePlan plan = plan_sequences({two_env_fragment()}, 2);
  CHECK(plan.num_streams == 2);
  CHECK(plan.max_steps == 5);
  CHECK(plan.num_samples == 10);
  CHECK(plan.stream_rows == std::vector<int64_t>{0, 2, 4, 6, 8, 1, 3, 5, 7, 9});
  CHECK(plan.stream_resets == std::vector<float>{0, 0, 1, 0, 0, 0, 0, 0, 0, 1});
  CHECK(plan.initial_states == std::vector<float>{1, 2, 3, 4, 5, 6});
  CHECK(plan.sequence_stream == std::vector<int64_t>{0, 0, 0, 1, 1, 1});
  CHECK(plan.sequence_start == std::vector<int64_t>{0, 2, 4, 0, 2, 4});
  CHECK(plan.sequence_length == std::vector<int64_t>{2, 2, 1, 2, 2, 1});
  // Shipped, zeros (episode start), after step 3 of stream 0; shipped, after step 1 of stream 1, zeros.
  std::vector<int64_t> sources;
  for (int64_t s = 0; s < plan.num_sequences(); ++s) sources.push_back(sequence_state_source(plan, s));
  CHECK(sources == std::vector<int64_t>{-1, -2, 3, -1, 6, -2});
  // The truncation's final observation continues env 1's episode after its step 3; the bootstraps
  // follow each stream's last step.
  CHECK(plan.extra_after_step == std::vector<int64_t>{8, 4, 9});
  CHECK(plan.extra_keep == std::vector<float>{1, 1, 1});
  CHECK(plan.num_extra == 3);
  const std::vector<int64_t> order{4, 0};
  CHECK(sequence_sample_rows(plan, order.data(), 2) == std::vector<int64_t>{5, 7, 0, 2});
  CHECK(sequences_per_minibatch(plan, 4) == 2);   // 10 samples in 3 minibatches of 6 sequences
  CHECK(sequences_per_minibatch(plan, 100) == 6);
}

TEST_CASE("a long max_seq_len cuts at episode starts only, and an ended stream's bootstrap starts from zeros",
          "[native][recurrent]") {
  SampleBatch batch = two_env_fragment();
  batch.terminated[4 * 2 + 0] = 1;  // env 0 also ends at the last step
  batch.final_obs_index.push_back(4 * 2 + 0);
  batch.final_obs.push_back(0.9f);
  const SequencePlan plan = plan_sequences({batch, two_env_fragment()}, 100);
  CHECK(plan.num_streams == 4);
  CHECK(plan.sequence_length == std::vector<int64_t>{2, 3, 4, 1, 2, 3, 4, 1});
  CHECK(plan.sequence_stream == std::vector<int64_t>{0, 0, 1, 1, 2, 2, 3, 3});
  CHECK(plan.extra_keep == std::vector<float>{1, 0, 1, 1, 1, 1});
  CHECK(plan.extra_after_step == std::vector<int64_t>{8, 4, 9, 18, 14, 19});
  CHECK(plan.num_samples == 20);
}

TEST_CASE("fragments whose state sizes differ are refused by name", "[native][recurrent]") {
  SampleBatch other = two_env_fragment();
  other.state_size = 4;
  other.initial_states.assign(8, 0.0f);
  CHECK_THROWS_WITH(plan_sequences({two_env_fragment(), other}, 4),
                    Catch::Contains("fragment 1") && Catch::Contains("4 floats"));
  CHECK_THROWS_WITH(plan_sequences({two_env_fragment()}, 0), Catch::Contains("max_seq_len"));
}

}  // namespace
}  // namespace rlx
