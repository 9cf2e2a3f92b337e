#include "ppo_test_util.h"

#include <string>
#include <vector>

#include "learner/actor_critic_backprop.h"
#include "learner/ppo_loss.h"
#include "tests/learner/learner_test_configs.h"

namespace {

struct Case {
  bool discrete;
  std::string activation;
  std::vector<int64_t> hidden;
  double entropy_coeff;
  double vf_clip;
  bool normalize;
  std::vector<int64_t> head = {};  // head layers before pi_out and vf_out (head_fcnet_hiddens)
};

// Autograd gradients of ppo_loss through the model, flattened in parameter order.
torch::Tensor autograd_gradients(rlx::ActorCritic& model, const torch::Tensor& obs, const torch::Tensor& actions,
                                 const torch::Tensor& columns, const rlx::PpoLossOptions& options, torch::Tensor& stats) {
  model.zero_grad();
  const rlx::PolicyOutput out = model.forward(obs);
  const rlx::ActionDistribution dist = model.distribution(out.policy);
  rlx::PpoLossInputs in;
  in.log_probs = dist.log_prob(actions);
  in.entropy = dist.entropy();
  in.values = out.value;
  in.old_log_probs = columns[0];
  in.advantages = columns[1];
  in.returns = columns[2];
  in.old_values = columns[3];
  const rlx::PpoLoss loss = rlx::ppo_loss(in, options);
  loss.total.backward();
  stats = loss.stats;
  std::vector<torch::Tensor> grads;
  for (const auto& p : model.parameters()) grads.push_back(p.grad().reshape({-1}));
  return torch::cat(grads);
}

}  // namespace

TEST_CASE("ActorCriticBackprop: gradients equal autograd's through ppo_loss", "[learner][ppo]") {
  const std::vector<Case> cases = {
      {true, "tanh", {16, 16}, 0.0, 0.0, true},   {true, "tanh", {16, 16}, 0.01, 0.2, true},
      {true, "relu", {8}, 0.05, 0.0, false},      {true, "tanh", {}, 0.01, 0.1, true},
      {false, "tanh", {16, 16}, 0.0, 0.0, true},  {false, "tanh", {16, 16}, 0.01, 0.2, false},
      {false, "relu", {8, 8, 8}, 0.0, 0.1, true},
      {true, "relu", {}, 0.01, 0.0, true, {16}},  {false, "tanh", {8}, 0.0, 0.1, true, {16, 4}},
  };
  torch::manual_seed(3);
  for (const Case& c : cases) {
    CAPTURE(c.discrete, c.activation, c.hidden.size(), c.entropy_coeff, c.vf_clip, c.normalize, c.head.size());
    rlx::ModelSpec config;
    config.obs_size = 5;
    config.action_space = c.discrete ? rlx::Space::discrete(3) : rlx::Space::box({2}, -1.0f, 1.0f);
    config.hidden_sizes = c.hidden;
    config.head_sizes = c.head;
    config.activation = c.activation;
    config.log_std_init = -0.3;
    rlx::ActorCritic model(config);
    {
      // Larger output weights than the 0.01 init so the policy is far from uniform.
      torch::NoGradGuard no_grad;
      for (auto& p : model.parameters()) p.add_(torch::randn_like(p) * 0.3);
    }
    const int64_t b = 48;
    const torch::Tensor obs = torch::randn({b, 5});
    const torch::Tensor actions = c.discrete ? torch::randint(0, 3, {b}, torch::kLong) : torch::randn({b, 2});
    torch::Tensor columns = torch::randn({4, b});
    {
      torch::NoGradGuard no_grad;
      const rlx::PolicyOutput out = model.forward(obs);
      // Old log-probs and values near the current ones: a mix of clipped and unclipped ratios / values.
      columns[0].copy_(model.distribution(out.policy).log_prob(actions) + 0.3 * torch::randn({b}));
      columns[3].copy_(out.value + 0.3 * torch::randn({b}));
    }
    rlx::PpoLossOptions options;
    options.clip_param = 0.15;
    options.vf_clip_param = c.vf_clip;
    options.vf_loss_coeff = 0.7;
    options.entropy_coeff = c.entropy_coeff;
    options.normalize_advantages = c.normalize;

    torch::Tensor expected_stats;
    const torch::Tensor expected = autograd_gradients(model, obs, actions, columns, options, expected_stats);
    torch::Tensor flat = torch::full({model.num_parameters()}, 7.0f);  // overwritten entirely
    rlx::ActorCriticBackprop backprop(model, flat);
    const torch::Tensor stats = backprop.ppo_gradients(obs, actions, torch::Tensor(), columns[0], columns[1], columns[2], columns[3], options);
    CHECK(expected.abs().max().item<double>() > 1e-3);
    CHECK((flat - expected).abs().max().item<double>() < 1e-5 + 1e-4 * expected.abs().max().item<double>());
    CHECK((stats - expected_stats).abs().max().item<double>() < 1e-5);
  }
}

TEST_CASE("ActorCriticBackprop: a shared trunk is refused and PpoLearner falls back to autograd", "[learner][ppo]") {
  rlx::ModelSpec config = rlx_test::model_config_for("CartPole-v1", {16});
  config.shared_trunk = true;
  rlx::ActorCritic model(config);
  CHECK_FALSE(rlx::ActorCriticBackprop::supports(model));
  CHECK_THROWS_AS(rlx::ActorCriticBackprop(model, torch::zeros({model.num_parameters()})), std::invalid_argument);

  rlx::PpoConfig ppo = rlx::test::ppo_test_config();
  ppo.num_epochs = 2;
  rlx::PpoLearner learner(config, ppo, 1);
  rlx_test::Sampler sampler("CartPole-v1", config, 2, 64, 2);
  const std::vector<float> before = learner.model().flat_parameters();
  const rlx::PpoUpdateMetrics metrics = learner.update(sampler.collect(1), 0);
  CHECK(metrics.grad_norm > 0.0);
  CHECK(learner.model().flat_parameters() != before);
}

TEST_CASE("PpoLearner: analytic and autograd updates agree", "[learner][ppo]") {
  const rlx::ModelSpec model_config = rlx_test::model_config_for("Pendulum-v1", {32, 32});
  rlx::PpoConfig config = rlx::test::ppo_test_config();
  config.num_epochs = 2;
  config.minibatch_size = 64;
  config.entropy_coeff = 0.01;
  config.vf_clip_param = 0.5;
  config.normalize_observations = true;
  rlx_test::Sampler sampler("Pendulum-v1", model_config, 2, 128, 4);
  const std::vector<rlx::SampleBatch> batches = sampler.collect(1);

  rlx::PpoLearner analytic(model_config, config, 5);
  config.analytic_gradients = false;
  rlx::PpoLearner autograd(model_config, config, 5);
  const rlx::PpoUpdateMetrics ma = analytic.update(batches, 0);
  const rlx::PpoUpdateMetrics mg = autograd.update(batches, 0);
  CHECK(ma.policy_loss == Approx(mg.policy_loss).margin(1e-4));
  CHECK(ma.vf_loss == Approx(mg.vf_loss).epsilon(1e-3));
  CHECK(ma.grad_norm == Approx(mg.grad_norm).epsilon(1e-3));
  const std::vector<float> pa = analytic.model().flat_parameters(), pg = autograd.model().flat_parameters();
  double max_diff = 0.0;
  for (size_t i = 0; i < pa.size(); ++i) max_diff = std::max(max_diff, static_cast<double>(std::abs(pa[i] - pg[i])));
  CHECK(max_diff < 1e-4);
}
