#include "tests/learner/torch_catch.h"

#include <string>
#include <vector>

#include "learner/dqn_learner.h"
#include "learner/dqn_loss.h"
#include "learner/q_network_backprop.h"
#include "tests/learner/learner_test_configs.h"

namespace {

constexpr int64_t kObs = 5;
constexpr int64_t kActions = 3;

struct Case {
  bool dueling;
  std::string activation;
  std::vector<int64_t> hidden;
  bool double_q;
  bool weighted;
};

rlx::ModelSpec q_config(const Case& c) {
  rlx::ModelSpec config;
  config.obs_size = kObs;
  config.action_space = rlx::Space::discrete(kActions);
  config.hidden_sizes = c.hidden;
  config.activation = c.activation;
  config.dueling = c.dueling;
  return config;
}

// A random batch whose targets lie both within and beyond the Huber delta of Q(s, a).
rlx::DqnBatch random_batch(int64_t b, bool weighted) {
  rlx::DqnBatch batch;
  batch.obs = torch::randn({b, kObs});
  batch.next_obs = torch::randn({b, kObs});
  batch.actions = torch::randint(0, kActions, {b, 1}, torch::kLong);
  batch.rewards = 2.0 * torch::randn({b});
  batch.bootstrap = 0.97 * (torch::rand({b}) > 0.2).to(torch::kFloat);  // some terminal rows
  if (weighted) batch.weights = 0.1 + torch::rand({b});
  return batch;
}

// Autograd's gradient of dqn_loss through the online net, flattened in parameter order.
torch::Tensor autograd_gradients(rlx::QNetwork& online, rlx::QNetwork& target, const rlx::DqnBatch& batch, bool double_q,
                                 double delta, rlx::DqnLossOutput& out) {
  online.zero_grad();
  out = rlx::dqn_loss(online, target, batch, double_q, delta);
  out.loss.backward();
  std::vector<torch::Tensor> grads;
  for (const auto& p : online.parameters()) grads.push_back(p.grad().reshape({-1}));
  return torch::cat(grads);
}

// max |a - b| over max |b|.
double relative_error(const torch::Tensor& a, const torch::Tensor& b) {
  return (a - b).abs().max().item<double>() / std::max(1e-12, b.abs().max().item<double>());
}

}  // namespace

TEST_CASE("QNetworkBackprop: gradients equal autograd's through dqn_loss", "[learner][dqn]") {
  const std::vector<Case> cases = {
      {true, "relu", {64, 64}, true, true},  {true, "relu", {16}, false, false}, {true, "tanh", {32, 32}, true, false},
      {true, "tanh", {8, 8, 8}, false, true}, {false, "relu", {64, 64}, true, true}, {false, "relu", {16}, true, false},
      {false, "tanh", {32, 32}, false, true}, {false, "tanh", {}, true, true},     {true, "relu", {}, false, true},
  };
  const double delta = 1.0;
  torch::manual_seed(5);
  for (const Case& c : cases) {
    CAPTURE(c.dueling, c.activation, c.hidden.size(), c.hidden.empty() ? 0 : c.hidden[0], c.double_q, c.weighted);
    rlx::QNetwork online(q_config(c));
    rlx::QNetwork target(q_config(c));
    {
      torch::NoGradGuard no_grad;
      for (auto& p : online.parameters()) p.add_(0.2 * torch::randn_like(p));  // nonzero biases too
      for (auto& p : target.parameters()) p.add_(0.2 * torch::randn_like(p));
    }
    const int64_t b = 48;
    const rlx::DqnBatch batch = random_batch(b, c.weighted);

    rlx::DqnLossOutput expected;
    const torch::Tensor expected_grad = autograd_gradients(online, target, batch, c.double_q, delta, expected);
    const torch::Tensor td = (expected.q - expected.target).detach();
    // Both branches of the Huber loss are exercised.
    REQUIRE((td.abs() < delta).any().item<bool>());
    REQUIRE((td.abs() > delta).any().item<bool>());

    torch::Tensor flat = torch::full({online.num_parameters()}, 7.0f);  // overwritten, not accumulated
    rlx::QNetworkBackprop backprop(online, target, flat);
    const rlx::DqnLossOutput got = backprop.dqn_gradients(batch, c.double_q, delta);
    CHECK_FALSE(got.loss.requires_grad());
    CHECK(relative_error(got.loss, expected.loss.detach()) < 1e-6);
    CHECK(relative_error(got.q, expected.q.detach()) < 1e-6);
    CHECK(relative_error(got.target, expected.target) < 1e-6);
    const double error = relative_error(flat, expected_grad);
    INFO("max |hand - autograd| / max |autograd| = " << error);
    CHECK(error < 1e-5);
    // Every parameter gets its own gradient: no tensor of the flat buffer is left unwritten.
    CHECK((flat == 7.0f).sum().item<int64_t>() == 0);
  }
}

