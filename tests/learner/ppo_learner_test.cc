#include "ppo_test_util.h"

#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include "core/config_error.h"
#include "core/rng.h"
#include "core/stop_signal.h"
#include "native/gae.h"
#include "tests/learner/learner_test_configs.h"

using rlx_test::model_config_for;
using rlx_test::Sampler;
using rlx_test::same_parameters;
using rlx_test::sync_policy;

namespace {

rlx::PpoConfig small_config() {
  rlx::PpoConfig config = rlx::test::ppo_test_config();
  config.lr = 1e-3;
  config.num_epochs = 4;
  config.minibatch_size = 64;
  config.total_timesteps = 100000;
  return config;
}

}  // namespace

TEST_CASE("PpoConfig: linear schedules and validation", "[learner][ppo]") {
  rlx::PpoConfig config = rlx::test::ppo_test_config();
  config.lr = 1e-3;
  config.clip_param = 0.2;
  config.total_timesteps = 1000;
  CHECK(config.lr_at(0) == Approx(1e-3));
  CHECK(config.lr_at(250) == Approx(0.75e-3));
  CHECK(config.lr_at(1000) == 0.0);
  CHECK(config.lr_at(5000) == 0.0);  // floored at 0 past the horizon
  CHECK(config.clip_param_at(500) == Approx(0.2));  // constant unless annealed
  config.clip_schedule = rlx::Schedule::kLinear;
  CHECK(config.clip_param_at(500) == Approx(0.1));
  config.lr_schedule = rlx::Schedule::kConstant;
  CHECK(config.lr_at(900) == Approx(1e-3));

  const auto bad = [](auto mutate) {
    rlx::PpoConfig c = rlx::test::ppo_test_config();
    mutate(c);
    return c;
  };
  // Keys are checked against their schema ranges, by the learner as by rlx train.
  const auto model = model_config_for("CartPole-v1", {8});
  auto learner_with = [&](const rlx::PpoConfig& config) { return rlx::PpoLearner(model, config, 0); };
  CHECK_THROWS_AS(learner_with(bad([](rlx::PpoConfig& c) { c.gamma = 1.5; })), rlx::ConfigError);
  CHECK_THROWS_AS(learner_with(bad([](rlx::PpoConfig& c) { c.minibatch_size = 0; })), rlx::ConfigError);
  CHECK_THROWS_AS(learner_with(bad([](rlx::PpoConfig& c) { c.num_epochs = 0; })), rlx::ConfigError);
  CHECK_THROWS_AS(learner_with(bad([](rlx::PpoConfig& c) { c.clip_param = 0.0; })), rlx::ConfigError);
  // total_timesteps is no key: the learner checks it when a schedule needs it.
  CHECK_THROWS_AS(learner_with(bad([](rlx::PpoConfig& c) { c.total_timesteps = 0; })), std::invalid_argument);
  CHECK_NOTHROW(learner_with(bad([](rlx::PpoConfig& c) {
    c.total_timesteps = 0;
    c.lr_schedule = rlx::Schedule::kConstant;
  })));
}

