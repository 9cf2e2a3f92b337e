#include "tests/learner/torch_catch.h"

#include <cmath>

#include "learner/policy_networks.h"

namespace {

constexpr double kHalfLog2Pi = 0.91893853320467274178;

}  // namespace

TEST_CASE("Categorical log_prob and entropy match hand-computed values", "[learner][distribution]") {
  const auto d = rlx::ActionDistribution::categorical(torch::tensor({{1.0f, 2.0f, 3.0f}, {0.0f, 0.0f, 0.0f}}));
  REQUIRE(d.discrete());
  const double lse = std::log(std::exp(1.0) + std::exp(2.0) + std::exp(3.0));
  const torch::Tensor lp = d.log_prob(torch::tensor({2, 1}));
  CHECK(lp[0].item<double>() == Approx(3.0 - lse));
  CHECK(lp[1].item<double>() == Approx(-std::log(3.0)));
  CHECK(d.log_prob(torch::tensor({0, 0}, torch::kInt))[0].item<double>() == Approx(1.0 - lse));

  double h0 = 0.0;
  for (double logit : {1.0, 2.0, 3.0}) h0 -= std::exp(logit - lse) * (logit - lse);
  const torch::Tensor h = d.entropy();
  CHECK(h[0].item<double>() == Approx(h0));
  CHECK(h[1].item<double>() == Approx(std::log(3.0)));
  CHECK(d.deterministic()[0].item<int64_t>() == 2);
}

TEST_CASE("Diagonal Gaussian log_prob and entropy match hand-computed values", "[learner][distribution]") {
  // mean (0, 1), std (1, 2), action (1, 0): z = (1, -0.5).
  const auto d = rlx::ActionDistribution::diagonal_gaussian(torch::tensor({{0.0f, 1.0f}}),
                                                            torch::tensor({0.0f, static_cast<float>(std::log(2.0))}));
  REQUIRE_FALSE(d.discrete());
  const double expected = (-0.5 * 1.0 - 0.0 - kHalfLog2Pi) + (-0.5 * 0.25 - std::log(2.0) - kHalfLog2Pi);
  CHECK(d.log_prob(torch::tensor({{1.0f, 0.0f}}))[0].item<double>() == Approx(expected));
  CHECK(d.entropy()[0].item<double>() == Approx(2 * (0.5 + kHalfLog2Pi) + std::log(2.0)));
  CHECK(d.deterministic()[0][1].item<float>() == 1.0f);
}

TEST_CASE("Sampling is reproducible under a generator and follows the distribution", "[learner][distribution]") {
  const torch::Tensor logits = torch::log(torch::tensor({0.1f, 0.2f, 0.7f})).repeat({20000, 1});
  const auto categorical = rlx::ActionDistribution::categorical(logits);
  const torch::Tensor a = categorical.sample(rlx::make_cpu_generator(7));
  const torch::Tensor b = categorical.sample(rlx::make_cpu_generator(7));
  CHECK(a.dtype() == torch::kLong);
  CHECK(torch::equal(a, b));
  CHECK((a == 2).to(torch::kDouble).mean().item<double>() == Approx(0.7).margin(0.02));
  CHECK((a == 0).to(torch::kDouble).mean().item<double>() == Approx(0.1).margin(0.02));

  const torch::Tensor mean = torch::tensor({{1.0f, -2.0f}}).repeat({20000, 1});
  const auto gaussian = rlx::ActionDistribution::diagonal_gaussian(mean, torch::tensor({0.0f, std::log(0.5f)}));
  const torch::Tensor x = gaussian.sample(rlx::make_cpu_generator(9));
  CHECK(torch::equal(x, gaussian.sample(rlx::make_cpu_generator(9))));
  CHECK(x.mean(0)[0].item<double>() == Approx(1.0).margin(0.05));
  CHECK(x.std(0)[1].item<double>() == Approx(0.5).margin(0.02));

  // Without a generator, torch::manual_seed fixes the stream.
  torch::manual_seed(11);
  const torch::Tensor g1 = gaussian.sample();
  torch::manual_seed(11);
  CHECK(torch::equal(g1, gaussian.sample()));
}

