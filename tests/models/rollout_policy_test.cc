// RolloutPolicy against the learner's LibTorch networks ("twins" loaded with the same flat
// weights): the worker side runs the torch-free kernel, so these pin it to the learner's maths.
#include "tests/learner/torch_catch.h"

#include <cmath>
#include <vector>

#include "core/rng.h"
#include "learner/policy_networks.h"
#include "models/rollout_policy.h"

namespace {

rlx::ModelSpec make_config(rlx::Space action_space, int64_t obs = 3) {
  rlx::ModelSpec config;
  config.obs_size = obs;
  config.action_space = std::move(action_space);
  config.hidden_sizes = {16, 16};
  return config;
}

std::vector<float> random_obs(int64_t count, uint64_t seed, double scale = 1.0) {
  rlx::Rng rng(seed);
  std::vector<float> obs(static_cast<size_t>(count));
  for (float& v : obs) v = static_cast<float>(scale * rng.normal());
  return obs;
}

torch::Tensor as_tensor(const std::vector<float>& v, int64_t rows) {
  return torch::tensor(v).view({rows, -1});
}

// Flat weights with every parameter zero except the named one, set to values.
std::vector<float> weights_with(const torch::nn::Module& model, const std::string& name, const std::vector<float>& values) {
  std::vector<float> flat(static_cast<size_t>(rlx::num_flat_parameters(model)), 0.0f);
  size_t offset = 0;
  for (const auto& item : model.named_parameters()) {
    if (item.key() == name) {
      REQUIRE(values.size() == static_cast<size_t>(item.value().numel()));
      std::copy(values.begin(), values.end(), flat.begin() + static_cast<long>(offset));
    }
    offset += static_cast<size_t>(item.value().numel());
  }
  return flat;
}

}  // namespace

TEST_CASE("ActorCriticPolicy reports the model's log-probs and values", "[rollout][policy]") {
  const int k = 6;
  struct Variant {
    bool discrete;
    bool shared;
    std::vector<int64_t> hidden;
    const char* activation;
  };
  // act() runs fused weights; every layout must agree with the model's own forward.
  for (const Variant& variant : {Variant{true, false, {16, 16}, "tanh"}, Variant{false, false, {16, 16}, "tanh"},
                                 Variant{true, true, {16, 8}, "relu"}, Variant{false, true, {16}, "tanh"},
                                 Variant{false, false, {}, "tanh"}, Variant{true, false, {8, 8, 8}, "relu"}}) {
    const bool discrete = variant.discrete;
    CAPTURE(discrete, variant.shared, variant.hidden.size(), variant.activation);
    rlx::ModelSpec config = make_config(discrete ? rlx::Space::discrete(3) : rlx::Space::box({2}, -1.0f, 1.0f));
    config.shared_trunk = variant.shared;
    config.hidden_sizes = variant.hidden;
    config.activation = variant.activation;
    config.log_std_init = -0.3;
    rlx::ActorCriticPolicy policy(config, 5);
    // Larger weights than the init so the policy is far from uniform.
    std::vector<float> weights = random_obs(static_cast<int64_t>(policy.num_parameters()), 2, 0.5);
    policy.load_weights(weights.data(), weights.size(), 42);
    CHECK(policy.version() == 42);
    CHECK(policy.weights() == weights);

    const std::vector<float> obs = random_obs(k * 3, 3);
    std::vector<int64_t> indices(k);
    std::vector<float> values(k * 2), log_probs(k), v(k);
    rlx::ActOutput out{indices.data(), values.data(), log_probs.data(), v.data()};
    policy.act(obs.data(), k, out);

    torch::NoGradGuard no_grad;
    rlx::ActorCritic twin(config);
    twin.load_flat_parameters(weights.data(), weights.size());
    const rlx::PolicyOutput ref = twin.forward(as_tensor(obs, k));
    const auto dist = twin.distribution(ref.policy);
    const torch::Tensor actions = discrete ? torch::tensor(indices) : as_tensor(values, k);
    const torch::Tensor ref_lp = dist.log_prob(actions);
    for (int i = 0; i < k; ++i) {
      CHECK(log_probs[i] == Approx(ref_lp[i].item<float>()).margin(1e-5));
      CHECK(v[i] == Approx(ref.value[i].item<float>()).margin(1e-6));
      if (discrete) CHECK((indices[i] >= 0 && indices[i] < 3));
    }

    policy.set_deterministic(true);
    policy.act(obs.data(), k, out);
    const torch::Tensor best = dist.deterministic();
    for (int i = 0; i < k; ++i) {
      if (discrete) {
        CHECK(indices[i] == best[i].item<int64_t>());
      } else {
        CHECK(values[2 * i] == Approx(best[i][0].item<float>()));
        CHECK(values[2 * i + 1] == Approx(best[i][1].item<float>()));
      }
    }

    CHECK_THROWS_AS(policy.load_weights(weights.data(), weights.size() - 1, 43), std::invalid_argument);
    CHECK(policy.version() == 42);
    CHECK_THROWS_AS(policy.act(obs.data(), 0, out), std::invalid_argument);
    CHECK_THROWS_AS(policy.act(obs.data(), k, rlx::ActOutput{}), std::invalid_argument);
  }
}

