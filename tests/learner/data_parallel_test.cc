// Data-parallel exactness: two ranks (threads, each with its own Gloo process group over one
// c10d HashStore) training on shards of a batch end with the parameters one learner gets on the
// whole batch (PPO: a full update of all epochs and minibatches; DQN: a gradient step).
#include "tests/learner/ppo_test_util.h"

#include <algorithm>
#include <vector>

#include "learner/data_parallel.h"
#include "learner/dqn_learner.h"
#include "learner/fragment_shards.h"
#include "tests/learner/data_parallel_test_util.h"
#include "tests/learner/learner_test_configs.h"
#include "tests/learner/masked_test_envs.h"

namespace {

using rlx_test::check_close;
using rlx_test::model_config_for;
using rlx_test::run_ranks;
using rlx_test::update_with_last_fragment_apart;
using rlx_test::Sampler;

rlx::PpoConfig exactness_config() {
  rlx::PpoConfig config = rlx::test::ppo_test_config();
  config.lr = 3e-3;
  config.num_epochs = 3;
  config.minibatch_size = 96;  // 512 samples: five full minibatches and a partial one per epoch
  config.normalize_observations = true;
  config.scale_rewards = true;
  config.vf_clip_param = 0.5;
  config.entropy_coeff = 0.01;
  config.total_timesteps = 100000;
  return config;
}

void check_ppo_exactness(rlx::PpoConfig config, std::vector<int64_t> hidden) {
  const bool contiguous = hidden.size() == 1;  // interleaved fragments for the first network
  const rlx::ModelSpec model_config = model_config_for("CartPole-v1", std::move(hidden));
  Sampler sampler("CartPole-v1", model_config, 2, 64, 7);
  const std::vector<rlx::SampleBatch> batches = sampler.collect(4);  // 4 fragments of 128

  rlx::PpoLearner single(model_config, config, 11);
  const rlx::PpoUpdateMetrics reference = single.update(batches, 1000);

  // Rank 0 (the driver) scales the rewards of the whole batch in order, then rank r takes
  // fragments r, r + 2 (interleaved, so the offsets matter).
  const rlx_test::TwoRankUpdate ranks = rlx_test::update_two_ranks(
      model_config, config, 11, batches, [&](int rank, const std::vector<rlx::SampleBatch>& scaled, rlx::PpoShard& shard) {
        std::vector<rlx::SampleBatch> mine;
        shard.global_samples = 512;
        shard.rewards_prescaled = true;
        for (int f = 0; f < 4; ++f) {
          if (contiguous ? (f / 2 != rank) : (f % 2 != rank)) continue;
          mine.push_back(scaled[static_cast<size_t>(f)]);
          shard.fragment_offsets.push_back(128 * f);
        }
        return mine;
      });
  rlx_test::check_ranks_like_single(ranks, single, reference, 512);
  for (int rank = 0; rank < 2; ++rank) {
    INFO("rank " << rank);
    const rlx::PpoLearner& learner = *ranks.learners[static_cast<size_t>(rank)];
    for (int64_t j = 0; j < 4; ++j) {
      CHECK(learner.obs_stats().mean()[static_cast<size_t>(j)] ==
            Approx(single.obs_stats().mean()[static_cast<size_t>(j)]).epsilon(1e-9));
    }
  }
}

}  // namespace

TEST_CASE("Data-parallel PPO: two Gloo ranks on shards equal one learner on the whole batch", "[learner][dp]") {
  rlx::set_inference_threads(1);
  SECTION("analytic gradients, obs normalisation, reward scaling, value clipping") {
    check_ppo_exactness(exactness_config(), {32, 32});
  }
  SECTION("autograd, no advantage normalisation") {
    rlx::PpoConfig config = exactness_config();
    config.analytic_gradients = false;
    config.normalize_advantages = false;
    check_ppo_exactness(config, {16});
  }
}

TEST_CASE("Data-parallel APPO: V-trace and the KL term on shards equal one learner on the whole batch", "[learner][dp][appo]") {
  rlx::set_inference_threads(1);
  rlx::PpoConfig config = exactness_config();  // the sampler's weights are not the learner's: mu != pi
  config.vtrace = true;
  config.rho_bar = 1.2;
  config.c_bar = 0.9;
  config.kl_coeff = 0.5;
  check_ppo_exactness(config, {32, 32});
}

