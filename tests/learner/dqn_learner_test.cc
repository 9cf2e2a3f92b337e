#include "tests/learner/torch_catch.h"

#include <cmath>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "envs/registry.h"
#include "envs/vector_env.h"
#include "learner/dqn_learner.h"
#include "learner/dqn_loss.h"
#include "rollout/fragment_collector.h"
#include "learner/policy_networks.h"
#include "models/rollout_policy.h"
#include "core/config_error.h"
#include "core/stop_signal.h"
#include "tests/learner/learner_test_configs.h"

namespace {

rlx::ModelSpec cartpole_model(bool dueling = false) {
  rlx::ModelSpec config = rlx::ModelSpec::for_env(rlx::global_env_registry().factory("CartPole-v1")()->spec());
  config.hidden_sizes = {16, 16};
  config.activation = "relu";
  config.dueling = dueling;
  return config;
}

rlx::DqnConfig small_config() {
  rlx::DqnConfig config = rlx::test::dqn_test_config();
  config.lr = 1e-3;
  config.batch_size = 16;
  config.buffer_size = 2000;
  config.learning_starts = 100;
  config.target_update_interval = 100;
  config.train_freq = 4;
  config.total_timesteps = 10000;
  return config;
}

// Random-play CartPole fragments, the same for a given seed.
std::vector<rlx::SampleBatch> cartpole_fragments(int count, uint64_t seed) {
  const auto factory = rlx::global_env_registry().factory("CartPole-v1");
  rlx::EpsilonGreedyQPolicy policy(cartpole_model(), 1.0, seed);
  rlx::VectorEnv envs(factory, 2);
  rlx::FragmentCollector collector(envs, policy, 50, seed);
  std::vector<rlx::SampleBatch> fragments(static_cast<size_t>(count));
  for (auto& batch : fragments) collector.collect(batch);
  return fragments;
}

void add_all(rlx::DqnLearner& learner, const std::vector<rlx::SampleBatch>& fragments) {
  for (const auto& batch : fragments) learner.add(batch);
}

std::vector<float> params(const torch::nn::Module& module) { return rlx::flat_parameters(module); }

double max_abs_diff(const std::vector<float>& a, const std::vector<float>& b) {
  REQUIRE(a.size() == b.size());
  double diff = 0.0;
  for (size_t i = 0; i < a.size(); ++i) diff = std::max(diff, std::abs(static_cast<double>(a[i]) - b[i]));
  return diff;
}

}  // namespace

TEST_CASE("DQN learner: same seed and data give the same parameters", "[learner][dqn]") {
  const auto data = cartpole_fragments(4, 5);
  for (bool dueling : {false, true}) {
    for (bool prioritized : {false, true}) {
      rlx::DqnConfig config = small_config();
      config.prioritized_replay = prioritized;
      config.n_step = 3;
      rlx::DqnLearner a(cartpole_model(dueling), config, 42);
      rlx::DqnLearner b(cartpole_model(dueling), config, 42);
      rlx::DqnLearner other(cartpole_model(dueling), config, 43);
      CHECK(params(a.online()) == params(b.online()));
      CHECK(params(a.online()) != params(other.online()));
      CHECK(params(a.target()) == params(a.online()));
      add_all(a, data);
      add_all(b, data);
      REQUIRE(a.ready());
      const rlx::DqnUpdateMetrics ma = a.train(20, 400);
      const rlx::DqnUpdateMetrics mb = b.train(20, 400);
      CHECK(params(a.online()) == params(b.online()));
      CHECK(params(a.target()) == params(b.target()));
      CHECK(ma.loss == mb.loss);
      CHECK(std::isfinite(ma.loss));
      CHECK(ma.loss > 0.0);
      CHECK(ma.num_gradient_steps == 20);
      CHECK(ma.buffer_size == a.buffer().size());
      CHECK(ma.td_abs_mean > 0.0);
      CHECK(ma.grad_norm > 0.0);
      CHECK(ma.beta == (prioritized ? Approx(rlx::annealed_beta(config.prioritized_replay_beta, 400, config.beta_horizon())) : Approx(0.0)));
      CHECK(ma.epsilon == Approx(config.epsilon(400)));
    }
  }
}