TEST_CASE("ActorCriticPolicy samples with the model's probabilities", "[rollout][policy]") {
  const int k = 500;
  const std::vector<float> obs = random_obs(k * 3, 1);
  std::vector<float> log_probs(k), v(k);

  rlx::ActorCriticPolicy categorical(make_config(rlx::Space::discrete(2)), 9);
  // All weights zero, policy bias log(0.2), log(0.8): every state has p = (0.2, 0.8).
  const auto w = weights_with(rlx::ActorCritic(make_config(rlx::Space::discrete(2))), "pi_out.bias",
                              {std::log(0.2f), std::log(0.8f)});
  categorical.load_weights(w.data(), w.size(), 1);
  std::vector<int64_t> indices(k);
  int64_t ones = 0;
  for (int round = 0; round < 40; ++round) {
    categorical.act(obs.data(), k, {indices.data(), nullptr, log_probs.data(), v.data()});
    for (int64_t a : indices) ones += a;
  }
  CHECK(ones / (40.0 * k) == Approx(0.8).margin(0.01));
  CHECK(log_probs[0] == Approx(indices[0] ? std::log(0.8) : std::log(0.2)).margin(1e-6));

  rlx::ActorCriticPolicy gaussian(make_config(rlx::Space::box({1}, -1.0f, 1.0f)), 9);
  auto gw = weights_with(rlx::ActorCritic(make_config(rlx::Space::box({1}, -1.0f, 1.0f))), "pi_out.bias", {0.5f});
  gw[0] = std::log(0.3f);  // log_std comes first
  gaussian.load_weights(gw.data(), gw.size(), 1);
  std::vector<float> actions(k);
  double sum = 0.0, sum_sq = 0.0;
  for (int round = 0; round < 40; ++round) {
    gaussian.act(obs.data(), k, {nullptr, actions.data(), log_probs.data(), v.data()});
    for (float a : actions) {
      sum += a;
      sum_sq += a * a;
    }
  }
  const double n = 40.0 * k, mean = sum / n;
  CHECK(mean == Approx(0.5).margin(0.01));
  CHECK(std::sqrt(sum_sq / n - mean * mean) == Approx(0.3).margin(0.01));
}

TEST_CASE("Same seed and weights give the same actions", "[rollout][policy]") {
  const rlx::ModelSpec config = make_config(rlx::Space::box({2}, -1.0f, 1.0f));
  rlx::ActorCriticPolicy a(config, 17), b(config, 17), c(config, 18);
  const std::vector<float> w = a.weights();
  b.load_weights(w.data(), w.size(), 0);
  c.load_weights(w.data(), w.size(), 0);
  const std::vector<float> obs = random_obs(12, 4);
  std::vector<float> xa(8), xb(8), xc(8), lp(4), v(4);
  a.act(obs.data(), 4, {nullptr, xa.data(), lp.data(), v.data()});
  b.act(obs.data(), 4, {nullptr, xb.data(), lp.data(), v.data()});
  c.act(obs.data(), 4, {nullptr, xc.data(), lp.data(), v.data()});
  CHECK(xa == xb);
  CHECK(xa != xc);
}

