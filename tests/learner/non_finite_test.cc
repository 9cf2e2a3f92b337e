// The learners' guard against divergence: a non-finite loss or gradient stops the update before
// any weight changes, so the learner (and its checkpoints) stay sound.
#include "ppo_test_util.h"

#include <sstream>

#include "learner/dqn_learner.h"
#include "learner/non_finite.h"
#include "tests/learner/learner_test_configs.h"

namespace {

using rlx_test::model_config_for;
using rlx_test::same_parameters;
using rlx_test::Sampler;

// Fragments with rewards so large that returns (and losses) overflow float.
std::vector<rlx::SampleBatch> poisoned(std::vector<rlx::SampleBatch> batches, float reward = 1e30f) {
  for (rlx::SampleBatch& batch : batches) {
    for (float& r : batch.rewards) r = reward;
  }
  return batches;
}

}  // namespace

TEST_CASE("PPO: a non-finite loss undoes the whole update (weights, Adam, statistics, count)", "[learner][ppo][nonfinite]") {
  const rlx::ModelSpec model = model_config_for("CartPole-v1");
  rlx::PpoConfig config = rlx::test::ppo_test_config();
  config.num_epochs = 2;
  config.minibatch_size = 64;
  config.normalize_observations = true;
  config.scale_rewards = false;
  Sampler sampler("CartPole-v1", model, 4, 32, 3);
  const std::vector<rlx::SampleBatch> first = sampler.collect(2, 1), second = sampler.collect(2, 1);

  rlx::PpoLearner learner(model, config, 5);
  learner.update(first, 0);
  std::stringstream archive;
  learner.save(archive);
  const nlohmann::json state = learner.state_json();

  try {
    learner.update(poisoned(second), 256);
    FAIL("no error");
  } catch (const rlx::NonFiniteLearnerError& error) {
    CHECK_THAT(error.what(), Catch::Contains("PPO update 2, epoch 1, minibatch 1") && Catch::Contains("undone"));
  }
  // Exactly the learner before the update: the same next update as a restored copy.
  rlx::PpoLearner before(model, config, 99);
  before.load(archive);
  before.load_state_json(state);
  CHECK(same_parameters(learner, before));
  CHECK(learner.state_json() == state);
  learner.update(second, 256);
  before.update(second, 256);
  CHECK(same_parameters(learner, before));
}

TEST_CASE("PPO: a non-finite first update leaves Adam as it was (no state)", "[learner][ppo][nonfinite]") {
  const rlx::ModelSpec model = model_config_for("CartPole-v1");
  Sampler sampler("CartPole-v1", model, 4, 32, 3);
  const std::vector<rlx::SampleBatch> batches = sampler.collect(2, 1);
  rlx::PpoLearner learner(model, rlx::test::ppo_test_config(), 5), fresh(model, rlx::test::ppo_test_config(), 5);
  CHECK_THROWS_AS(learner.update(poisoned(batches), 0), rlx::NonFiniteLearnerError);
  CHECK(same_parameters(learner, fresh));
  learner.update(batches, 0);
  fresh.update(batches, 0);
  CHECK(same_parameters(learner, fresh));
}

TEST_CASE("DQN: a non-finite loss stops before the gradient step", "[learner][dqn][nonfinite]") {
  const rlx::ModelSpec model = model_config_for("CartPole-v1", {16, 16});
  rlx::DqnConfig config = rlx::test::dqn_test_config();
  config.batch_size = 16;
  config.buffer_size = 1000;
  config.learning_starts = 50;
  config.total_timesteps = 10000;
  config.n_step = 2;  // two rewards of 3e38 sum past the largest float
  Sampler sampler("CartPole-v1", model, 2, 50, 4);  // an actor-critic policy is fine for filling a buffer
  std::vector<rlx::SampleBatch> data = sampler.collect(2, 1);
  for (rlx::SampleBatch& batch : data) {
    batch.log_probs.clear();
    batch.values.clear();
  }
  rlx::DqnLearner learner(model, config, 7);
  for (const rlx::SampleBatch& batch : poisoned(data, 3e38f)) learner.add(batch);
  REQUIRE(learner.ready());
  const std::vector<float> before = learner.weights(0)->params;
  try {
    learner.train(4, 200);
    FAIL("no error");
  } catch (const rlx::NonFiniteLearnerError& error) {
    CHECK_THAT(error.what(), Catch::Contains("DQN gradient step 1") && Catch::Contains("no weight changed"));
  }
  CHECK(learner.weights(0)->params == before);
  CHECK(learner.num_gradient_steps() == 0);
}