TEST_CASE("PpoLearner: targets bootstrap truncations from V(final obs) on normalised observations", "[learner][ppo]") {
  const rlx::ModelSpec model_config = model_config_for("CartPole-v1", {16});
  rlx::PpoConfig config = small_config();
  config.normalize_observations = true;
  config.gamma = 0.9;
  config.lambda = 0.8;
  rlx::PpoLearner learner(model_config, config, 3);
  // Non-trivial statistics so that normalisation matters.
  learner.load_state_json({{"obs_stats", {{"mean", {0.1, -0.2, 0.3, 0.5}}, {"var", {0.5, 2.0, 0.1, 4.0}}, {"count", 100.0}}},
                           {"reward_scaler", learner.reward_scaler().to_json()},
                           {"num_updates", 0}});

  // T = 3, K = 2: env 0 terminated at t = 1, env 1 truncated at t = 0; fragment end at t = 2.
  rlx::SampleBatch batch;
  batch.resize(3, 2, 4, 0, true);
  rlx::Rng rng(9);
  for (float& x : batch.obs) x = static_cast<float>(rng.normal());
  for (float& x : batch.bootstrap_obs) x = static_cast<float>(rng.normal());
  batch.rewards = {1.0f, 0.5f, 2.0f, 1.0f, 3.0f, -1.0f};
  batch.action_indices = {0, 1, 1, 0, 0, 1};
  batch.log_probs.assign(6, std::log(0.5f));
  batch.terminated = {0, 0, 1, 0, 0, 0};
  batch.truncated = {0, 1, 0, 0, 0, 0};
  batch.final_obs_index = {1, 2};  // flat t * K + k of both episode ends
  batch.final_obs = {5.0f, 1.0f, -0.5f, 0.2f, 0.0f, 0.0f, 0.0f, 0.0f};

  const rlx::PpoTargets targets = learner.compute_targets({batch});

  // The same by hand: value network on normalised obs / final obs / bootstrap obs, then compute_gae.
  const torch::Tensor mean = torch::tensor({0.1f, -0.2f, 0.3f, 0.5f});
  const torch::Tensor var = torch::tensor({0.5f, 2.0f, 0.1f, 4.0f});
  const auto value_of = [&](const std::vector<float>& rows, int64_t count) {
    torch::NoGradGuard no_grad;
    const torch::Tensor obs = torch::from_blob(const_cast<float*>(rows.data()), {count, 4}, torch::kFloat);
    const torch::Tensor v = learner.model().value_forward(rlx::normalize_observations(obs, mean, var)).contiguous();
    return std::vector<float>(v.data_ptr<float>(), v.data_ptr<float>() + count);
  };
  const std::vector<float> values = value_of(batch.obs, 6);
  const std::vector<float> bootstrap = value_of(batch.bootstrap_obs, 2);
  const std::vector<float> truncated_final = value_of({5.0f, 1.0f, -0.5f, 0.2f}, 1);
  std::vector<float> final_values(6, 0.0f);
  final_values[1] = truncated_final[0];
  rlx::GaeInputs in{3, 2, batch.rewards.data(), values.data(), batch.terminated.data(), batch.truncated.data(),
                    final_values.data(), bootstrap.data()};
  std::vector<float> adv(6), ret(6);
  rlx::compute_gae(in, 0.9, 0.8, adv.data(), ret.data());
  for (size_t i = 0; i < 6; ++i) {
    CHECK(targets.values[i] == Approx(values[i]).margin(1e-6));
    CHECK(targets.advantages[i] == Approx(adv[i]).margin(1e-5));
    CHECK(targets.returns[i] == Approx(ret[i]).margin(1e-5));
  }
  // Env 1 at t = 0 used V(final obs), not V(obs at t = 1) of the next episode.
  CHECK(targets.advantages[1] == Approx(0.5 + 0.9 * truncated_final[0] - values[1]).margin(1e-5));

  // A truncated step without its final observation cannot be bootstrapped.
  batch.final_obs_index = {2};
  batch.final_obs.resize(4);
  CHECK_THROWS_AS(learner.compute_targets({batch}), std::invalid_argument);
}

TEST_CASE("PpoLearner: an update changes the parameters and lowers the loss on its batch", "[learner][ppo]") {
  const rlx::ModelSpec model_config = model_config_for("CartPole-v1");
  rlx::PpoConfig config = small_config();
  config.recompute_values = false;  // fixed targets: the loss before and after is on the same objective
  config.num_epochs = 10;
  rlx::PpoLearner learner(model_config, config, 1);
  Sampler sampler("CartPole-v1", model_config, 4, 64, 2);
  sync_policy(learner, sampler.policy, 1);
  const std::vector<rlx::SampleBatch> batches = sampler.collect(2);

  const rlx::PpoUpdateMetrics before = learner.evaluate(batches, 0);
  // The worker's log-probs come from the same weights: the ratio is 1 before the update.
  CHECK(before.approx_kl == Approx(0.0).margin(1e-6));
  CHECK(before.clip_fraction == 0.0);
  const std::vector<float> params_before = learner.model().flat_parameters();

  const rlx::PpoUpdateMetrics metrics = learner.update(batches, 0);
  CHECK(metrics.num_samples == 512);
  CHECK(metrics.num_minibatch_steps == 10 * 8);
  CHECK(metrics.lr == Approx(1e-3));
  CHECK(metrics.clip_param == Approx(0.2));
  CHECK(metrics.grad_norm > 0.0);
  CHECK(metrics.approx_kl >= 0.0);
  CHECK(std::isfinite(metrics.explained_variance));
  CHECK(learner.num_updates() == 1);
  CHECK(learner.model().flat_parameters() != params_before);

  const rlx::PpoUpdateMetrics after = learner.evaluate(batches, 0);
  const auto total = [&](const rlx::PpoUpdateMetrics& m) { return m.policy_loss + config.vf_loss_coeff * m.vf_loss; };
  CHECK(total(after) < total(before));
  CHECK(after.vf_loss < before.vf_loss);
  CHECK(after.policy_loss < before.policy_loss);
  CHECK(after.approx_kl > 0.0);
}

