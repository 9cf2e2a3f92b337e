// Data-parallel exactness for recurrent (LSTM and GRU) models: two Gloo ranks training on shards
// of a batch, each holding whole env columns, list the whole batch's sequences alike, draw the
// single learner's permutation of them and end with the parameters one learner gets on the whole
// batch, with sequences cut at episode ends inside fragments and a fragment split by envs.
#include "tests/learner/ppo_test_util.h"

#include <algorithm>
#include <functional>
#include <string>
#include <vector>

#include "learner/data_parallel.h"
#include "learner/fragment_shards.h"
#include "learner/sequence_shards.h"
#include "native/sequence_plan.h"
#include "tests/learner/data_parallel_test_util.h"
#include "tests/learner/learner_test_configs.h"

namespace {

using rlx_test::check_close;
using rlx_test::run_ranks;
using rlx_test::update_with_last_fragment_apart;
using rlx_test::Sampler;

rlx::ModelSpec recurrent_model(const std::string& core) {
  rlx::ModelSpec model = rlx_test::model_config_for("CartPole-v1", {16});
  model.core = core;
  model.core_size = 8;
  return model;
}

rlx::PpoConfig recurrent_config() {
  rlx::PpoConfig config = rlx::test::ppo_test_config();
  config.lr = 3e-3;
  config.num_epochs = 3;
  config.minibatch_size = 64;
  config.max_seq_len = 8;
  config.normalize_observations = true;
  config.scale_rewards = true;
  config.vf_clip_param = 0.5;
  config.entropy_coeff = 0.01;
  config.total_timesteps = 100000;
  return config;
}

// Fragments of the sampler's after one it throws away, so that they start from non-zero states;
// requires an episode to end inside one of them (a sequence cut before the fragment's end).
std::vector<rlx::SampleBatch> fragments_with_episode_ends(Sampler& sampler, int count) {
  sampler.collect(1);
  std::vector<rlx::SampleBatch> batches = sampler.collect(count);
  bool ends_inside = false;
  for (const rlx::SampleBatch& b : batches) {
    for (int64_t i = 0; i < (b.num_steps - 1) * b.num_envs; ++i) ends_inside = ends_inside || b.terminated[i] || b.truncated[i];
  }
  REQUIRE(ends_inside);
  return batches;
}

// Layout of the whole batch for two ranks: its fragments in order (the widest split by envs
// when there is one), and each fragment's rank (every other one when interleaved, else runs).
struct TwoRankLayout {
  rlx::ShardedBatch sharded;
  std::vector<int> owner;
};

TwoRankLayout two_rank_layout(const std::vector<rlx::SampleBatch>& scaled, bool interleaved) {
  TwoRankLayout layout;
  layout.sharded = rlx::shard_batch(scaled, 2);
  layout.owner = rlx::assign_fragments(layout.sharded.fragments, 2);
  if (interleaved) {
    for (size_t f = 0; f < layout.owner.size(); ++f) layout.owner[f] = static_cast<int>(f % 2);
  }
  return layout;
}

// Rank `rank`'s fragments and shard in the layout.
std::vector<rlx::SampleBatch> shard_of(const TwoRankLayout& layout, int rank, rlx::PpoShard& shard) {
  std::vector<rlx::SampleBatch> mine;
  shard.global_samples = layout.sharded.total;
  shard.rewards_prescaled = true;
  for (size_t f = 0; f < layout.owner.size(); ++f) {
    if (layout.owner[f] != rank) continue;
    mine.push_back(layout.sharded.fragments[f]);
    shard.fragment_offsets.push_back(layout.sharded.offsets[f]);
    shard.fragment_strides.push_back(layout.sharded.strides[f]);
  }
  return mine;
}

// One learner updates on the whole batch, two ranks on their shards of it; both ranks must end
// with the single learner's parameters and report its metrics.
void check_two_ranks_like_single(const rlx::ModelSpec& model, const rlx::PpoConfig& config,
                                 const std::vector<rlx::SampleBatch>& batches, bool interleaved) {
  rlx::PpoLearner single(model, config, 11);
  const rlx::PpoUpdateMetrics reference = single.update(batches, 1000);

  const int64_t total = two_rank_layout(batches, interleaved).sharded.total;
  const rlx_test::TwoRankUpdate ranks = rlx_test::update_two_ranks(
      model, config, 11, batches, [&](int rank, const std::vector<rlx::SampleBatch>& scaled, rlx::PpoShard& shard) {
        return shard_of(two_rank_layout(scaled, interleaved), rank, shard);
      });
  rlx_test::check_ranks_like_single(ranks, single, reference, total);
}

}  // namespace

