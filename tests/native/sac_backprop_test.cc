// SacBackprop's hand-written gradients against LibTorch's autograd on the same losses, weights,
// batch and normal draws: the critic loss's gradient in both critics, and the actor loss's in the
// policy (through the critics' input, tanh's squashing, the log-prob correction and the log-std
// clamp), for ReLU and tanh networks.
#include "tests/learner/torch_catch.h"

#include <cmath>
#include <string>
#include <vector>

#include "core/rng.h"
#include "models/network_layout.h"
#include "native/sac_backprop.h"

namespace rlx {
namespace {

constexpr int64_t kRows = 13;

torch::Tensor flat_tensor(const std::vector<float>& values, bool grad) {
  return torch::tensor(values, torch::dtype(torch::kFloat32)).clone().set_requires_grad(grad);
}

// The chain on x, reading its weights out of the flat tensor (so gradients land in it).
torch::Tensor run_chain(const LayerChain& chain, const torch::Tensor& flat, torch::Tensor x) {
  for (const LayerSpec& layer : chain) {
    const auto w = flat.narrow(0, static_cast<int64_t>(layer.weight_offset()), layer.out * layer.in).view({layer.out, layer.in});
    const auto b = flat.narrow(0, static_cast<int64_t>(layer.bias_offset()), layer.out);
    x = torch::addmm(b, x, w.t());
    if (layer.activation == Activation::kRelu) x = torch::relu(x);
    if (layer.activation == Activation::kTanh) x = torch::tanh(x);
  }
  return x;
}

struct TorchSample {
  torch::Tensor action, log_prob;
};

// a = tanh(mean + std z) and its log-prob with the stable correction, as the issue states it.
TorchSample torch_sample(const SquashedGaussianLayout& layout, const torch::Tensor& actor, const torch::Tensor& obs,
                         const torch::Tensor& noise) {
  const int64_t a = layout.action_size;
  const auto out = run_chain(layout.chain, actor, obs);
  const auto mean = out.slice(1, 0, a);
  const auto log_std = out.slice(1, a, 2 * a).clamp(kSacLogStdMin, kSacLogStdMax);
  const auto u = mean + log_std.exp() * noise;
  const auto correction = 2.0 * (std::log(2.0) - u - torch::softplus(-2.0 * u));
  const auto log_prob = (-0.5 * noise * noise - log_std - 0.5 * std::log(2.0 * M_PI) - correction).sum(1);
  return {torch::tanh(u), log_prob};
}

std::vector<float> normals(Rng& rng, size_t count, double scale) {
  std::vector<float> values(count);
  for (float& v : values) v = static_cast<float>(scale * rng.normal());
  return values;
}

std::vector<float> as_vector(const torch::Tensor& t) {
  const auto c = t.contiguous();
  return std::vector<float>(c.data_ptr<float>(), c.data_ptr<float>() + c.numel());
}

void check_close(const std::vector<float>& got, const std::vector<float>& expected, const std::string& what) {
  REQUIRE(got.size() == expected.size());
  double scale = 0.0, worst = 0.0;
  for (size_t i = 0; i < got.size(); ++i) {
    scale = std::max(scale, static_cast<double>(std::abs(expected[i])));
    worst = std::max(worst, static_cast<double>(std::abs(got[i] - expected[i])));
  }
  INFO(what << ": largest difference " << worst << " with gradients up to " << scale);
  CHECK(scale > 0.0);  // a zero gradient would compare equal to anything that is zero too
  CHECK(worst <= 1e-4 * (1.0 + scale));
}

void check_gradients(const std::string& activation) {
  ModelSpec config;
  config.obs_size = 3;
  config.action_space = Space::box({2}, -2.0f, 2.0f);
  config.hidden_sizes = {16, 8};
  config.activation = activation;
  const SquashedGaussianLayout actor_layout = squashed_gaussian_layout(config);
  const ContinuousQLayout critic_layout = continuous_q_layout(config);
  Rng rng(7);
  std::vector<float> actor = initial_parameters(actor_layout, 1);
  // Larger outputs than a fresh policy's, and the second action's log-std pushed past the clamp
  // on some rows (its bias 2: rows differ around it).
  for (const LayerSpec& layer : actor_layout.chain) {
    if (layer.name != "pi_out") continue;
    for (int64_t i = 0; i < layer.out * layer.in; ++i) actor[layer.weight_offset() + static_cast<size_t>(i)] *= 200.0f;
    actor[layer.bias_offset() + 3] = 2.0f;
  }
  std::vector<float> critics = initial_parameters(critic_layout, 2);
  const std::vector<float> second = initial_parameters(critic_layout, 3);
  critics.insert(critics.end(), second.begin(), second.end());
  std::vector<float> targets = critics;
  for (float& w : targets) w += static_cast<float>(0.05 * rng.normal());

  ContinuousSample batch;
  batch.rows = kRows;
  batch.obs = normals(rng, kRows * 3, 1.0);
  batch.next_obs = normals(rng, kRows * 3, 1.0);
  for (int64_t i = 0; i < kRows * 2; ++i) batch.actions.push_back(static_cast<float>(rng.uniform(-0.95, 0.95)));
  batch.rewards = normals(rng, kRows, 1.0);
  for (int64_t i = 0; i < kRows; ++i) batch.terminated.push_back(i % 4 == 0 ? 1.0f : 0.0f);
  const std::vector<float> next_noise = normals(rng, kRows * 2, 1.0), noise = normals(rng, kRows * 2, 1.0);
  const double alpha = 0.3, gamma = 0.97;

  SacBackprop backprop(actor_layout, critic_layout);
  std::vector<float> critic_grads(critics.size()), actor_grads(actor.size());
  SacStepStats stats;
  const double critic_loss = backprop.critic_gradients(actor.data(), critics.data(), targets.data(), alpha, gamma,
                                                       batch, next_noise.data(), critic_grads.data(), stats);
  const double actor_loss =
      backprop.actor_gradients(actor.data(), critics.data(), alpha, batch, noise.data(), actor_grads.data(), stats);

  // LibTorch: the same losses by autograd.
  const auto obs = torch::tensor(batch.obs).view({kRows, 3}), next_obs = torch::tensor(batch.next_obs).view({kRows, 3});
  const auto actions = torch::tensor(batch.actions).view({kRows, 2});
  const auto rewards = torch::tensor(batch.rewards), terminated = torch::tensor(batch.terminated);
  const auto q_size = static_cast<int64_t>(critic_layout.num_parameters);
  auto actor_t = flat_tensor(actor, true), critics_t = flat_tensor(critics, true), targets_t = flat_tensor(targets, false);
  torch::Tensor y;
  {
    torch::NoGradGuard no_grad;
    const TorchSample next = torch_sample(actor_layout, actor_t, next_obs, torch::tensor(next_noise).view({kRows, 2}));
    const auto input = torch::cat({next_obs, next.action}, 1);
    const auto q1 = run_chain(critic_layout.chain, targets_t.narrow(0, 0, q_size), input).squeeze(1);
    const auto q2 = run_chain(critic_layout.chain, targets_t.narrow(0, q_size, q_size), input).squeeze(1);
    y = rewards + gamma * (1 - terminated) * (torch::min(q1, q2) - alpha * next.log_prob);
  }
  const auto input = torch::cat({obs, actions}, 1);
  const auto q1 = run_chain(critic_layout.chain, critics_t.narrow(0, 0, q_size), input).squeeze(1);
  const auto q2 = run_chain(critic_layout.chain, critics_t.narrow(0, q_size, q_size), input).squeeze(1);
  const auto torch_critic_loss = 0.5 * (q1 - y).pow(2).mean() + 0.5 * (q2 - y).pow(2).mean();
  torch_critic_loss.backward();
  CHECK(critic_loss == Approx(torch_critic_loss.item<double>()).epsilon(1e-4));
  check_close(critic_grads, as_vector(critics_t.grad()), "critic gradients (" + activation + ")");

  const auto frozen = critics_t.detach();
  const TorchSample now = torch_sample(actor_layout, actor_t, obs, torch::tensor(noise).view({kRows, 2}));
  const auto pi_input = torch::cat({obs, now.action}, 1);
  const auto pq1 = run_chain(critic_layout.chain, frozen.narrow(0, 0, q_size), pi_input).squeeze(1);
  const auto pq2 = run_chain(critic_layout.chain, frozen.narrow(0, q_size, q_size), pi_input).squeeze(1);
  const auto torch_actor_loss = (alpha * now.log_prob - torch::min(pq1, pq2)).mean();
  torch_actor_loss.backward();
  CHECK(actor_loss == Approx(torch_actor_loss.item<double>()).epsilon(1e-4));
  CHECK(stats.log_prob_mean == Approx(now.log_prob.mean().item<double>()).epsilon(1e-4));
  check_close(actor_grads, as_vector(actor_t.grad()), "actor gradients (" + activation + ")");

  // The clamp was exercised: some but not all rows' second log-std lie above 2.
  const auto raw = run_chain(actor_layout.chain, actor_t.detach(), obs).slice(1, 3, 4);
  const int64_t clamped = (raw > kSacLogStdMax).sum().item<int64_t>();
  CHECK(clamped > 0);
  CHECK(clamped < kRows);
}

}  // namespace

TEST_CASE("SAC's hand-written gradients match LibTorch autograd (ReLU networks)", "[native][sac]") {
  check_gradients("relu");
}

TEST_CASE("SAC's hand-written gradients match LibTorch autograd (tanh networks)", "[native][sac]") {
  check_gradients("tanh");
}

}  // namespace rlx