TEST_CASE("Data-parallel PPO: a rank holding none of a minibatch still joins its collectives", "[learner][dp]") {
  rlx::set_inference_threads(1);
  rlx::PpoConfig config = exactness_config();
  config.minibatch_size = 100;
  config.num_epochs = 1;
  const rlx::ModelSpec model_config = model_config_for("CartPole-v1", {16});
  Sampler sampler("CartPole-v1", model_config, 1, 10, 3);
  const std::vector<rlx::SampleBatch> batches = sampler.collect(11);  // rank 1 holds 10 of 110 samples

  rlx::PpoLearner single(model_config, config, 5);
  single.update(batches, 0);
  const std::vector<std::unique_ptr<rlx::PpoLearner>> learners = update_with_last_fragment_apart(model_config, config, batches, 10);
  check_close(learners[1]->model().flat_parameters(), single.model().flat_parameters(), 1e-5);
}

TEST_CASE("Data-parallel DQN: two ranks' gradient step equals one learner's on their samples together", "[learner][dp]") {
  rlx::set_inference_threads(1);
  for (const bool prioritized : {false, true}) {
    INFO("prioritized " << prioritized);
    const rlx::ModelSpec model_config = model_config_for("CartPole-v1", {32, 32});
    rlx::DqnConfig config = rlx::test::dqn_test_config();
    config.lr = 1e-3;
    config.batch_size = 32;
    config.buffer_size = 4000;
    config.learning_starts = 0;
    config.total_timesteps = 10000;
    config.prioritized_replay = prioritized;
    Sampler sampler("CartPole-v1", model_config, 4, 32, 5);
    const std::vector<rlx::SampleBatch> batches = sampler.collect(4);

    rlx::DqnLearner single(model_config, config, 3);
    std::vector<std::unique_ptr<rlx::DqnLearner>> learners;
    for (int r = 0; r < 2; ++r) learners.push_back(std::make_unique<rlx::DqnLearner>(model_config, config, 3 + r));
    run_ranks(2, [&](int rank, rlx::Communicator& comm) {
      rlx::DqnLearner& learner = *learners[static_cast<size_t>(rank)];
      learner.set_data_parallel_hooks(rlx::make_dqn_hooks(comm, comm));
      rlx::broadcast_learner_state(comm, learner);
      for (int f = rank; f < 4; f += 2) learner.add(batches[static_cast<size_t>(f)]);
      REQUIRE(learner.ready_on_all_ranks());
      learner.train(1, 0);
    });
    // The reference learns from both ranks' draws as one batch of 32 (with the globally
    // normalised importance weights the ranks used).
    rlx::ReplaySample together = learners[0]->last_sample();
    const rlx::ReplaySample& other = learners[1]->last_sample();
    REQUIRE(together.size() == 16);
    REQUIRE(other.size() == 16);
    auto append = [](auto& to, const auto& from) { to.insert(to.end(), from.begin(), from.end()); };
    append(together.indices, other.indices);
    append(together.obs, other.obs);
    append(together.actions, other.actions);
    append(together.rewards, other.rewards);
    append(together.next_obs, other.next_obs);
    append(together.terminated, other.terminated);
    append(together.discounts, other.discounts);
    append(together.weights, other.weights);
    if (prioritized) {
      float max_weight = 0.0f;
      for (float w : together.weights) max_weight = std::max(max_weight, w);
      CHECK(max_weight <= 1.0f);
    }
    single.gradient_step_on(together);
    const std::vector<float> expected = single.online().flat_parameters();
    for (int rank = 0; rank < 2; ++rank) {
      INFO("rank " << rank);
      check_close(learners[static_cast<size_t>(rank)]->online().flat_parameters(), expected, 1e-5);
    }
  }
}

namespace {

// Two learners of the model and config, seeded alike.
std::vector<std::unique_ptr<rlx::PpoLearner>> two_learners(const rlx::ModelSpec& model, const rlx::PpoConfig& config) {
  std::vector<std::unique_ptr<rlx::PpoLearner>> learners;
  for (int r = 0; r < 2; ++r) learners.push_back(std::make_unique<rlx::PpoLearner>(model, config, 2));
  return learners;
}

// The batches with their rewards scaled by `learner` (as rank 0 does), split by envs for 2 ranks.
rlx::ShardedBatch scaled_shards(rlx::PpoLearner& learner, std::vector<rlx::SampleBatch> batches) {
  learner.scale_rewards(batches);
  return rlx::shard_batch(batches, 2);
}

// Updates learner r of two on shard r of `sharded` (fragment r), then holds both to the single
// learner's parameters.
void update_two_shards_like_single(const std::vector<std::unique_ptr<rlx::PpoLearner>>& learners,
                                   const rlx::ShardedBatch& sharded, rlx::PpoLearner& single) {
  run_ranks(2, [&](int rank, rlx::Communicator& comm) {
    rlx::PpoLearner& learner = *learners[static_cast<size_t>(rank)];
    learner.set_data_parallel_hooks(rlx::make_ppo_hooks(comm, comm));
    rlx::PpoShard shard;
    shard.global_samples = sharded.total;
    shard.rewards_prescaled = true;
    shard.fragment_offsets = {sharded.offsets[static_cast<size_t>(rank)]};
    shard.fragment_strides = {sharded.strides[static_cast<size_t>(rank)]};
    learner.update({sharded.fragments[static_cast<size_t>(rank)]}, 0, &shard);
  });
  for (int rank = 0; rank < 2; ++rank) {
    check_close(learners[static_cast<size_t>(rank)]->model().flat_parameters(), single.model().flat_parameters(), 1e-5);
  }
}

}  // namespace

