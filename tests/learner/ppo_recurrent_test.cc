// PpoLearner on a recurrent model: its pass over the fragments' streams recomputes exactly what
// the workers' kernel computed (log-probs and values), and an update learns on sequences.
#include "ppo_test_util.h"

#include <cmath>
#include <vector>

namespace {

rlx::ModelSpec recurrent_config(const std::string& env_id, const std::string& core, bool shared) {
  rlx::ModelSpec config = rlx_test::model_config_for(env_id, {16});
  config.core = core;
  config.core_size = 8;
  config.shared_trunk = shared;
  return config;
}

}  // namespace

TEST_CASE("recurrent PpoLearner: the learner's sequences reproduce the workers' log-probs and values",
          "[learner][ppo][recurrent]") {
  for (const std::string core : {"lstm", "gru"}) {
    for (bool shared : {false, true}) {
      for (int64_t max_seq_len : {1, 5, 64}) {
        DYNAMIC_SECTION(core << (shared ? " shared" : " separate") << " max_seq_len " << max_seq_len) {
          const rlx::ModelSpec config = recurrent_config("CartPole-v1", core, shared);
          rlx::PpoConfig ppo;
          ppo.max_seq_len = max_seq_len;
          ppo.recompute_values = false;  // the advantages then come from the workers' values
          rlx::PpoLearner learner(config, ppo, 3);
          rlx_test::Sampler sampler("CartPole-v1", config, 4, 24, 5);
          rlx_test::sync_policy(learner, sampler.policy, 1);
          sampler.collect(1);  // later fragments start from non-zero states
          const std::vector<rlx::SampleBatch> batches = sampler.collect(3);
          CHECK(std::any_of(batches[1].initial_states.begin(), batches[1].initial_states.end(),
                            [](float v) { return v != 0.0f; }));
          // Same weights: the ratio is 1 at every sample, so nothing is clipped and the KL is 0.
          const rlx::PpoUpdateMetrics metrics = learner.evaluate(batches, 0);
          CHECK(std::abs(metrics.approx_kl) < 1e-6);
          CHECK(metrics.clip_fraction == 0.0);
          // The learner's values equal the workers' (recompute_values on would use its own).
          rlx::PpoConfig recompute = ppo;
          recompute.recompute_values = true;
          learner.set_config(recompute);
          const rlx::PpoTargets targets = learner.compute_targets(batches);
          size_t row = 0;
          float worst = 0.0f;
          for (const rlx::SampleBatch& batch : batches) {
            for (float v : batch.values) worst = std::max(worst, std::abs(v - targets.values[row++]));
          }
          CHECK(worst < 1e-4);
        }
      }
    }
  }
}

TEST_CASE("recurrent PpoLearner: updates on sequences lower the loss on their batch", "[learner][ppo][recurrent]") {
  const rlx::ModelSpec config = recurrent_config("CartPole-v1", "lstm", false);
  rlx::PpoConfig ppo;
  ppo.max_seq_len = 8;
  ppo.num_epochs = 4;
  ppo.minibatch_size = 64;
  rlx::PpoLearner learner(config, ppo, 3);
  rlx_test::Sampler sampler("CartPole-v1", config, 4, 32, 5);
  rlx_test::sync_policy(learner, sampler.policy, 1);
  const std::vector<rlx::SampleBatch> batches = sampler.collect(2);
  const rlx::PpoUpdateMetrics before = learner.evaluate(batches, 0);
  const rlx::PpoUpdateMetrics step = learner.update(batches, 0);
  CHECK(step.num_minibatch_steps == 4 * 4);  // 256 samples: 4 minibatches of whole sequences per epoch
  const rlx::PpoUpdateMetrics after = learner.evaluate(batches, 0);
  CHECK(after.vf_loss < before.vf_loss);
  CHECK(after.approx_kl > 0.0);
}
