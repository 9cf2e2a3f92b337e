// PpoLearner with APPO's settings: V-trace targets (against GAE and native/vtrace.h on the
// learner's own values and log-ratios), the ratio without the behaviour policy, the KL term.
#include "ppo_test_util.h"

#include <cmath>
#include <vector>

#include "native/gae.h"
#include "native/vtrace.h"
#include "tests/learner/learner_test_configs.h"

using rlx_test::model_config_for;
using rlx_test::Sampler;
using rlx_test::sync_policy;

namespace {

rlx::PpoConfig appo_config() {
  rlx::PpoConfig config = rlx::test::ppo_test_config();
  config.lr = 1e-3;
  config.num_epochs = 4;
  config.minibatch_size = 64;
  config.total_timesteps = 100000;
  config.gamma = 0.95;
  config.vtrace = true;
  return config;
}

// Moves the learner's policy away from its initial (near-uniform, for any seed) one: a few
// updates on fragments of its own, so that fragments of a freshly built policy are off-policy.
void move_away(rlx::PpoLearner& learner, const rlx::ModelSpec& model_config) {
  Sampler own("CartPole-v1", model_config, 4, 64, 17);
  for (int i = 0; i < 3; ++i) {
    sync_policy(learner, own.policy, 1);
    learner.update(own.collect(2), 0);
  }
}

std::vector<float> floats(const torch::Tensor& tensor) {
  const torch::Tensor t = tensor.detach().to(torch::kCPU, torch::kFloat).contiguous();
  return std::vector<float>(t.data_ptr<float>(), t.data_ptr<float>() + t.numel());
}

}  // namespace

TEST_CASE("APPO learner: with pi = mu the V-trace targets are GAE's with lambda 1", "[learner][appo]") {
  const rlx::ModelSpec model_config = model_config_for("CartPole-v1", {32});
  rlx::PpoConfig vtrace = appo_config();
  vtrace.lambda = 1.0;
  rlx::PpoConfig gae = vtrace;
  gae.vtrace = false;
  rlx::PpoLearner a(model_config, vtrace, 3), b(model_config, gae, 3);
  Sampler sampler("CartPole-v1", model_config, 4, 50, 5);  // episodes end inside the fragments
  sync_policy(a, sampler.policy, 1);                        // the workers act with pi itself
  const std::vector<rlx::SampleBatch> batches = sampler.collect(3);
  const rlx::PpoTargets t = a.compute_targets(batches), u = b.compute_targets(batches);
  REQUIRE(t.returns.size() == 600);
  for (size_t i = 0; i < t.returns.size(); ++i) {
    INFO("sample " << i);
    CHECK(t.returns[i] == Approx(u.returns[i]).epsilon(1e-4).margin(1e-4));
    CHECK(t.advantages[i] == Approx(u.advantages[i]).epsilon(1e-4).margin(1e-4));
  }
}