TEST_CASE("DQN learner: flat-buffer Adam and clipping match torch's per-parameter Adam", "[learner][dqn]") {
  // One transition (capacity = batch = 1) makes every draw the same, so a reference model can
  // replay the updates with torch::optim::Adam and clip_grad_norm_ over its own parameters.
  rlx::DqnConfig config = small_config();
  config.batch_size = 1;
  config.buffer_size = 1;
  config.learning_starts = 1;
  config.grad_clip = 0.05;  // small: clipping is active
  config.target_update_interval = 1000000;
  rlx::DqnLearner learner(cartpole_model(), config, 9);
  rlx::SampleBatch one;
  one.resize(1, 1, 4, 0, false);
  one.obs = {0.1f, -0.2f, 0.03f, 0.4f};
  one.action_indices = {1};
  one.rewards = {1.0f};
  one.bootstrap_obs = {0.12f, -0.1f, 0.02f, 0.3f};
  REQUIRE(learner.add(one) == 1);

  auto reference = std::make_shared<rlx::QNetwork>(cartpole_model());
  const std::vector<float> initial = params(learner.online());
  reference->load_flat_parameters(initial.data(), initial.size());
  auto frozen = std::make_shared<rlx::QNetwork>(cartpole_model());
  frozen->load_flat_parameters(initial.data(), initial.size());
  torch::optim::Adam adam(reference->parameters(), torch::optim::AdamOptions(config.lr).eps(config.adam_eps));
  rlx::DqnBatch batch;
  batch.obs = torch::tensor(one.obs).view({1, 4});
  batch.next_obs = torch::tensor(one.bootstrap_obs).view({1, 4});
  batch.actions = torch::tensor(std::vector<int64_t>{1}, torch::kLong).view({1, 1});
  batch.rewards = torch::tensor(std::vector<float>{1.0f});
  batch.bootstrap = torch::tensor(std::vector<float>{static_cast<float>(config.gamma)});
  for (int step = 0; step < 5; ++step) {
    adam.zero_grad();
    rlx::dqn_loss(*reference, *frozen, batch, config.double_q, config.huber_delta).loss.backward();
    const double norm = torch::nn::utils::clip_grad_norm_(reference->parameters(), config.grad_clip);
    CHECK(norm > config.grad_clip);
    adam.step();
  }
  learner.train(5, 0);
  CHECK(max_abs_diff(params(learner.online()), params(*reference)) < 1e-6);
  CHECK(params(learner.target()) == initial);
  CHECK(learner.weights(3)->params == params(learner.online()));
}

TEST_CASE("DQN learner: hard target copy every target_update_interval env steps", "[learner][dqn]") {
  rlx::DqnConfig config = small_config();
  config.target_update_interval = 100;
  config.tau = 1.0;
  rlx::DqnLearner learner(cartpole_model(), config, 1);
  add_all(learner, cartpole_fragments(3, 2));
  const std::vector<float> initial = params(learner.online());

  learner.train(5, 50);
  CHECK(params(learner.target()) == initial);
  learner.train(5, 99);
  CHECK(params(learner.target()) == initial);
  CHECK(learner.target_updates() == 0);
  const std::vector<float> before_100 = params(learner.online());
  CHECK(before_100 != initial);
  learner.train(5, 100);  // due at 100: the copy comes before this call's steps
  CHECK(params(learner.target()) == before_100);
  CHECK(learner.target_updates() == 1);
  const std::vector<float> before_350 = params(learner.online());
  const rlx::DqnUpdateMetrics metrics = learner.train(1, 350);
  CHECK(params(learner.target()) == before_350);
  CHECK(metrics.target_updates == 3);  // 200 and 300 passed as well
  learner.train(1, 399);
  CHECK(params(learner.target()) == before_350);
}

TEST_CASE("DQN learner: soft target updates with tau fold the updates that fell due", "[learner][dqn]") {
  rlx::DqnConfig config = small_config();
  config.target_update_interval = 10;
  config.tau = 0.25;
  rlx::DqnLearner learner(cartpole_model(), config, 1);
  add_all(learner, cartpole_fragments(3, 2));
  const std::vector<float> t0 = params(learner.target());
  learner.train(3, 5);
  CHECK(params(learner.target()) == t0);
  const std::vector<float> w1 = params(learner.online());
  learner.train(3, 30);  // three intervals passed with the online net at w1
  const std::vector<float> t1 = params(learner.target());
  const double keep = std::pow(0.75, 3);
  std::vector<float> expected(t0.size());
  for (size_t i = 0; i < t0.size(); ++i) expected[i] = static_cast<float>(w1[i] + keep * (t0[i] - w1[i]));
  CHECK(max_abs_diff(t1, expected) < 1e-6);
  CHECK(learner.target_updates() == 3);
  // One interval: exactly target <- tau * online + (1 - tau) * target.
  const std::vector<float> w2 = params(learner.online());
  learner.train(1, 40);
  for (size_t i = 0; i < t0.size(); ++i) expected[i] = static_cast<float>(0.25 * w2[i] + 0.75 * t1[i]);
  CHECK(max_abs_diff(params(learner.target()), expected) < 1e-6);
}