TEST_CASE("Data-parallel PPO: one fragment split by envs across ranks keeps the single learner's result", "[learner][dp]") {
  rlx::set_inference_threads(1);
  rlx::PpoConfig config = exactness_config();
  config.num_epochs = 2;
  const rlx::ModelSpec model_config = model_config_for("CartPole-v1", {16});
  Sampler sampler("CartPole-v1", model_config, 5, 40, 9);
  const std::vector<rlx::SampleBatch> batches = sampler.collect(1);  // one fragment of 5 envs x 40 steps

  rlx::PpoLearner single(model_config, config, 2);
  single.update(batches, 0);
  std::vector<std::unique_ptr<rlx::PpoLearner>> learners = two_learners(model_config, config);
  const rlx::ShardedBatch sharded = scaled_shards(*learners[0], batches);
  REQUIRE(sharded.fragments.size() == 2);
  CHECK(sharded.fragments[0].num_envs == 3);
  CHECK(sharded.fragments[1].num_envs == 2);
  CHECK(sharded.offsets == std::vector<int64_t>{0, 3});
  CHECK(sharded.strides == std::vector<int64_t>{5, 5});
  const std::vector<int> owner = rlx::assign_fragments(sharded.fragments, 2);
  CHECK(owner == std::vector<int>{0, 1});
  update_two_shards_like_single(learners, sharded, single);
}

TEST_CASE("Data-parallel PPO: shards split by envs carry the action masks and every index of MultiDiscrete actions",
          "[learner][dp][mask]") {
  rlx::set_inference_threads(1);
  rlx::PpoConfig config = exactness_config();
  config.normalize_observations = false;
  config.num_epochs = 2;
  const rlx::Space actions = rlx::Space::multi_discrete({3, 4});
  rlx::ModelSpec model_config = rlx::ModelSpec::for_env(rlx_test::ContextMatchEnv::spec(actions, true));
  model_config.hidden_sizes = {16};
  rlx::PpoLearner single(model_config, config, 2);
  const auto illegal = std::make_shared<std::atomic<int64_t>>(0);
  rlx::ActorCriticPolicy policy(model_config, 3);
  const std::shared_ptr<rlx::Weights> w = single.weights(1);
  policy.load_weights(w->params.data(), w->params.size(), 1);
  rlx::FragmentCollector collector(rlx_test::context_match_envs(5, actions, true, illegal), policy, 40, 3);
  std::vector<rlx::SampleBatch> batches(1);
  collector.collect(batches[0]);  // one fragment of 5 envs x 40 steps, each observation with its mask

  single.update(batches, 0);
  std::vector<std::unique_ptr<rlx::PpoLearner>> learners = two_learners(model_config, config);
  const rlx::ShardedBatch sharded = scaled_shards(*learners[0], batches);
  REQUIRE(sharded.fragments.size() == 2);
  const rlx::SampleBatch& second = sharded.fragments[1];  // env columns 3 and 4
  CHECK(second.obs_byte_size == batches[0].obs_byte_size);
  CHECK(second.action_components == 2);
  const auto b = static_cast<size_t>(batches[0].obs_byte_size);
  CHECK(std::equal(second.obs_u8.begin(), second.obs_u8.begin() + 2 * b, batches[0].obs_u8.begin() + 3 * b));
  CHECK(std::equal(second.action_indices.begin(), second.action_indices.begin() + 4, batches[0].action_indices.begin() + 6));
  update_two_shards_like_single(learners, sharded, single);
  CHECK(illegal->load() == 0);
}

TEST_CASE("Fragments pack to bytes and back through the wire decoder", "[learner][dp]") {
  const rlx::ModelSpec model_config = model_config_for("CartPole-v1", {8});
  Sampler sampler("CartPole-v1", model_config, 3, 50, 4);
  const rlx::SampleBatch batch = sampler.collect(1).at(0);
  const rlx::SampleBatch back = rlx::unpack_fragment(rlx::pack_fragment(batch));
  CHECK(back.obs == batch.obs);
  CHECK(back.rewards == batch.rewards);
  CHECK(back.log_probs == batch.log_probs);
  CHECK(back.final_obs_index == batch.final_obs_index);
  std::string broken = rlx::pack_fragment(batch);
  broken.resize(broken.size() / 2);
  CHECK_THROWS_AS(rlx::unpack_fragment(broken), std::runtime_error);
}