TEST_CASE("ActorCritic builds its distribution, and gradients reach log_std", "[learner][distribution]") {
  rlx::ModelSpec config;
  config.obs_size = 3;
  config.action_space = rlx::Space::box({2}, -1.0f, 1.0f);
  config.hidden_sizes = {8};
  rlx::ActorCritic model(config);
  const torch::Tensor obs = torch::randn({4, 3});
  const auto d = model.distribution(model.policy_forward(obs));
  const torch::Tensor actions = d.sample(rlx::make_cpu_generator(1));
  CHECK(actions.sizes() == torch::IntArrayRef({4, 2}));
  const torch::Tensor loss = -(d.log_prob(actions).mean() + d.entropy().mean());
  loss.backward();
  REQUIRE(model.log_std().grad().defined());
  CHECK(model.log_std().grad().abs().sum().item<float>() > 0.0f);
}

TEST_CASE("normalize_observations centres, scales and clips", "[learner][distribution]") {
  const torch::Tensor obs = torch::tensor({{1.0f, 100.0f}, {3.0f, -100.0f}});
  const torch::Tensor out = rlx::normalize_observations(obs, torch::tensor({2.0f, 0.0f}), torch::tensor({4.0f, 1.0f}));
  CHECK(out[0][0].item<float>() == Approx(-0.5));
  CHECK(out[1][0].item<float>() == Approx(0.5));
  CHECK(out[0][1].item<float>() == 10.0f);
  CHECK(out[1][1].item<float>() == -10.0f);
}

TEST_CASE("KL divergence between categorical and between diagonal Gaussian distributions", "[learner][distribution]") {
  // Categorical: p = softmax(1, 2, 3), q = uniform: KL(p || q) = sum p (log p - log 1/3).
  const auto p = rlx::ActionDistribution::categorical(torch::tensor({{1.0f, 2.0f, 3.0f}}));
  const auto q = rlx::ActionDistribution::categorical(torch::tensor({{0.0f, 0.0f, 0.0f}}));
  const double lse = std::log(std::exp(1.0) + std::exp(2.0) + std::exp(3.0));
  double expected = 0.0;
  for (double logit : {1.0, 2.0, 3.0}) expected += std::exp(logit - lse) * ((logit - lse) + std::log(3.0));
  CHECK(p.kl_divergence_to(q)[0].item<double>() == Approx(expected));
  CHECK(p.kl_divergence_to(p)[0].item<double>() == Approx(0.0).margin(1e-7));

  // Gaussian, per dimension: log(s_q / s_p) + (s_p^2 + (m_p - m_q)^2) / (2 s_q^2) - 1/2.
  // p: mean (0, 1), std (1, 2); q: mean (1, 1), std (2, 1).
  const auto g = rlx::ActionDistribution::diagonal_gaussian(torch::tensor({{0.0f, 1.0f}}),
                                                            torch::tensor({0.0f, static_cast<float>(std::log(2.0))}));
  const auto h = rlx::ActionDistribution::diagonal_gaussian(torch::tensor({{1.0f, 1.0f}}),
                                                            torch::tensor({static_cast<float>(std::log(2.0)), 0.0f}));
  const double d0 = std::log(2.0) + (1.0 + 1.0) / (2.0 * 4.0) - 0.5;
  const double d1 = std::log(0.5) + (4.0 + 0.0) / 2.0 - 0.5;
  CHECK(g.kl_divergence_to(h)[0].item<double>() == Approx(d0 + d1));
  CHECK(g.kl_divergence_to(g)[0].item<double>() == Approx(0.0).margin(1e-7));
  CHECK_THROWS_AS(p.kl_divergence_to(g), std::invalid_argument);
}