TEST_CASE("DQN learner: save/load round trip gives identical subsequent updates", "[learner][dqn]") {
  const auto data = cartpole_fragments(4, 8);
  for (bool prioritized : {false, true}) {
    rlx::DqnConfig config = small_config();
    config.prioritized_replay = prioritized;
    rlx::DqnLearner a(cartpole_model(true), config, 3);
    add_all(a, data);
    a.train(10, 150);
    std::stringstream archive;
    a.save(archive);
    const nlohmann::json state = a.state_json();

    rlx::DqnLearner b(cartpole_model(true), config, 77);  // another seed: everything comes from the checkpoint
    add_all(b, data);
    b.load(archive);
    b.load_state_json(state);
    CHECK(params(b.online()) == params(a.online()));
    CHECK(params(b.target()) == params(a.target()));
    CHECK(b.state_json() == state);

    const rlx::DqnUpdateMetrics ma = a.train(10, 260);
    const rlx::DqnUpdateMetrics mb = b.train(10, 260);
    // Prioritized: the priorities are buffer state, which a checkpoint leaves out, so b samples
    // from other priorities; uniform replay continues bit for bit.
    if (!prioritized) {
      CHECK(params(a.online()) == params(b.online()));
      CHECK(params(a.target()) == params(b.target()));
      CHECK(ma.loss == mb.loss);
    }
    CHECK(ma.target_updates == mb.target_updates);
  }

  rlx::ModelSpec wider = cartpole_model();
  wider.hidden_sizes = {32};
  rlx::DqnLearner mismatched(wider, small_config(), 3);
  rlx::DqnLearner source(cartpole_model(), small_config(), 3);
  std::stringstream archive;
  source.save(archive);
  CHECK_THROWS_AS(mismatched.load(archive), std::invalid_argument);
  CHECK_THROWS_AS(mismatched.load_state_json(nlohmann::json{{"seed", 1}}), std::invalid_argument);
}

TEST_CASE("DQN learner: a stop overdue mid-round ends train() between whole gradient steps", "[learner][dqn][stop]") {
  const auto data = cartpole_fragments(4, 8);
  for (bool prioritized : {false, true}) {
    INFO("prioritized " << prioritized);
    rlx::DqnConfig config = small_config();
    config.prioritized_replay = prioritized;
    rlx::DqnLearner learner(cartpole_model(), config, 3), twin(cartpole_model(), config, 3);
    add_all(learner, data);
    add_all(twin, data);
    int checks = 0;
    learner.set_stop_check([&checks] { return ++checks > 4; });  // overdue before the 5th step
    std::string message;
    try {
      learner.train(12, 200);
    } catch (const rlx::StopRequested& stop) {
      message = stop.what();
    }
    INFO(message);
    CHECK_THAT(message, Catch::Contains("stopped after 4 of 12 gradient steps"));
    // The learner after 4 whole steps (weights, Adam, counters, priorities): the twin's.
    twin.train(4, 200);
    CHECK(params(learner.online()) == params(twin.online()));
    CHECK(params(learner.target()) == params(twin.target()));
    CHECK(learner.state_json() == twin.state_json());
    CHECK(learner.save_replay() == twin.save_replay());
    // And it goes on as the twin does (the same Adam state; the next step draws with the next step's seed).
    learner.set_stop_check([] { return false; });
    learner.train(6, 300);
    twin.train(6, 300);
    CHECK(params(learner.online()) == params(twin.online()));
    CHECK(params(learner.target()) == params(twin.target()));
  }
}

TEST_CASE("DQN learner: training rounds follow received env steps past learning_starts", "[learner][dqn]") {
  rlx::DqnConfig config = small_config();
  config.train_freq = 256;
  config.learning_starts = 1000;
  config.buffer_size = 5000;
  rlx::DqnLearner learner(cartpole_model(), config, 1);
  CHECK(learner.training_rounds_due(300) == 0);  // not ready: skipped
  add_all(learner, cartpole_fragments(12, 4));   // 1,200 transitions
  REQUIRE(learner.ready());
  CHECK(learner.training_rounds_due(1000) == 0);  // 256, 512, 768 are warm-up
  CHECK(learner.training_rounds_due(1024) == 1);
  CHECK(learner.training_rounds_due(1100) == 0);
  CHECK(learner.training_rounds_due(2048) == 4);  // 1280, 1536, 1792, 2048
  CHECK(learner.training_rounds_due(2048) == 0);
  CHECK_THROWS_AS(learner.training_rounds_due(2000), std::invalid_argument);
}