TEST_CASE("Recurrent sequences of two ranks' shards, summed, list the whole batch's sequences in its plan's order",
          "[learner][dp][recurrent]") {
  const rlx::ModelSpec model = recurrent_model("lstm");
  Sampler sampler("CartPole-v1", model, 5, 40, 9);
  const std::vector<rlx::SampleBatch> batches = fragments_with_episode_ends(sampler, 1);
  const TwoRankLayout layout = two_rank_layout(batches, false);
  REQUIRE(layout.sharded.fragments.size() == 2);  // one fragment of 5 envs split 3 + 2
  const rlx::SequencePlan whole = rlx::plan_sequences(batches, 8);

  std::vector<rlx::SequencePlan> plans;
  std::vector<std::vector<rlx::SampleBatch>> shards;
  std::vector<rlx::PpoShard> layouts(2);
  std::vector<double> summed(static_cast<size_t>(3 * layout.sharded.total), 0.0);
  for (int rank = 0; rank < 2; ++rank) {
    shards.push_back(shard_of(layout, rank, layouts[static_cast<size_t>(rank)]));
    plans.push_back(rlx::plan_sequences(shards.back(), 8));
    const std::vector<double> term = rlx::sequence_layout_term(plans.back(), shards.back(), layouts[static_cast<size_t>(rank)]);
    std::transform(summed.begin(), summed.end(), term.begin(), summed.begin(), std::plus<double>());
  }
  std::vector<int64_t> held(static_cast<size_t>(whole.num_sequences()), 0);
  for (int rank = 0; rank < 2; ++rank) {
    INFO("rank " << rank);
    const auto r = static_cast<size_t>(rank);
    const rlx::GlobalSequences global = rlx::global_sequences(summed, plans[r], shards[r], layouts[r]);
    CHECK(global.num_samples == 200);
    CHECK(global.length == whole.sequence_length);
    for (int64_t q = 0; q < global.num_sequences(); ++q) {
      const int64_t local = global.local[static_cast<size_t>(q)];
      if (local < 0) continue;
      ++held[static_cast<size_t>(q)];
      CHECK(plans[r].sequence_length[static_cast<size_t>(local)] == whole.sequence_length[static_cast<size_t>(q)]);
    }
  }
  CHECK(std::all_of(held.begin(), held.end(), [](int64_t n) { return n == 1; }));  // each on exactly one rank
  // Shards that leave a gap in the global batch are refused on every rank alike.
  std::vector<double> gap = summed;
  gap[0] = 0.0;
  CHECK_THROWS_AS(rlx::global_sequences(gap, plans[0], shards[0], layouts[0]), std::invalid_argument);
}

TEST_CASE("Data-parallel recurrent PPO: two Gloo ranks on shards equal one learner on the whole batch",
          "[learner][dp][recurrent]") {
  rlx::set_inference_threads(1);
  for (const std::string core : {"lstm", "gru"}) {
    DYNAMIC_SECTION(core << ", interleaved fragments") {
      const rlx::ModelSpec model = recurrent_model(core);
      Sampler sampler("CartPole-v1", model, 2, 48, 7);
      check_two_ranks_like_single(model, recurrent_config(), fragments_with_episode_ends(sampler, 4), true);
    }
    DYNAMIC_SECTION(core << ", one fragment split by envs across ranks") {
      const rlx::ModelSpec model = recurrent_model(core);
      Sampler sampler("CartPole-v1", model, 5, 40, 9);
      rlx::PpoConfig config = recurrent_config();
      config.analytic_gradients = false;
      config.normalize_advantages = false;
      check_two_ranks_like_single(model, config, fragments_with_episode_ends(sampler, 1), false);
    }
  }
}

TEST_CASE("Data-parallel recurrent APPO: V-trace and the KL term on shards equal one learner on the whole batch",
          "[learner][dp][recurrent][appo]") {
  rlx::set_inference_threads(1);
  rlx::PpoConfig config = recurrent_config();  // the sampler's weights are not the learner's: mu != pi
  config.vtrace = true;
  config.rho_bar = 1.2;
  config.c_bar = 0.9;
  config.kl_coeff = 0.5;
  const rlx::ModelSpec model = recurrent_model("lstm");
  Sampler sampler("CartPole-v1", model, 2, 48, 7);
  check_two_ranks_like_single(model, config, fragments_with_episode_ends(sampler, 4), true);
}

TEST_CASE("Data-parallel recurrent PPO: a rank holding no sequence of a minibatch still joins its collectives",
          "[learner][dp][recurrent]") {
  rlx::set_inference_threads(1);
  rlx::PpoConfig config = recurrent_config();
  config.minibatch_size = 20;
  config.num_epochs = 2;
  const rlx::ModelSpec model = recurrent_model("gru");
  Sampler sampler("CartPole-v1", model, 1, 10, 3);
  const std::vector<rlx::SampleBatch> batches = sampler.collect(11);  // rank 1 holds the last 10 of 110 samples
  const rlx::SequencePlan whole = rlx::plan_sequences(batches, config.max_seq_len);
  const int64_t per_minibatch = rlx::sequences_per_minibatch(whole, config.minibatch_size);
  const int64_t minibatches = (whole.num_sequences() + per_minibatch - 1) / per_minibatch;  // 6
  const rlx::SequencePlan last = rlx::plan_sequences({batches.back()}, config.max_seq_len);
  REQUIRE(last.num_sequences() < minibatches);  // so some minibatch of every epoch holds none of rank 1's

  rlx::PpoLearner single(model, config, 5);
  single.update(batches, 0);
  const std::vector<std::unique_ptr<rlx::PpoLearner>> learners = update_with_last_fragment_apart(model, config, batches, 10);
  for (int rank = 0; rank < 2; ++rank) {
    INFO("rank " << rank);
    check_close(learners[static_cast<size_t>(rank)]->model().flat_parameters(), single.model().flat_parameters(), 1e-5);
  }
}