TEST_CASE("APPO learner: V-trace targets of stale fragments use the learner's values and log pi - log mu", "[learner][appo]") {
  const rlx::ModelSpec model_config = model_config_for("CartPole-v1", {32});
  rlx::PpoConfig config = appo_config();
  config.rho_bar = 1.5;
  config.c_bar = 0.8;
  config.lambda = 0.9;
  config.lr = 1e-2;
  rlx::PpoLearner learner(model_config, config, 3);
  move_away(learner, model_config);
  Sampler sampler("CartPole-v1", model_config, 2, 40, 9);  // the initial weights: mu differs from pi
  const std::vector<rlx::SampleBatch> batches = sampler.collect(1);
  const rlx::SampleBatch& batch = batches[0];
  for (size_t i = 0; i < batch.truncated.size(); ++i) {
    REQUIRE((batch.truncated[i] == 0 || batch.terminated[i] != 0));  // no truncation to bootstrap in 40 steps
  }
  const rlx::PpoTargets targets = learner.compute_targets(batches);

  torch::NoGradGuard no_grad;
  const int64_t n = batch.num_transitions();
  const torch::Tensor obs = torch::from_blob(const_cast<float*>(batch.obs.data()), {n, 4}, torch::kFloat);
  const torch::Tensor bootstrap = torch::from_blob(const_cast<float*>(batch.bootstrap_obs.data()), {2, 4}, torch::kFloat);
  const std::vector<float> values = floats(learner.model().value_forward(obs));
  const std::vector<float> bootstrap_values = floats(learner.model().value_forward(bootstrap));
  std::vector<int64_t> actions(batch.action_indices.begin(), batch.action_indices.end());
  const torch::Tensor log_pi =
      learner.model().distribution(learner.model().policy_forward(obs)).log_prob(torch::tensor(actions));
  std::vector<float> log_ratios = floats(log_pi);
  double most = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    log_ratios[static_cast<size_t>(i)] -= batch.log_probs[static_cast<size_t>(i)];
    most = std::max(most, std::abs(static_cast<double>(log_ratios[static_cast<size_t>(i)])));
  }
  CHECK(most > 0.01);  // off-policy indeed
  const std::vector<float> final_values(static_cast<size_t>(n), 0.0f);
  rlx::VtraceInputs in{{40, 2, batch.rewards.data(), values.data(), batch.terminated.data(), batch.truncated.data(),
                        final_values.data(), bootstrap_values.data()},
                       log_ratios.data()};
  std::vector<float> expected_targets(static_cast<size_t>(n)), expected_advantages(static_cast<size_t>(n));
  rlx::compute_vtrace(in, {0.95, 1.5, 0.8, 0.9}, expected_targets.data(), expected_advantages.data());
  for (size_t i = 0; i < expected_targets.size(); ++i) {
    INFO("sample " << i);
    CHECK(targets.returns[i] == Approx(expected_targets[i]).epsilon(1e-4).margin(1e-4));
    CHECK(targets.advantages[i] == Approx(expected_advantages[i]).epsilon(1e-4).margin(1e-4));
  }
}

TEST_CASE("APPO learner: without the behaviour ratio the surrogate starts at ratio 1 on stale data", "[learner][appo]") {
  const rlx::ModelSpec model_config = model_config_for("CartPole-v1", {32});
  rlx::PpoConfig corrected = appo_config();
  corrected.lr = 1e-2;
  rlx::PpoConfig uncorrected = corrected;
  uncorrected.vtrace = false;
  uncorrected.behaviour_ratio = false;
  rlx::PpoLearner a(model_config, corrected, 3), b(model_config, uncorrected, 3);
  move_away(a, model_config);
  move_away(b, model_config);
  Sampler sampler("CartPole-v1", model_config, 4, 32, 9);  // mu: the initial network, not pi
  const std::vector<rlx::SampleBatch> batches = sampler.collect(2);
  CHECK(a.evaluate(batches, 0).approx_kl > 1e-4);                          // pi / mu
  CHECK(b.evaluate(batches, 0).approx_kl == Approx(0.0).margin(1e-6));    // pi / pi at the start
  CHECK(b.evaluate(batches, 0).clip_fraction == 0.0);
}

TEST_CASE("APPO learner: the KL term to the target network holds the policy closer to it", "[learner][appo]") {
  const rlx::ModelSpec model_config = model_config_for("CartPole-v1", {32});
  rlx::PpoConfig free = appo_config();
  free.num_epochs = 8;
  free.lr = 3e-3;
  free.clip_param = 10.0;  // no trust region from the clip: only the KL term restrains the update
  rlx::PpoConfig held = free;
  held.kl_coeff = 5.0;
  rlx::PpoLearner a(model_config, free, 3), b(model_config, held, 3);
  Sampler sampler("CartPole-v1", model_config, 4, 64, 2);
  sync_policy(a, sampler.policy, 1);  // mu = pi = the target at the start: approx_kl measures the move
  const std::vector<rlx::SampleBatch> batches = sampler.collect(2);
  const rlx::PpoUpdateMetrics m_free = a.update(batches, 0);
  const rlx::PpoUpdateMetrics m_held = b.update(batches, 0);
  CHECK(m_free.kl_to_target == 0.0);  // no term, nothing reported
  CHECK(m_held.kl_to_target > 0.0);
  CHECK(std::isfinite(m_held.kl_to_target));
  INFO("approx_kl without the term " << m_free.approx_kl << ", with it " << m_held.approx_kl);
  CHECK(m_held.approx_kl < 0.7 * m_free.approx_kl);
}