TEST_CASE("DQN learner: schedules, weights, config changes and misuse", "[learner][dqn]") {
  rlx::DqnConfig config = small_config();
  config.exploration_initial_eps = 1.0;
  config.exploration_final_eps = 0.05;
  config.exploration_fraction = 0.1;
  config.total_timesteps = 1000;
  rlx::DqnLearner learner(cartpole_model(), config, 1);
  CHECK(learner.epsilon(0) == Approx(1.0));
  CHECK(learner.epsilon(50) == Approx(0.525));
  CHECK(learner.epsilon(100) == Approx(0.05));
  CHECK(learner.epsilon(900) == Approx(0.05));

  CHECK_FALSE(learner.ready());
  CHECK_THROWS_AS(learner.train(1, 0), std::logic_error);
  add_all(learner, cartpole_fragments(2, 6));
  CHECK_THROWS_AS(learner.train(0, 0), std::invalid_argument);

  // Workers load the weights and act greedily on the same Q-values.
  const auto weights = learner.weights(7);
  CHECK(weights->policy_version == 7);
  CHECK(weights->obs_mean.empty());
  rlx::EpsilonGreedyQPolicy policy(cartpole_model(), 0.0, 1);
  policy.load_weights(weights->params.data(), weights->params.size(), weights->policy_version);
  const std::vector<float> obs = {0.01f, 0.2f, -0.03f, -0.3f, 0.04f, -0.5f, 0.02f, 0.6f};
  std::vector<int64_t> actions(2);
  policy.act(obs.data(), 2, {actions.data(), nullptr, nullptr, nullptr});
  torch::NoGradGuard no_grad;
  const torch::Tensor greedy = learner.online().forward(torch::tensor(obs).view({2, 4})).argmax(1);
  CHECK(actions[0] == greedy[0].item<int64_t>());
  CHECK(actions[1] == greedy[1].item<int64_t>());

  rlx::DqnConfig faster = config;
  faster.lr = 5e-3;
  learner.set_config(faster);
  CHECK(static_cast<torch::optim::AdamOptions&>(learner.optimizer().param_groups()[0].options()).lr() == 5e-3);
  rlx::DqnConfig other_gamma = config;
  other_gamma.gamma = 0.9;
  CHECK_THROWS_AS(learner.set_config(other_gamma), std::invalid_argument);

  rlx::SampleBatch bad_action = cartpole_fragments(1, 1).front();
  bad_action.action_indices[3] = 2;
  const int64_t size = learner.buffer().size();
  CHECK_THROWS_AS(learner.add(bad_action), std::invalid_argument);
  CHECK(learner.buffer().size() == size);

  rlx::ModelSpec box = cartpole_model();
  box.action_space = rlx::Space::box({1}, -1.0f, 1.0f);
  CHECK_THROWS_AS(rlx::DqnLearner(box, config, 1), std::invalid_argument);
  rlx::DqnConfig bad = config;
  bad.tau = 0.0;  // a key out of its schema range
  CHECK_THROWS_AS(rlx::DqnLearner(cartpole_model(), bad, 1), rlx::ConfigError);
  bad = config;
  bad.per_eps = 0.0;  // no key: the learner's own check
  CHECK_THROWS_AS(rlx::DqnLearner(cartpole_model(), bad, 1), std::invalid_argument);
}

TEST_CASE("DQN learner: prioritized replay updates the sampled slots' priorities", "[learner][dqn]") {
  rlx::DqnConfig config = small_config();
  config.prioritized_replay = true;
  rlx::DqnLearner learner(cartpole_model(), config, 2);
  add_all(learner, cartpole_fragments(3, 3));
  const auto* buffer = learner.prioritized_buffer();
  REQUIRE(buffer != nullptr);
  for (int64_t i = 0; i < buffer->size(); ++i) REQUIRE(buffer->priority(i) == 1.0);
  learner.train(5, 100);
  int changed = 0;
  for (int64_t i = 0; i < buffer->size(); ++i) changed += buffer->priority(i) != 1.0;
  CHECK(changed > 16);  // 5 batches of 16, some drawn twice
  CHECK(changed <= 80);
}