TEST_CASE("PpoLearner: the last partial minibatch is used and the schedules apply", "[learner][ppo]") {
  const rlx::ModelSpec model_config = model_config_for("CartPole-v1", {8});
  rlx::PpoConfig config = small_config();
  config.minibatch_size = 50;
  config.num_epochs = 3;
  config.clip_schedule = rlx::Schedule::kLinear;
  config.total_timesteps = 1000;
  rlx::PpoLearner learner(model_config, config, 1);
  Sampler sampler("CartPole-v1", model_config, 3, 41, 2);  // 123 samples: 50 + 50 + 23
  const rlx::PpoUpdateMetrics metrics = learner.update(sampler.collect(1), 400);
  CHECK(metrics.num_samples == 123);
  CHECK(metrics.num_minibatch_steps == 9);
  CHECK(metrics.lr == Approx(0.6e-3));
  CHECK(metrics.clip_param == Approx(0.12));
  CHECK(learner.optimizer().param_groups()[0].options().get_lr() == Approx(0.6e-3));
}

TEST_CASE("PpoLearner: same seed and batches give identical parameters", "[learner][ppo]") {
  const rlx::ModelSpec model_config = model_config_for("CartPole-v1");
  rlx::PpoConfig config = small_config();
  config.normalize_observations = true;
  config.scale_rewards = true;
  config.grad_clip = 0.5;
  Sampler sampler("CartPole-v1", model_config, 4, 32, 5);
  const std::vector<rlx::SampleBatch> first = sampler.collect(2, 1), second = sampler.collect(2, 2);

  rlx::PpoLearner a(model_config, config, 42), b(model_config, config, 42), c(model_config, config, 43);
  CHECK(same_parameters(a, b));
  CHECK_FALSE(same_parameters(a, c));
  for (const auto* batches : {&first, &second}) {
    const rlx::PpoUpdateMetrics ma = a.update(*batches, 0);
    const rlx::PpoUpdateMetrics mb = b.update(*batches, 0);
    CHECK(ma.policy_loss == mb.policy_loss);
    CHECK(ma.grad_norm == mb.grad_norm);
  }
  CHECK(same_parameters(a, b));
  CHECK(a.obs_stats().mean() == b.obs_stats().mean());
}

TEST_CASE("PpoLearner: save/load round trip gives bit-identical next updates", "[learner][ppo]") {
  const rlx::ModelSpec model_config = model_config_for("CartPole-v1");
  rlx::PpoConfig config = small_config();
  config.normalize_observations = true;
  config.scale_rewards = true;
  config.vf_clip_param = 0.2;
  Sampler sampler("CartPole-v1", model_config, 4, 32, 6);
  const std::vector<rlx::SampleBatch> first = sampler.collect(2, 3), second = sampler.collect(2, 3);

  rlx::PpoLearner original(model_config, config, 7);
  original.update(first, 0);
  std::stringstream archive;
  original.save(archive);
  const std::string state = original.state_json().dump();

  rlx::PpoLearner restored(model_config, config, 99);  // another seed: everything must come from the checkpoint
  restored.load(archive);
  restored.load_state_json(nlohmann::json::parse(state));
  CHECK(same_parameters(original, restored));
  CHECK(restored.num_updates() == 1);

  const rlx::PpoUpdateMetrics mo = original.update(second, 256);
  const rlx::PpoUpdateMetrics mr = restored.update(second, 256);
  CHECK(mo.policy_loss == mr.policy_loss);
  CHECK(mo.vf_loss == mr.vf_loss);
  CHECK(same_parameters(original, restored));
  CHECK(original.state_json() == restored.state_json());

  // A learner that was already trained loses its own optimiser state on load.
  std::stringstream again;
  original.save(again);
  rlx::PpoLearner other(model_config, config, 7);
  other.update(second, 0);
  other.load(again);
  other.load_state_json(original.state_json());
  original.update(first, 512);
  other.update(first, 512);
  CHECK(same_parameters(original, other));

  // A different model refuses the archive.
  std::stringstream mismatch;
  original.save(mismatch);
  rlx::PpoLearner smaller(model_config_for("CartPole-v1", {8}), config, 7);
  CHECK_THROWS_AS(smaller.load(mismatch), std::invalid_argument);
  CHECK_THROWS_AS(smaller.load_state_json(nlohmann::json{{"num_updates", 1}}), std::invalid_argument);
}

