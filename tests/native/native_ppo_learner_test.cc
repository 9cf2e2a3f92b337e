// NativePpoLearner against the LibTorch PpoLearner (same model, config, initial weights and
// fragments: the same parameters, metrics and weights to 1e-4), and its own contracts:
// checkpoints, the non-finite rollback, the update a stop abandons and what it refuses.
#include "tests/learner/torch_catch.h"  // first: Catch2's CHECK, not the glog one LibTorch brings

#include "native_ppo_test_util.h"

#include <algorithm>
#include <cstring>
#include <sstream>
#include <string>

#include <torch/torch.h>

#include "core/non_finite_error.h"
#include "core/stop_signal.h"
#include "learner/policy_networks.h"
#include "learner/ppo_learner.h"
#include "native/native_ppo_learner.h"
#include "native/ppo_state_file.h"

using rlx_native_test::check_close;
using rlx_native_test::check_metrics;
using rlx_native_test::model_config_for;
using rlx_native_test::Sampler;
using rlx_native_test::synthetic_fragment;

namespace {

constexpr double kTolerance = 1e-4;

rlx::PpoConfig base_config() {
  rlx::PpoConfig config;
  config.lr = 1e-3;
  config.num_epochs = 4;
  config.minibatch_size = 128;
  config.total_timesteps = 100000;
  return config;
}

// A LibTorch learner holding the native learner's initial weights (the flat orders agree).
std::unique_ptr<rlx::PpoLearner> torch_twin(const rlx::ModelSpec& model, const rlx::PpoConfig& config,
                                            const rlx::NativePpoLearner& native, uint64_t seed) {
  auto learner = std::make_unique<rlx::PpoLearner>(model, config, seed);
  const rlx::ActorCriticLayout layout = rlx::actor_critic_layout(model);
  const std::vector<std::string> names = rlx::flat_parameter_names(learner->model());
  REQUIRE(names.size() == layout.parameters.size());
  for (size_t i = 0; i < names.size(); ++i) REQUIRE(names[i] == layout.parameters[i].name);
  const std::vector<float>& params = native.parameters();
  rlx::load_flat_parameters(learner->model(), params.data(), params.size());
  REQUIRE(learner->weights(0)->params == params);
  return learner;
}

void check_same_state(const rlx::NativePpoLearner& native, const rlx::PpoLearner& torch_learner) {
  const auto a = native.weights(7), b = torch_learner.weights(7);
  check_close(a->params, b->params, kTolerance, "weights");
  CHECK(a->policy_version == 7);
  CHECK(a->obs_mean == b->obs_mean);
  CHECK(a->obs_var == b->obs_var);
  CHECK(a->obs_count == b->obs_count);
  CHECK(native.state_json() == torch_learner.state_json());
  CHECK(native.num_updates() == torch_learner.num_updates());
}

// Three updates of both learners on CartPole fragments sampled with the native weights.
void compare_on_cartpole(const rlx::ModelSpec& model, const rlx::PpoConfig& config, uint64_t seed) {
  rlx::NativePpoLearner native(model, config, seed);
  const auto torch_learner = torch_twin(model, config, native, seed);
  Sampler sampler("CartPole-v1", model, 8, 64, seed + 1);
  for (int update = 0; update < 3; ++update) {
    sampler.sync(*native.weights(static_cast<uint64_t>(update)));
    const std::vector<rlx::SampleBatch> batches = sampler.collect(2, 1);
    const int64_t timesteps = 20000 * (update + 1);
    INFO("update " << update + 1);
    const rlx::PpoUpdateMetrics a = native.update(batches, timesteps);
    const rlx::PpoUpdateMetrics b = torch_learner->update(batches, timesteps);
    check_metrics(a, b, kTolerance);
    check_same_state(native, *torch_learner);
  }
}

bool bitwise_equal(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

}  // namespace

TEST_CASE("NativePpoLearner: Discrete tanh [64 64] with normalised observations scaled rewards and an entropy bonus matches PpoLearner",
          "[native][ppo]") {
  rlx::PpoConfig config = base_config();
  config.normalize_observations = true;
  config.scale_rewards = true;
  config.entropy_coeff = 0.01;
  config.lr_schedule = rlx::Schedule::kLinear;
  compare_on_cartpole(model_config_for("CartPole-v1", {64, 64}), config, 11);
}

TEST_CASE("NativePpoLearner: a linear model with linear lr and clip schedules matches PpoLearner", "[native][ppo]") {
  rlx::PpoConfig config = base_config();
  config.lr_schedule = rlx::Schedule::kLinear;
  config.clip_schedule = rlx::Schedule::kLinear;
  config.minibatch_size = 100;  // a partial last minibatch
  config.grad_clip = 0.0;
  compare_on_cartpole(model_config_for("CartPole-v1", {}), config, 12);
}

TEST_CASE("NativePpoLearner: Box(2) relu [32] with value clipping and an entropy bonus matches PpoLearner", "[native][ppo]") {
  rlx::ModelSpec model;
  model.obs_size = 3;
  model.action_space = rlx::Space::box({2}, -2.0f, 2.0f);
  model.hidden_sizes = {32};
  model.activation = "relu";
  model.log_std_init = -0.5;
  rlx::PpoConfig config = base_config();
  config.vf_clip_param = 0.2;
  config.entropy_coeff = 0.01;
  config.scale_rewards = true;
  config.minibatch_size = 64;
  const uint64_t seed = 13;
  rlx::NativePpoLearner native(model, config, seed);
  const auto torch_learner = torch_twin(model, config, native, seed);
  const rlx::ActorCriticLayout layout = rlx::actor_critic_layout(model);
  for (int update = 0; update < 3; ++update) {
    std::vector<rlx::SampleBatch> batches;
    for (int f = 0; f < 2; ++f) batches.push_back(synthetic_fragment(layout, native.parameters(), 32, 4, 100 * update + f));
    INFO("update " << update + 1);
    const rlx::PpoUpdateMetrics a = native.update(batches, 1000 * update);
    const rlx::PpoUpdateMetrics b = torch_learner->update(batches, 1000 * update);
    check_metrics(a, b, kTolerance);
    check_same_state(native, *torch_learner);
  }
}

TEST_CASE("NativePpoLearner: odd widths (obs 17 hidden [37 20] Discrete(3)) match PpoLearner", "[native][ppo]") {
  // Widths that are no multiple of the 16-column blocks: every product's tail path, and a first
  // layer wide enough for the direct weight gradient.
  rlx::ModelSpec model;
  model.obs_size = 17;
  model.action_space = rlx::Space::discrete(3);
  model.hidden_sizes = {37, 20};
  rlx::PpoConfig config = base_config();
  config.normalize_observations = true;
  config.minibatch_size = 50;
  const uint64_t seed = 15;
  rlx::NativePpoLearner native(model, config, seed);
  const auto torch_learner = torch_twin(model, config, native, seed);
  const rlx::ActorCriticLayout layout = rlx::actor_critic_layout(model);
  for (int update = 0; update < 2; ++update) {
    const std::vector<rlx::SampleBatch> batches{synthetic_fragment(layout, native.parameters(), 16, 8, 30 + update)};
    INFO("update " << update + 1);
    check_metrics(native.update(batches, 0), torch_learner->update(batches, 0), kTolerance);
    check_same_state(native, *torch_learner);
  }
}

TEST_CASE("NativePpoLearner: values from the batch (recompute_values off) match PpoLearner", "[native][ppo]") {
  rlx::ModelSpec model = model_config_for("CartPole-v1", {16});
  rlx::PpoConfig config = base_config();
  config.recompute_values = false;
  config.normalize_advantages = false;
  rlx::NativePpoLearner native(model, config, 14);
  const auto torch_learner = torch_twin(model, config, native, 14);
  const rlx::ActorCriticLayout layout = rlx::actor_critic_layout(model);
  for (int update = 0; update < 2; ++update) {
    const std::vector<rlx::SampleBatch> batches{synthetic_fragment(layout, native.parameters(), 64, 4, 7 + update)};
    check_metrics(native.update(batches, 0), torch_learner->update(batches, 0), kTolerance);
    check_same_state(native, *torch_learner);
  }
}

TEST_CASE("NativePpoLearner: save and load into a fresh learner give a bit-identical next update", "[native][ppo]") {
  const rlx::ModelSpec model = model_config_for("CartPole-v1", {32, 32});
  rlx::PpoConfig config = base_config();
  config.normalize_observations = true;
  config.scale_rewards = true;
  Sampler sampler("CartPole-v1", model, 4, 64, 5);
  const std::vector<rlx::SampleBatch> first = sampler.collect(2, 1), second = sampler.collect(2, 1);

  rlx::NativePpoLearner original(model, config, 21);
  original.update(first, 0);
  std::stringstream checkpoint;
  original.save(checkpoint);
  const nlohmann::json state = original.state_json();

  rlx::NativePpoLearner restored(model, config, 99);  // another seed: the state carries the original's
  restored.load(checkpoint);
  restored.load_state_json(state);
  CHECK(bitwise_equal(restored.parameters(), original.parameters()));
  const rlx::PpoUpdateMetrics a = original.update(second, 500);
  const rlx::PpoUpdateMetrics b = restored.update(second, 500);
  CHECK(bitwise_equal(restored.parameters(), original.parameters()));
  CHECK(a.policy_loss == b.policy_loss);
  CHECK(a.grad_norm == b.grad_norm);
  CHECK(restored.state_json() == original.state_json());

}

TEST_CASE("NativePpoLearner: parameters and state without the Adam state give another update", "[native][ppo]") {
  const rlx::ModelSpec model = model_config_for("CartPole-v1", {16});
  const rlx::PpoConfig config = base_config();
  Sampler sampler("CartPole-v1", model, 4, 64, 6);
  const std::vector<rlx::SampleBatch> first = sampler.collect(1, 1), second = sampler.collect(1, 1);
  rlx::NativePpoLearner original(model, config, 3), params_only(model, config, 4);
  original.update(first, 0);
  params_only.set_parameters(original.parameters());
  params_only.load_state_json(original.state_json());
  original.update(second, 0);
  params_only.update(second, 0);
  CHECK_FALSE(bitwise_equal(params_only.parameters(), original.parameters()));
}

TEST_CASE("NativePpoLearner: load refuses a wrong magic a wrong parameter count and a truncated stream", "[native][ppo]") {
  const rlx::ModelSpec model = model_config_for("CartPole-v1", {8});
  rlx::NativePpoLearner learner(model, base_config(), 1);
  std::stringstream good;
  learner.save(good);
  const std::string bytes = good.str();
  const auto message_of = [&](const std::string& data) {
    std::stringstream in(data);
    try {
      learner.load(in);
    } catch (const std::invalid_argument& error) {
      return std::string(error.what());
    }
    return std::string("no error");
  };
  CHECK_THAT(message_of("XLXNPPO1" + bytes.substr(8)), Catch::Contains("expected \"RLXNPPO1\""));
  rlx::NativePpoLearner bigger(model_config_for("CartPole-v1", {9}), base_config(), 1);
  std::stringstream other;
  bigger.save(other);
  CHECK_THAT(message_of(other.str()), Catch::Contains("holds " + std::to_string(bigger.parameters().size()) +
                                                      " parameters, the model has " + std::to_string(learner.parameters().size())));
  CHECK_THAT(message_of(bytes.substr(0, bytes.size() - 3)), Catch::Contains("truncated in Adam's exp_avg_sq"));
  CHECK(message_of(bytes) == "no error");
  CHECK_THROWS_AS(learner.set_parameters(std::vector<float>(3)), std::invalid_argument);
}

TEST_CASE("NativePpoLearner: a NaN reward throws NonFiniteLearnerError and undoes the whole update", "[native][ppo]") {
  const rlx::ModelSpec model = model_config_for("CartPole-v1", {16});
  rlx::PpoConfig config = base_config();
  config.normalize_observations = true;
  config.scale_rewards = true;
  Sampler sampler("CartPole-v1", model, 4, 32, 3);
  const std::vector<rlx::SampleBatch> first = sampler.collect(2, 1), second = sampler.collect(2, 1);
  std::vector<rlx::SampleBatch> poisoned = second;
  poisoned[1].rewards[5] = std::nanf("");

  rlx::NativePpoLearner learner(model, config, 5), clean(model, config, 5);
  learner.update(first, 0);
  clean.update(first, 0);
  const std::vector<float> params = learner.parameters();
  const nlohmann::json state = learner.state_json();
  CHECK_THROWS_AS(learner.update(poisoned, 100), rlx::NonFiniteLearnerError);
  CHECK(bitwise_equal(learner.parameters(), params));
  CHECK(learner.num_updates() == 1);
  CHECK(learner.state_json() == state);
  learner.update(second, 100);
  clean.update(second, 100);
  CHECK(bitwise_equal(learner.parameters(), clean.parameters()));
}

TEST_CASE("NativePpoLearner: a NaN met after some Adam steps restores the Adam state too", "[native][ppo]") {
  const rlx::ModelSpec model = model_config_for("CartPole-v1", {16});
  rlx::PpoConfig config = base_config();
  config.minibatch_size = 16;
  Sampler sampler("CartPole-v1", model, 4, 64, 3);
  const std::vector<rlx::SampleBatch> first = sampler.collect(1, 1), second = sampler.collect(1, 1);
  // A NaN observation at t = 0 spoils one sample only (no earlier step carries its value), so
  // the minibatches before the one that holds it take their Adam steps.
  std::vector<rlx::SampleBatch> poisoned = second;
  poisoned[0].obs[0] = std::nanf("");

  rlx::NativePpoLearner learner(model, config, 5), clean(model, config, 5);
  learner.update(first, 0);
  clean.update(first, 0);
  std::string message;
  try {
    learner.update(poisoned, 100);
  } catch (const rlx::NonFiniteLearnerError& error) {
    message = error.what();
  }
  INFO(message);
  REQUIRE(message.find("the update was undone") != std::string::npos);
  REQUIRE(message.find("epoch 1, minibatch 1:") == std::string::npos);
  CHECK(bitwise_equal(learner.parameters(), clean.parameters()));
  learner.update(second, 100);
  clean.update(second, 100);
  CHECK(bitwise_equal(learner.parameters(), clean.parameters()));
}

TEST_CASE("NativePpoLearner: a stop overdue mid-update abandons it, the learner bit for bit as before it", "[native][ppo][stop]") {
  const rlx::ModelSpec model = model_config_for("CartPole-v1", {16});
  rlx::PpoConfig config = base_config();  // 4 epochs of 2 minibatches over 256 samples
  config.normalize_observations = true;
  config.scale_rewards = true;
  Sampler sampler("CartPole-v1", model, 4, 32, 3);
  const std::vector<rlx::SampleBatch> first = sampler.collect(2, 1), second = sampler.collect(2, 1);
  rlx::NativePpoLearner learner(model, config, 5), clean(model, config, 5);
  learner.update(first, 0);
  clean.update(first, 0);
  std::stringstream before;
  learner.save(before);  // parameters and Adam state
  const nlohmann::json state = learner.state_json();  // statistics and the update count

  int checks = 0;
  learner.set_stop_check([&checks] { return ++checks > 5; });  // overdue before the 6th minibatch step
  std::string message;
  try {
    learner.update(second, 100);
  } catch (const rlx::StopRequested& stop) {
    message = stop.what();
  }
  INFO(message);
  CHECK_THAT(message, Catch::Contains("abandoned before epoch 3 of 4, minibatch 2 of 2"));
  std::stringstream after;
  learner.save(after);
  CHECK(after.str() == before.str());
  CHECK(learner.state_json() == state);
  CHECK(learner.weights(1)->obs_mean == clean.weights(1)->obs_mean);  // the statistics workers get, too

  // The same update again, now with no stop: as if the abandoned one never began.
  learner.set_stop_check([] { return false; });
  learner.update(second, 100);
  clean.update(second, 100);
  CHECK(bitwise_equal(learner.parameters(), clean.parameters()));
  CHECK(learner.state_json() == clean.state_json());
}

TEST_CASE("NativePpoLearner: unsupported names shared_trunk and the constructor refuses it", "[native][ppo]") {
  rlx::ModelSpec model = model_config_for("CartPole-v1", {16});
  CHECK_FALSE(rlx::NativePpoLearner::unsupported(model, base_config()).has_value());
  model.shared_trunk = true;
  const auto why = rlx::NativePpoLearner::unsupported(model, base_config());
  REQUIRE(why.has_value());
  CHECK_THAT(*why, Catch::Contains("shared_trunk"));
  CHECK_THROWS_AS(rlx::NativePpoLearner(model, base_config(), 0), std::invalid_argument);
}

TEST_CASE("NativePpoLearner: misfit batches throw PpoLearner's messages and change nothing", "[native][ppo]") {
  const rlx::ModelSpec model = model_config_for("CartPole-v1", {8});
  rlx::NativePpoLearner native(model, base_config(), 2);
  rlx::PpoLearner torch_learner(model, base_config(), 2);
  const rlx::ActorCriticLayout layout = rlx::actor_critic_layout(model);
  const auto message = [](auto& learner, const std::vector<rlx::SampleBatch>& batches) {
    try {
      learner.update(batches, 0);
    } catch (const std::invalid_argument& error) {
      return std::string(error.what());
    }
    return std::string("no error");
  };
  rlx::SampleBatch good = synthetic_fragment(layout, native.parameters(), 8, 2, 3);
  std::vector<std::vector<rlx::SampleBatch>> bad(5, {good});
  bad[0].clear();
  bad[1][0].action_indices[3] = 2;
  bad[2][0].log_probs.clear();
  bad[3][0].final_obs_index.clear();
  bad[3][0].final_obs.clear();
  bad[3][0].truncated[4] = 1;
  bad[3][0].terminated[4] = 0;
  bad[4][0].obs_size = 3;
  bad[4][0].obs.resize(8 * 2 * 3);
  bad[4][0].bootstrap_obs.resize(2 * 3);
  const std::vector<float> params = native.parameters();
  for (const auto& batches : bad) {
    const std::string expected = message(torch_learner, batches);
    CHECK(expected != "no error");
    CHECK(message(native, batches) == expected);
  }
  CHECK(native.parameters() == params);
  CHECK(native.num_updates() == 0);
}

TEST_CASE("NativePpoLearner: set_config checks the config and takes the new gamma into the reward scaler", "[native][ppo]") {
  const rlx::ModelSpec model = model_config_for("CartPole-v1", {8});
  rlx::NativePpoLearner learner(model, base_config(), 0);
  rlx::PpoConfig bad = base_config();
  bad.minibatch_size = 0;
  CHECK_THROWS(learner.set_config(bad));
  CHECK(learner.config().minibatch_size == base_config().minibatch_size);
  CHECK_THROWS(rlx::NativePpoLearner(model, bad, 0));
  rlx::PpoConfig explored = base_config();
  explored.gamma = 0.95;
  explored.lr = 5e-4;
  learner.set_config(explored);
  CHECK(learner.config().lr == 5e-4);
  CHECK(learner.state_json().at("reward_scaler").at("gamma").get<double>() == 0.95);
}

TEST_CASE("a native checkpoint resumes in PpoLearner and a PpoLearner checkpoint in the native learner", "[native][ppo][checkpoint]") {
  const rlx::ModelSpec model = model_config_for("CartPole-v1", {32, 32});
  rlx::PpoConfig config = base_config();
  config.normalize_observations = true;
  rlx::NativePpoLearner native(model, config, 5);
  const auto torch_learner = torch_twin(model, config, native, 5);
  Sampler sampler("CartPole-v1", model, 8, 32, 6);
  sampler.sync(*native.weights(0));
  const std::vector<rlx::SampleBatch> first = sampler.collect(2, 1);
  native.update(first, 1000);
  torch_learner->update(first, 1000);
  const std::vector<rlx::SampleBatch> second = sampler.collect(2, 1);

  SECTION("native to LibTorch") {
    std::stringstream file;
    native.save(file);
    rlx::PpoLearner resumed(model, config, 99);
    resumed.load(file);
    resumed.load_state_json(native.state_json());
    CHECK(resumed.weights(1)->params == native.weights(1)->params);  // bit for bit
    const rlx::PpoUpdateMetrics a = native.update(second, 2000);
    const rlx::PpoUpdateMetrics b = resumed.update(second, 2000);  // Adam's moments came along
    check_metrics(a, b, kTolerance);
    check_same_state(native, resumed);
  }
  SECTION("LibTorch to native") {
    std::stringstream file;
    torch_learner->save(file);
    rlx::NativePpoLearner resumed(model, config, 99);
    resumed.load(file);
    resumed.load_state_json(torch_learner->state_json());
    CHECK(resumed.weights(1)->params == torch_learner->weights(1)->params);
    const rlx::PpoUpdateMetrics a = resumed.update(second, 2000);
    const rlx::PpoUpdateMetrics b = torch_learner->update(second, 2000);
    check_metrics(a, b, kTolerance);
    check_same_state(resumed, *torch_learner);
  }
  SECTION("LibTorch to LibTorch, bit for bit, and a fresh learner's file has no Adam state") {
    std::stringstream file;
    torch_learner->save(file);
    rlx::PpoLearner resumed(model, config, 5);
    resumed.load(file);
    resumed.load_state_json(torch_learner->state_json());
    torch_learner->update(second, 2000);
    resumed.update(second, 2000);
    CHECK(resumed.weights(2)->params == torch_learner->weights(2)->params);
    std::stringstream fresh;
    rlx::PpoLearner(model, config, 7).save(fresh);
    const rlx::PpoLearnerState state = rlx::read_ppo_learner_state(fresh, static_cast<int64_t>(native.parameters().size()));
    CHECK(state.adam_step == 0);
    CHECK(std::all_of(state.exp_avg.begin(), state.exp_avg.end(), [](float v) { return v == 0.0f; }));
  }
}

TEST_CASE("PpoLearner still loads the LibTorch archive of earlier checkpoints", "[native][ppo][checkpoint]") {
  const rlx::ModelSpec model = model_config_for("CartPole-v1", {16});
  const rlx::PpoConfig config = base_config();
  rlx::PpoLearner original(model, config, 3);
  // The archive earlier versions wrote: format_version, num_parameters, params and the optimizer.
  torch::serialize::OutputArchive archive;
  archive.write("format_version", c10::IValue(int64_t{1}));
  archive.write("num_parameters", c10::IValue(static_cast<int64_t>(original.weights(0)->params.size())));
  const std::vector<float> params = original.weights(0)->params;
  archive.write("params", torch::tensor(params));
  torch::serialize::OutputArchive optimizer_archive;
  original.optimizer().save(optimizer_archive);
  archive.write("optimizer", optimizer_archive);
  std::stringstream legacy;
  archive.save_to(legacy);
  rlx::PpoLearner restored(model, config, 4);
  REQUIRE(restored.weights(0)->params != params);
  restored.load(legacy);
  CHECK(restored.weights(0)->params == params);
}