TEST_CASE("Observation normalisation applies clip((obs - mean) / sqrt(var + eps))", "[rollout][policy]") {
  const int k = 4;
  rlx::ActorCriticPolicy policy(make_config(rlx::Space::discrete(2)), 1);
  rlx::ActorCritic twin(make_config(rlx::Space::discrete(2)));
  const std::vector<float> w = policy.weights();
  twin.load_flat_parameters(w.data(), w.size());
  const std::vector<float> mean = {1.0f, -2.0f, 0.5f}, var = {4.0f, 0.25f, 1e-6f};
  policy.set_obs_normalizer(mean, var, 1000.0);
  CHECK(policy.obs_normalizer().count() == 1000.0);
  const std::vector<float> obs = random_obs(k * 3, 6, 3.0);  // large spread: the third column clips
  std::vector<int64_t> indices(k);
  std::vector<float> lp(k), v(k), v_raw(k);
  policy.act(obs.data(), k, {indices.data(), nullptr, lp.data(), v.data()});

  torch::NoGradGuard no_grad;
  const torch::Tensor normalized = rlx::normalize_observations(as_tensor(obs, k), torch::tensor(mean), torch::tensor(var));
  CHECK(normalized.abs().max().item<float>() == 10.0f);
  const torch::Tensor ref = twin.value_forward(normalized);
  for (int i = 0; i < k; ++i) CHECK(v[i] == Approx(ref[i].item<float>()).margin(1e-6));

  std::vector<float> direct(obs.size());
  policy.obs_normalizer().apply(obs.data(), k, direct.data());
  for (size_t i = 0; i < direct.size(); ++i) CHECK(direct[i] == Approx(normalized.view({-1})[static_cast<int64_t>(i)].item<float>()));

  policy.clear_obs_normalizer();
  policy.act(obs.data(), k, {indices.data(), nullptr, lp.data(), v_raw.data()});
  const torch::Tensor raw = twin.value_forward(as_tensor(obs, k));
  CHECK(v_raw[0] == Approx(raw[0].item<float>()).margin(1e-6));

  CHECK_THROWS_AS(policy.set_obs_normalizer({0.0f}, {1.0f}, 1.0), std::invalid_argument);
  CHECK_THROWS_AS(policy.set_obs_normalizer(mean, {1.0f, -1.0f, 1.0f}, 1.0), std::invalid_argument);
}

TEST_CASE("EpsilonGreedyQPolicy explores uniformly at 1 and is greedy at 0", "[rollout][policy]") {
  const int k = 400;
  rlx::ModelSpec config = make_config(rlx::Space::discrete(4));
  config.dueling = true;
  rlx::EpsilonGreedyQPolicy policy(config, 1.0, 3);
  CHECK_FALSE(policy.has_policy_outputs());
  const std::vector<float> obs = random_obs(k * 3, 8);
  std::vector<int64_t> indices(k);
  std::vector<int64_t> counts(4, 0);
  for (int round = 0; round < 25; ++round) {
    policy.act(obs.data(), k, {indices.data(), nullptr, nullptr, nullptr});
    for (int64_t a : indices) ++counts[static_cast<size_t>(a)];
  }
  for (int64_t c : counts) CHECK(c / (25.0 * k) == Approx(0.25).margin(0.015));

  policy.set_epsilon(0.0);
  policy.act(obs.data(), k, {indices.data(), nullptr, nullptr, nullptr});
  torch::NoGradGuard no_grad;
  rlx::QNetwork twin(config);
  const std::vector<float> q_weights = policy.weights();
  twin.load_flat_parameters(q_weights.data(), q_weights.size());
  const torch::Tensor greedy = twin.forward(as_tensor(obs, k)).argmax(1);
  for (int i = 0; i < k; ++i) CHECK(indices[i] == greedy[i].item<int64_t>());

  CHECK_THROWS_AS(policy.set_epsilon(1.5), std::invalid_argument);
  CHECK_THROWS_AS(rlx::EpsilonGreedyQPolicy(config, -0.1, 1), std::invalid_argument);
  CHECK_THROWS_AS(rlx::EpsilonGreedyQPolicy(make_config(rlx::Space::box({1}, -1.0f, 1.0f)), 0.1, 1),
                  std::invalid_argument);
  const std::vector<float> w = policy.weights();
  policy.load_weights(w.data(), w.size(), 7);
  CHECK(policy.version() == 7);
}

TEST_CASE("Ape-X per-worker epsilons", "[rollout][policy]") {
  CHECK(rlx::apex_worker_epsilon(0, 1) == Approx(0.4));
  CHECK(rlx::apex_worker_epsilon(0, 8) == Approx(0.4));
  CHECK(rlx::apex_worker_epsilon(7, 8) == Approx(std::pow(0.4, 8.0)));
  CHECK_THROWS_AS(rlx::apex_worker_epsilon(8, 8), std::invalid_argument);
}