TEST_CASE("PpoLearner: a stop overdue mid-update abandons it, the learner bit for bit as before it", "[learner][ppo][stop]") {
  const rlx::ModelSpec model_config = model_config_for("CartPole-v1", {16});
  rlx::PpoConfig config = small_config();  // 4 epochs of 4 minibatches over 256 samples
  config.normalize_observations = true;
  config.scale_rewards = true;
  Sampler sampler("CartPole-v1", model_config, 4, 32, 6);
  const std::vector<rlx::SampleBatch> first = sampler.collect(2, 3), second = sampler.collect(2, 3);
  rlx::PpoLearner learner(model_config, config, 7), clean(model_config, config, 7);
  learner.update(first, 0);
  clean.update(first, 0);
  std::stringstream before;
  learner.save(before);  // parameters and Adam state
  const nlohmann::json state = learner.state_json();  // statistics and the update count

  int checks = 0;
  learner.set_stop_check([&checks] { return ++checks > 6; });  // overdue before the 7th minibatch step
  std::string message;
  try {
    learner.update(second, 256);
  } catch (const rlx::StopRequested& stop) {
    message = stop.what();
  }
  INFO(message);
  CHECK_THAT(message, Catch::Contains("abandoned before epoch 2 of 4, minibatch 3 of 4"));
  std::stringstream after;
  learner.save(after);
  CHECK(after.str() == before.str());
  CHECK(learner.state_json() == state);

  // The same update again, now with no stop: as if the abandoned one never began.
  learner.set_stop_check([] { return false; });
  learner.update(second, 256);
  clean.update(second, 256);
  CHECK(same_parameters(learner, clean));
  CHECK(learner.state_json() == clean.state_json());

  // A data-parallel rank never abandons alone: the others would wait in its all-reduce.
  rlx::PpoDataParallelHooks hooks;
  hooks.allreduce_gradients = [](std::vector<torch::Tensor>&) {};
  learner.set_data_parallel_hooks(hooks);
  learner.set_stop_check([] { return true; });
  CHECK(learner.update(first, 512).num_minibatch_steps == 16);
}

TEST_CASE("PpoLearner: weights carry parameters and statistics that reproduce the learner's policy on workers", "[learner][ppo]") {
  const rlx::ModelSpec model_config = model_config_for("CartPole-v1");
  rlx::PpoConfig config = small_config();
  config.normalize_observations = true;
  rlx::PpoLearner learner(model_config, config, 1);
  Sampler sampler("CartPole-v1", model_config, 4, 64, 2);
  learner.update(sampler.collect(1), 0);

  const std::shared_ptr<rlx::Weights> w = learner.weights(17);
  CHECK(w->policy_version == 17);
  CHECK(w->params == learner.model().flat_parameters());
  CHECK(w->obs_mean == learner.obs_stats().mean());
  CHECK(w->obs_var == learner.obs_stats().var());
  CHECK(w->obs_count == learner.obs_stats().count());

  // A worker with these weights produces log-probs the learner reproduces exactly (ratio 1).
  sync_policy(learner, sampler.policy, 17);
  const rlx::PpoUpdateMetrics check = learner.evaluate(sampler.collect(1), 0);
  CHECK(check.approx_kl == Approx(0.0).margin(1e-6));
  CHECK(check.clip_fraction == 0.0);

  config.normalize_observations = false;
  rlx::PpoLearner plain(model_config, config, 1);
  CHECK(plain.weights(1)->obs_mean.empty());
}

