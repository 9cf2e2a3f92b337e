// gSDE (ModelSpec::sde) on the worker against the learner's LibTorch twin: the same log-probs,
// noise held for sde_sample_freq steps and redrawn at each fragment's start, the action's
// spread the learner's sigma, and no gradient from the std into the latent features.
#include "tests/learner/torch_catch.h"

#include <cmath>
#include <vector>

#include "core/rng.h"
#include "learner/policy_networks.h"
#include "models/model_spec_json.h"
#include "models/network_layout.h"
#include "models/rollout_policy.h"

namespace {

rlx::ModelSpec sde_config(int64_t sample_freq) {
  rlx::ModelSpec config;
  config.obs_size = 3;
  config.action_space = rlx::Space::box({2}, -1.0f, 1.0f);
  config.hidden_sizes = {16, 8};
  config.sde = true;
  config.sde_sample_freq = sample_freq;
  config.log_std_init = -0.5;
  return config;
}

std::vector<float> normals(int64_t count, uint64_t seed, double scale = 1.0) {
  rlx::Rng rng(seed);
  std::vector<float> values(static_cast<size_t>(count));
  for (float& v : values) v = static_cast<float>(scale * rng.normal());
  return values;
}

// Acts once for k envs; returns the actions [k, 2] (log-probs into log_probs when given).
std::vector<float> act(rlx::ActorCriticPolicy& policy, const std::vector<float>& obs, int k,
                       std::vector<float>* log_probs = nullptr) {
  std::vector<float> actions(static_cast<size_t>(2 * k)), lp(static_cast<size_t>(k)), v(static_cast<size_t>(k));
  policy.act(obs.data(), k, rlx::ActOutput{nullptr, actions.data(), lp.data(), v.data()});
  if (log_probs != nullptr) *log_probs = lp;
  return actions;
}

}  // namespace

TEST_CASE("gSDE's log-std is [latent, A] and its spec round-trips", "[rollout][policy][sde]") {
  rlx::ModelSpec config = sde_config(4);
  CHECK(rlx::actor_critic_layout(config).log_std->shape == std::vector<int64_t>{8, 2});
  config.head_sizes = {5};
  const rlx::ActorCriticLayout layout = rlx::actor_critic_layout(config);
  CHECK(layout.latent_size == 5);
  CHECK(layout.log_std->shape == std::vector<int64_t>{5, 2});
  CHECK(layout.log_std->offset == 0);
  CHECK(rlx::model_spec_from_json(rlx::model_spec_to_json(config), "model") == config);
  rlx::ModelSpec other = config;
  other.sde_sample_freq = 8;
  CHECK(other != config);
  other.sde = false;
  CHECK(!rlx::model_spec_to_json(other).at("heads").contains("sde"));
  config.action_space = rlx::Space::discrete(3);
  CHECK_THROWS_WITH(config.validate(), Catch::Contains("use_sde") && Catch::Contains("Box"));
}

TEST_CASE("gSDE: the worker's log-probs are the learner's, and its noise is held, then redrawn", "[rollout][policy][sde]") {
  const int k = 5;
  for (const bool shared : {false, true}) {
    CAPTURE(shared);
    rlx::ModelSpec config = sde_config(4);
    config.shared_trunk = shared;
    if (shared) config.head_sizes = {6};
    rlx::ActorCriticPolicy policy(config, 7);
    const std::vector<float> weights = normals(static_cast<int64_t>(policy.num_parameters()), 3, 0.4);
    policy.load_weights(weights.data(), weights.size(), 1);
    const std::vector<float> obs = normals(k * 3, 4);

    policy.begin_fragment();
    std::vector<float> log_probs;
    const std::vector<float> first = act(policy, obs, k, &log_probs);
    torch::NoGradGuard no_grad;
    rlx::ActorCritic twin(config);
    twin.load_flat_parameters(weights.data(), weights.size());
    const rlx::PolicyOutput ref = twin.forward(torch::tensor(obs).view({k, 3}));
    const rlx::ActionDistribution dist = twin.distribution(ref.policy);
    const torch::Tensor ref_lp = dist.log_prob(torch::tensor(first).view({k, 2}));
    for (int i = 0; i < k; ++i) CHECK(log_probs[static_cast<size_t>(i)] == Approx(ref_lp[i].item<float>()).margin(1e-4));

    // The same observations under the same matrices give the same actions until step 4.
    CHECK(act(policy, obs, k) == first);
    CHECK(act(policy, obs, k) == first);
    CHECK(act(policy, obs, k) == first);
    const std::vector<float> fifth = act(policy, obs, k);
    CHECK(fifth != first);
    CHECK(act(policy, obs, k) == fifth);
    policy.begin_fragment();
    CHECK(act(policy, obs, k) != fifth);

    policy.set_deterministic(true);
    const std::vector<float> greedy = act(policy, obs, k);
    const torch::Tensor mean = dist.deterministic();
    for (int i = 0; i < k; ++i) {
      CHECK(greedy[static_cast<size_t>(2 * i)] == Approx(mean[i][0].item<float>()).margin(1e-5));
      CHECK(greedy[static_cast<size_t>(2 * i + 1)] == Approx(mean[i][1].item<float>()).margin(1e-5));
    }
  }
}

