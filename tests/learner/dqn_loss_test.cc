#include "tests/learner/torch_catch.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "learner/dqn_loss.h"
#include "learner/policy_networks.h"
#include "models/action_sampling.h"

namespace {

// A linear Q model (no hidden layers): Q(s) = W s + b with W [3, 2], b [3].
std::shared_ptr<rlx::QNetwork> linear_q(const std::vector<float>& w, const std::vector<float>& b) {
  rlx::ModelSpec config;
  config.obs_size = 2;
  config.action_space = rlx::Space::discrete(3);
  config.hidden_sizes = {};
  auto net = std::make_shared<rlx::QNetwork>(config);
  std::vector<float> flat = w;
  flat.insert(flat.end(), b.begin(), b.end());
  net->load_flat_parameters(flat.data(), flat.size());
  return net;
}

std::vector<double> q_by_hand(const std::vector<float>& w, const std::vector<float>& b, const float* s) {
  std::vector<double> q(3);
  for (size_t a = 0; a < 3; ++a) q[a] = w[2 * a] * s[0] + w[2 * a + 1] * s[1] + b[a];
  return q;
}

double huber(double x, double delta) { return std::abs(x) < delta ? 0.5 * x * x : delta * (std::abs(x) - 0.5 * delta); }

torch::Tensor floats(std::vector<float> values, std::vector<int64_t> shape) {
  return torch::tensor(values, torch::kFloat).view(shape);
}

struct Case {
  std::vector<float> w_online = {1.0f, 0.0f, 0.0f, 1.0f, 0.5f, 1.5f};
  std::vector<float> b_online = {0.0f, 0.1f, -0.2f};
  std::vector<float> w_target = {0.3f, -0.4f, 2.0f, 0.1f, -1.0f, 0.7f};
  std::vector<float> b_target = {0.05f, -0.3f, 0.2f};
  std::vector<float> obs = {0.5f, -1.0f, 2.0f, 0.25f, -0.5f, 1.5f};
  std::vector<int64_t> actions = {2, 0, 1};
  std::vector<float> rewards = {1.0f, -0.5f, 0.25f};
  std::vector<float> next_obs = {1.0f, 2.0f, -1.5f, 0.5f, 0.2f, -2.0f};
  std::vector<float> bootstrap = {0.99f, 0.0f, 0.9801f};  // gamma, terminated, gamma^2
  std::vector<float> weights = {1.0f, 0.5f, 0.25f};

  rlx::DqnBatch batch(bool weighted) const {
    rlx::DqnBatch b;
    b.obs = floats(obs, {3, 2});
    b.actions = torch::tensor(actions, torch::kLong).view({3, 1});
    b.rewards = floats(rewards, {3});
    b.next_obs = floats(next_obs, {3, 2});
    b.bootstrap = floats(bootstrap, {3});
    if (weighted) b.weights = floats(weights, {3});
    return b;
  }

  // y_i by hand, with double Q or the target net's max.
  std::vector<double> targets(bool double_q) const {
    std::vector<double> y(3);
    for (size_t i = 0; i < 3; ++i) {
      const auto online = q_by_hand(w_online, b_online, next_obs.data() + 2 * i);
      const auto target = q_by_hand(w_target, b_target, next_obs.data() + 2 * i);
      const size_t chosen = static_cast<size_t>(std::max_element(online.begin(), online.end()) - online.begin());
      const double next = double_q ? target[chosen] : *std::max_element(target.begin(), target.end());
      y[i] = rewards[i] + bootstrap[i] * next;
    }
    return y;
  }
};

}  // namespace

TEST_CASE("DQN targets: double Q selects with the online net and evaluates with the target net", "[learner][dqn]") {
  const Case c;
  auto online = linear_q(c.w_online, c.b_online);
  auto target = linear_q(c.w_target, c.b_target);
  // The two rules disagree on this batch, so the test tells them apart.
  const auto y_double = c.targets(true), y_max = c.targets(false);
  REQUIRE(std::abs(y_double[0] - y_max[0]) + std::abs(y_double[2] - y_max[2]) > 0.1);
  CHECK(y_double[1] == Approx(-0.5));  // terminated: the reward alone
  for (bool double_q : {true, false}) {
    const torch::Tensor y = rlx::dqn_targets(*online, *target, c.batch(false), double_q);
    REQUIRE(y.sizes() == torch::IntArrayRef({3}));
    CHECK_FALSE(y.requires_grad());
    const auto expected = c.targets(double_q);
    for (int64_t i = 0; i < 3; ++i) CHECK(y[i].item<double>() == Approx(expected[static_cast<size_t>(i)]).epsilon(1e-5));
  }
}

TEST_CASE("DQN loss: Huber on Q(s, a) - y, importance-weighted, gradient to the online net only", "[learner][dqn]") {
  const Case c;
  auto online = linear_q(c.w_online, c.b_online);
  auto target = linear_q(c.w_target, c.b_target);
  const auto y = c.targets(true);
  for (bool weighted : {false, true}) {
    for (double delta : {1.0, 2.0}) {
      online->zero_grad();
      const rlx::DqnLossOutput out = rlx::dqn_loss(*online, *target, c.batch(weighted), true, delta);
      double expected = 0.0;
      for (size_t i = 0; i < 3; ++i) {
        const double q = q_by_hand(c.w_online, c.b_online, c.obs.data() + 2 * i)[static_cast<size_t>(c.actions[i])];
        CHECK(out.q[static_cast<int64_t>(i)].item<double>() == Approx(q).epsilon(1e-5));
        expected += (weighted ? c.weights[i] : 1.0) * huber(q - y[i], delta);
      }
      expected /= 3.0;
      CHECK(out.loss.item<double>() == Approx(expected).epsilon(1e-5));
      out.loss.backward();
      for (const auto& p : online->parameters()) CHECK(p.grad().defined());
      for (const auto& p : target->parameters()) CHECK_FALSE(p.grad().defined());
    }
  }
  // The batch mixes |td| above and below the threshold, so both Huber branches are exercised.
  int big = 0;
  for (size_t i = 0; i < 3; ++i) {
    const double q = q_by_hand(c.w_online, c.b_online, c.obs.data() + 2 * i)[static_cast<size_t>(c.actions[i])];
    big += std::abs(q - y[i]) > 1.0;
  }
  CHECK(big > 0);
  CHECK(big < 3);
}