TEST_CASE("A masked categorical gives a masked action no probability, no entropy and no gradient",
          "[learner][distribution][mask]") {
  const torch::Tensor logits = torch::tensor({{1.0f, 2.5f, 3.0f, 0.5f}}).set_requires_grad(true);
  const torch::Tensor mask = torch::tensor({{1, 0, 1, 1}}, torch::kByte);
  const auto d = rlx::ActionDistribution::categorical(logits, {}, mask);
  const double lse = std::log(std::exp(1.0) + std::exp(3.0) + std::exp(0.5));
  CHECK(d.log_prob(torch::tensor({0}))[0].item<double>() == Approx(1.0 - lse));
  CHECK(d.log_prob(torch::tensor({1})).exp()[0].item<double>() == 0.0);
  double h = 0.0;
  for (double logit : {1.0, 3.0, 0.5}) h -= std::exp(logit - lse) * (logit - lse);
  CHECK(d.entropy()[0].item<double>() == Approx(h));
  CHECK(std::isfinite(d.entropy()[0].item<double>()));
  CHECK(d.deterministic()[0].item<int64_t>() == 2);  // the largest logit (2.5) is masked

  // Gradients of the entropy and of every action's log-prob, the masked one's included.
  (d.entropy().sum() + d.log_prob(torch::tensor({1})).sum() + d.log_prob(torch::tensor({3})).sum()).backward();
  const torch::Tensor grad = logits.grad();
  CHECK(grad[0][1].item<float>() == 0.0f);
  CHECK(grad[0][0].item<float>() != 0.0f);
  CHECK(grad[0][3].item<float>() != 0.0f);
  for (int draw = 0; draw < 5; ++draw) CHECK(d.sample(rlx::make_cpu_generator(draw))[0].item<int64_t>() != 1);
}

TEST_CASE("A MultiDiscrete categorical sums its segments' log-probs, entropies and KLs", "[learner][distribution]") {
  const torch::Tensor logits = torch::tensor({{0.2f, -1.0f, 1.5f, 0.3f, 0.9f}, {0.0f, 0.0f, 0.0f, 2.0f, -2.0f}});
  const torch::Tensor other_logits = torch::tensor({{1.0f, 0.0f, -1.0f, 0.0f, 0.0f}, {0.5f, 0.5f, 0.0f, 0.0f, 1.0f}});
  const auto d = rlx::ActionDistribution::categorical(logits, {3, 2});
  const auto other = rlx::ActionDistribution::categorical(other_logits, {3, 2});
  const auto first = rlx::ActionDistribution::categorical(logits.narrow(1, 0, 3));
  const auto second = rlx::ActionDistribution::categorical(logits.narrow(1, 3, 2));
  const torch::Tensor actions = torch::tensor({{2, 1}, {0, 0}});
  const torch::Tensor expected = first.log_prob(actions.select(1, 0)) + second.log_prob(actions.select(1, 1));
  CHECK(torch::allclose(d.log_prob(actions), expected));
  CHECK(torch::allclose(d.entropy(), first.entropy() + second.entropy()));
  const torch::Tensor each = d.segment_entropies();
  CHECK(torch::allclose(each.narrow(1, 0, 3), first.entropy().unsqueeze(1).expand({2, 3})));
  CHECK(torch::allclose(each.narrow(1, 3, 2), second.entropy().unsqueeze(1).expand({2, 2})));
  const auto other_first = rlx::ActionDistribution::categorical(other_logits.narrow(1, 0, 3));
  const auto other_second = rlx::ActionDistribution::categorical(other_logits.narrow(1, 3, 2));
  CHECK(torch::allclose(d.kl_divergence_to(other),
                        first.kl_divergence_to(other_first) + second.kl_divergence_to(other_second)));
  CHECK(torch::equal(d.deterministic(), torch::tensor({{2, 1}, {0, 0}})));
  const torch::Tensor drawn = d.sample(rlx::make_cpu_generator(3));
  CHECK(drawn.sizes().vec() == std::vector<int64_t>{2, 2});
  CHECK(drawn.select(1, 1).max().item<int64_t>() <= 1);
  CHECK_THROWS_AS(rlx::ActionDistribution::categorical(logits, {3, 3}), std::invalid_argument);
  CHECK_THROWS_AS(d.kl_divergence_to(rlx::ActionDistribution::categorical(other_logits, {2, 3})), std::invalid_argument);
}