TEST_CASE("gSDE's actions spread as the learner's sigma, over the matrices' draws", "[rollout][policy][sde]") {
  const rlx::ModelSpec config = sde_config(-1);
  rlx::ActorCriticPolicy policy(config, 11);
  const std::vector<float> weights = normals(static_cast<int64_t>(policy.num_parameters()), 5, 0.4);
  policy.load_weights(weights.data(), weights.size(), 1);
  const std::vector<float> obs = normals(3, 6);
  const int draws = 4000;
  double sum[2] = {0, 0}, squares[2] = {0, 0};
  for (int d = 0; d < draws; ++d) {
    policy.begin_fragment();  // sample_freq -1: a new matrix at each fragment's start only
    const std::vector<float> a = act(policy, obs, 1);
    CHECK(act(policy, obs, 1) == a);
    for (int j = 0; j < 2; ++j) {
      sum[j] += a[static_cast<size_t>(j)];
      squares[j] += static_cast<double>(a[static_cast<size_t>(j)]) * a[static_cast<size_t>(j)];
    }
  }
  torch::NoGradGuard no_grad;
  rlx::ActorCritic twin(config);
  twin.load_flat_parameters(weights.data(), weights.size());
  const rlx::ActionDistribution dist = twin.distribution(twin.forward(torch::tensor(obs).view({1, 3})).policy);
  // The learner's sigma per element: log p(mean + d e_j) - log p(mean) = -(d / sigma_j)^2 / 2.
  const torch::Tensor mean = dist.deterministic();
  const double at_mean = dist.log_prob(mean).item<double>();
  for (int j = 0; j < 2; ++j) {
    torch::Tensor probe = mean.clone();
    probe[0][j] += 0.1f;
    const double sigma = 0.1 / std::sqrt(-2.0 * (dist.log_prob(probe).item<double>() - at_mean));
    const double m = sum[j] / draws, sd = std::sqrt(squares[j] / draws - m * m);
    CAPTURE(j, m, sd, sigma);
    CHECK(m == Approx(mean[0][j].item<double>()).margin(4.0 * sigma / std::sqrt(draws)));
    CHECK(sd == Approx(sigma).epsilon(0.06));  // 4000 draws: the sample sd within ~2.2% (2 sd: 4.5%)
  }
}

TEST_CASE("gSDE trains its log-std, and its std passes no gradient into the latent", "[learner][policy][sde]") {
  const rlx::ModelSpec config = sde_config(4);
  rlx::ActorCritic model(config);
  const torch::Tensor obs = torch::tensor(normals(12, 8)).view({4, 3});
  const rlx::ActionDistribution dist = model.distribution(model.forward(obs).policy);
  dist.entropy().sum().backward();  // depends on the std alone
  for (const auto& item : model.named_parameters()) {
    CAPTURE(item.key());
    const torch::Tensor grad = item.value().grad();
    if (item.key() == "log_std") {
      REQUIRE(grad.defined());
      CHECK(grad.abs().sum().item<double>() > 0.0);
    } else {
      CHECK((!grad.defined() || grad.abs().sum().item<double>() == 0.0));
    }
  }
}