TEST_CASE("DQN targets under an action mask: an illegal action with the largest Q is never the max",
          "[learner][dqn]") {
  // Hand-made next-state Q-values [B = 3, n = 3]: in each row the largest value, of both nets,
  // belongs to an illegal action.
  rlx::DqnBatch batch;
  batch.rewards = floats({0.5f, 0.0f, 1.0f}, {3});
  batch.bootstrap = floats({1.0f, 0.5f, 0.0f}, {3});  // the last row terminated
  const torch::Tensor target_q = floats({9.0f, 1.0f, 2.0f, /**/ 0.0f, 7.0f, 3.0f, /**/ 8.0f, -1.0f, -2.0f}, {3, 3});
  const torch::Tensor online_q = floats({6.0f, 3.0f, 1.0f, /**/ 1.0f, 5.0f, 2.0f, /**/ 4.0f, 0.0f, 1.0f}, {3, 3});
  batch.next_mask = torch::tensor(std::vector<uint8_t>{0, 1, 1, /**/ 1, 0, 1, /**/ 0, 1, 1}, torch::kByte).view({3, 3}).to(torch::kBool);

  // Double Q: a* = argmax over legal actions of the online net (1, 2, 2), valued by the target net.
  const torch::Tensor y_double = rlx::dqn_targets_from_q(target_q, online_q, batch);
  CHECK(y_double[0].item<float>() == 0.5f + 1.0f * 1.0f);
  CHECK(y_double[1].item<float>() == 0.0f + 0.5f * 3.0f);
  CHECK(y_double[2].item<float>() == 1.0f);  // terminated: the reward alone, no masked value leaks in
  // The target net's own max over legal actions: 2, 3.
  const torch::Tensor y_max = rlx::dqn_targets_from_q(target_q, torch::Tensor(), batch);
  CHECK(y_max[0].item<float>() == 0.5f + 2.0f);
  CHECK(y_max[1].item<float>() == 0.0f + 0.5f * 3.0f);
  CHECK(y_max[2].item<float>() == 1.0f);
  CHECK(torch::isfinite(y_double).all().item<bool>());

  // Without the mask the illegal maxima win: the mask is what changed the targets.
  rlx::DqnBatch unmasked = batch;
  unmasked.next_mask = torch::Tensor();
  CHECK(rlx::dqn_targets_from_q(target_q, torch::Tensor(), unmasked)[0].item<float>() == 0.5f + 9.0f);
  CHECK(rlx::dqn_targets_from_q(target_q, online_q, unmasked)[0].item<float>() == 0.5f + 9.0f);

  // Masked values sit at kMaskedLogit, finite; a row that allows nothing is left as it is.
  const torch::Tensor none = torch::zeros({1, 3}, torch::kBool);
  CHECK(torch::equal(rlx::masked_q_values(target_q.narrow(0, 0, 1), none), target_q.narrow(0, 0, 1)));
  const torch::Tensor masked = rlx::masked_q_values(target_q, batch.next_mask);
  CHECK(masked[0][0].item<float>() == rlx::kMaskedLogit);
  CHECK(masked[0][1].item<float>() == 1.0f);
  CHECK(torch::isfinite(masked).all().item<bool>());
}

TEST_CASE("DQN loss under an action mask: both nets' targets range over legal next actions", "[learner][dqn]") {
  // The linear nets of Case: forbid, in each next state, the action each rule would pick unmasked.
  const Case c;
  auto online = linear_q(c.w_online, c.b_online);
  auto target = linear_q(c.w_target, c.b_target);
  rlx::DqnBatch batch = c.batch(false);
  std::vector<uint8_t> mask(9, 1);
  for (size_t i = 0; i < 3; ++i) {
    const auto q_online = q_by_hand(c.w_online, c.b_online, c.next_obs.data() + 2 * i);
    mask[3 * i + static_cast<size_t>(std::max_element(q_online.begin(), q_online.end()) - q_online.begin())] = 0;
  }
  batch.next_mask = torch::tensor(mask, torch::kByte).view({3, 3}).to(torch::kBool);
  const torch::Tensor y = rlx::dqn_targets(*online, *target, batch, true);
  for (size_t i = 0; i < 3; ++i) {
    auto q_online = q_by_hand(c.w_online, c.b_online, c.next_obs.data() + 2 * i);
    const auto q_target = q_by_hand(c.w_target, c.b_target, c.next_obs.data() + 2 * i);
    for (size_t a = 0; a < 3; ++a) {
      if (mask[3 * i + a] == 0) q_online[a] = -1e30;
    }
    const size_t chosen = static_cast<size_t>(std::max_element(q_online.begin(), q_online.end()) - q_online.begin());
    const double expected = c.rewards[i] + c.bootstrap[i] * q_target[chosen];
    CHECK(y[static_cast<int64_t>(i)].item<double>() == Approx(expected).epsilon(1e-5));
  }
  // The mask changed a bootstrapped row's target (row 0), so the check above tells the rules apart.
  CHECK(std::abs(y[0].item<double>() - c.targets(true)[0]) > 1e-3);
}