namespace {

// Dict('grid': Box(0, 255, (2, 2), uint8), 'level': Discrete(3)) with Discrete(3) masked actions:
// per observation 1 float (the level) and 4 + 3 bytes (the grid, then the mask).
rlx::ModelSpec board_model() {
  rlx::EnvSpec env;
  env.id = "Board-v0";
  env.observation_space = rlx::Space::dict({{"grid", rlx::Space::box({2, 2}, 0, 255, rlx::ScalarType::kUint8)},
                                            {"level", rlx::Space::discrete(3)}});
  env.action_space = rlx::Space::discrete(3);
  env.action_mask = true;
  rlx::ModelSpec model = rlx::ModelSpec::for_env(env, rlx::ModelKind::kQNetwork);
  model.hidden_sizes = {16};
  model.activation = "relu";
  return model;
}

// Random fragments of board observations (T = 25, K = 2), each mask allowing one to three
// actions, an episode ending every 7 steps of an env.
std::vector<rlx::SampleBatch> board_fragments(int count, uint64_t seed) {
  rlx::Rng rng(seed);
  auto observation = [&rng](float* level, uint8_t* bytes) {
    *level = static_cast<float>(rng.uniform_int(3));
    for (int i = 0; i < 4; ++i) bytes[i] = static_cast<uint8_t>(rng.uniform_int(256));
    const int64_t legal = rng.uniform_int(3);
    for (int64_t a = 0; a < 3; ++a) bytes[4 + a] = a == legal || rng.uniform() < 0.5 ? 1 : 0;
  };
  std::vector<rlx::SampleBatch> fragments(static_cast<size_t>(count));
  int step = 0;
  for (rlx::SampleBatch& batch : fragments) {
    batch.resize(25, 2, 1, 0, false, 7);
    for (int32_t f = 0; f < 50; ++f, ++step) {
      observation(&batch.obs[static_cast<size_t>(f)], &batch.obs_u8[static_cast<size_t>(f) * 7]);
      batch.action_indices[static_cast<size_t>(f)] = rng.uniform_int(3);
      batch.rewards[static_cast<size_t>(f)] = static_cast<float>(rng.uniform());
      if (step % 14 == 13) {
        batch.terminated[static_cast<size_t>(f)] = 1;
        batch.final_obs_index.push_back(f);
        batch.final_obs.push_back(0.0f);
        batch.final_obs_u8.resize(batch.final_obs_u8.size() + 7);
        observation(&batch.final_obs.back(), batch.final_obs_u8.data() + batch.final_obs_u8.size() - 7);
      }
    }
    for (int32_t k = 0; k < 2; ++k) observation(&batch.bootstrap_obs[static_cast<size_t>(k)], &batch.bootstrap_obs_u8[static_cast<size_t>(k) * 7]);
  }
  return fragments;
}

}  // namespace

TEST_CASE("DQN learner: byte observations with masks stay bytes in replay, and a checkpoint with its replay continues bit for bit",
          "[learner][dqn]") {
  const auto data = board_fragments(4, 5);
  rlx::DqnConfig config = small_config();
  rlx::DqnLearner a(board_model(), config, 3);
  CHECK(a.buffer().obs_size() == 1);
  CHECK(a.buffer().obs_bytes() == 4 + 3);
  add_all(a, data);
  a.train(10, 150);
  // The sample holds the stored rows; the network read them flattened (4 grid + 3 one-hot level).
  CHECK(a.last_sample().obs_u8.size() == static_cast<size_t>(config.batch_size) * 7);
  CHECK(a.online().parameters()[0].size(1) == 4 + 3);
  std::stringstream archive;
  a.save(archive);
  const std::string replay = a.save_replay();

  rlx::DqnLearner b(board_model(), config, 77);
  b.load(archive);
  b.load_state_json(a.state_json());
  b.load_replay(replay);
  REQUIRE(b.buffer().size() == a.buffer().size());
  const rlx::DqnUpdateMetrics ma = a.train(10, 260);
  const rlx::DqnUpdateMetrics mb = b.train(10, 260);
  CHECK(ma.loss == mb.loss);
  CHECK(params(a.online()) == params(b.online()));
  CHECK(a.last_sample().next_obs_u8 == b.last_sample().next_obs_u8);

  // A fragment of float observations alone does not fit the model, and is refused.
  rlx::SampleBatch floats_only = data[0];
  floats_only.obs_byte_size = 0;
  floats_only.obs_u8.clear();
  floats_only.bootstrap_obs_u8.clear();
  floats_only.final_obs_u8.clear();
  CHECK_THROWS_AS(a.add(floats_only), std::invalid_argument);
}