TEST_CASE("QNetworkBackprop: masked targets and gradients equal dqn_loss's", "[learner][dqn]") {
  torch::manual_seed(6);
  for (const bool double_q : {true, false}) {
    CAPTURE(double_q);
    const Case c{false, "relu", {16}, double_q, true};
    rlx::QNetwork online(q_config(c));
    rlx::QNetwork target(q_config(c));
    {
      torch::NoGradGuard no_grad;
      for (auto& p : target.parameters()) p.add_(0.5 * torch::randn_like(p));
    }
    const int64_t b = 32;
    rlx::DqnBatch batch = random_batch(b, true);
    const rlx::DqnLossOutput unmasked = rlx::dqn_loss(online, target, batch, double_q, 1.0);
    batch.next_mask = torch::rand({b, kActions}) > 0.5;
    batch.next_mask[0].fill_(false);  // allows nothing: left unmasked
    rlx::DqnLossOutput expected;
    const torch::Tensor expected_grad = autograd_gradients(online, target, batch, double_q, 1.0, expected);
    // The mask changes some targets, so agreement below is about the masked rule.
    REQUIRE((expected.target - unmasked.target.detach()).abs().max().item<double>() > 1e-3);

    torch::Tensor flat = torch::zeros({online.num_parameters()});
    rlx::QNetworkBackprop backprop(online, target, flat);
    const rlx::DqnLossOutput got = backprop.dqn_gradients(batch, double_q, 1.0);
    CHECK(relative_error(got.target, expected.target) < 1e-6);
    CHECK(relative_error(flat, expected_grad) < 1e-5);
  }
}

TEST_CASE("QNetworkBackprop: refuses mismatched networks and gradient buffers", "[learner][dqn]") {
  const Case c{true, "relu", {8}, true, false};
  rlx::QNetwork online(q_config(c));
  rlx::QNetwork plain(q_config({false, "relu", {8}, true, false}));
  CHECK(rlx::QNetworkBackprop::supports(online));
  CHECK_THROWS_AS(rlx::QNetworkBackprop(online, online, torch::zeros({online.num_parameters() + 1})), std::invalid_argument);
  CHECK_THROWS_AS(rlx::QNetworkBackprop(online, plain, torch::zeros({online.num_parameters()})), std::invalid_argument);
  CHECK_THROWS_AS(rlx::QNetworkBackprop(online, online, torch::zeros({online.num_parameters()}, torch::kDouble)),
                  std::invalid_argument);
  rlx::QNetwork doubled(q_config(c));
  doubled.to(torch::kDouble);
  CHECK_FALSE(rlx::QNetworkBackprop::supports(doubled));
  CHECK_THROWS_AS(rlx::QNetworkBackprop(doubled, doubled, torch::zeros({online.num_parameters()})), std::invalid_argument);
}

TEST_CASE("DQN learner: CPU gradient steps use the hand-written backward and follow autograd's", "[learner][dqn]") {
  rlx::ModelSpec model = q_config({true, "relu", {32, 32}, true, true});
  rlx::DqnConfig config = rlx::test::dqn_test_config();
  config.lr = 1e-3;
  config.grad_clip = 0.0;  // compare the raw gradients
  config.prioritized_replay = true;
  rlx::DqnLearner hand(model, config, 4);
  rlx::DqnLearner autograd(model, config, 4);
  REQUIRE(hand.hand_written_gradients());
  autograd.use_hand_written_gradients(false);
  REQUIRE_FALSE(autograd.hand_written_gradients());

  torch::manual_seed(9);
  for (int step = 0; step < 5; ++step) {
    CAPTURE(step);
    const int64_t b = 32;
    const rlx::DqnBatch batch = random_batch(b, true);
    rlx::ReplaySample sample;
    sample.obs.assign(batch.obs.data_ptr<float>(), batch.obs.data_ptr<float>() + b * kObs);
    sample.next_obs.assign(batch.next_obs.data_ptr<float>(), batch.next_obs.data_ptr<float>() + b * kObs);
    sample.actions.assign(batch.actions.data_ptr<int64_t>(), batch.actions.data_ptr<int64_t>() + b);
    sample.rewards.assign(batch.rewards.data_ptr<float>(), batch.rewards.data_ptr<float>() + b);
    sample.discounts.assign(b, 0.97f);
    sample.terminated.assign(b, 0.0f);
    sample.terminated[3] = 1.0f;
    sample.weights.assign(batch.weights.data_ptr<float>(), batch.weights.data_ptr<float>() + b);
    sample.indices.assign(b, 0);
    hand.gradient_step_on(sample);
    autograd.gradient_step_on(sample);
    std::vector<torch::Tensor> hand_grads, autograd_grads;
    for (const auto& p : hand.online().parameters()) hand_grads.push_back(p.grad().reshape({-1}));
    for (const auto& p : autograd.online().parameters()) autograd_grads.push_back(p.grad().reshape({-1}));
    const torch::Tensor hand_grad = torch::cat(hand_grads);
    CHECK(hand_grad.abs().max().item<double>() > 0.0);
    CHECK(relative_error(hand_grad, torch::cat(autograd_grads)) < 1e-4);
    const torch::Tensor hand_params = torch::tensor(hand.online().flat_parameters());
    const torch::Tensor autograd_params = torch::tensor(autograd.online().flat_parameters());
    CHECK(relative_error(hand_params, autograd_params) < 1e-4);
  }
  // Back to the hand-written path on request.
  autograd.use_hand_written_gradients(true);
  CHECK(autograd.hand_written_gradients());
}