TEST_CASE("PpoLearner: data-parallel seams see one flat gradient per minibatch step", "[learner][ppo]") {
  const rlx::ModelSpec model_config = model_config_for("CartPole-v1", {16});
  rlx::PpoLearner learner(model_config, small_config(), 1);
  Sampler sampler("CartPole-v1", model_config, 2, 64, 2);
  const std::vector<rlx::SampleBatch> batches = sampler.collect(1);

  int gradient_calls = 0, moment_calls = 0;
  rlx::PpoDataParallelHooks hooks;
  hooks.allreduce_gradients = [&](std::vector<torch::Tensor>& grads) {
    ++gradient_calls;
    REQUIRE(grads.size() == 1);
    REQUIRE(grads[0].numel() == learner.model().num_parameters());
    grads[0].zero_();  // as if the other ranks' gradients cancelled ours
  };
  hooks.allreduce_advantage_moments = [&](torch::Tensor&) { ++moment_calls; };
  learner.set_data_parallel_hooks(hooks);
  const std::vector<float> before = learner.model().flat_parameters();
  const rlx::PpoUpdateMetrics metrics = learner.update(batches, 0);
  CHECK(gradient_calls == metrics.num_minibatch_steps);
  CHECK(moment_calls == metrics.num_minibatch_steps);
  CHECK(metrics.grad_norm == 0.0);
  CHECK(learner.model().flat_parameters() == before);  // zero gradients: Adam does not move
}

TEST_CASE("PpoLearner: Box actions (Pendulum) update with finite metrics", "[learner][ppo]") {
  const rlx::ModelSpec model_config = model_config_for("Pendulum-v1");
  rlx::PpoConfig config = small_config();
  config.normalize_observations = true;
  config.scale_rewards = true;
  rlx::PpoLearner learner(model_config, config, 1);
  Sampler sampler("Pendulum-v1", model_config, 2, 100, 2);
  sync_policy(learner, sampler.policy, 1);
  const rlx::PpoUpdateMetrics metrics = learner.update(sampler.collect(2), 0);
  CHECK(metrics.num_samples == 400);
  for (double x : {metrics.policy_loss, metrics.vf_loss, metrics.entropy, metrics.approx_kl, metrics.grad_norm}) {
    CHECK(std::isfinite(x));
  }
  // Entropy of a unit diagonal Gaussian over one action dimension, log_std near 0 after one update.
  CHECK(metrics.entropy == Approx(0.5 * std::log(2.0 * M_PI * M_E)).margin(0.05));
}

TEST_CASE("PpoLearner: misuse throws and leaves the learner unchanged", "[learner][ppo]") {
  const rlx::ModelSpec model_config = model_config_for("CartPole-v1", {8});
  rlx::PpoConfig config = small_config();
  config.normalize_observations = true;
  rlx::PpoLearner learner(model_config, config, 1);
  Sampler sampler("CartPole-v1", model_config, 2, 16, 2);
  std::vector<rlx::SampleBatch> batches = sampler.collect(2);
  const double count = learner.obs_stats().count();

  CHECK_THROWS_AS(learner.update({}, 0), std::invalid_argument);
  std::vector<rlx::SampleBatch> no_log_probs = batches;
  no_log_probs[1].log_probs.clear();
  CHECK_THROWS_AS(learner.update(no_log_probs, 0), std::invalid_argument);
  std::vector<rlx::SampleBatch> wrong_size = batches;
  wrong_size[1].rewards.pop_back();
  CHECK_THROWS_AS(learner.update(wrong_size, 0), std::invalid_argument);
  std::vector<rlx::SampleBatch> bad_action = batches;
  bad_action[0].action_indices[3] = 2;  // CartPole has Discrete(2)
  CHECK_THROWS_AS(learner.update(bad_action, 0), std::invalid_argument);
  Sampler pendulum("Pendulum-v1", model_config_for("Pendulum-v1", {8}), 2, 16, 2);
  CHECK_THROWS_AS(learner.update(pendulum.collect(1), 0), std::invalid_argument);
  CHECK(learner.num_updates() == 0);
  CHECK(learner.obs_stats().count() == count);

  config.minibatch_size = 0;
  CHECK_THROWS_AS(rlx::PpoLearner(model_config, config, 1), rlx::ConfigError);
  CHECK_THROWS_AS(learner.set_config(config), rlx::ConfigError);
}
