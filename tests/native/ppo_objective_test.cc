// The native learner's PPO objective (native/ppo_objective.h) held to LibTorch autograd through
// learner/ppo_loss.h's ppo_loss on random inputs: its statistics and its gradients with respect
// to the policy outputs, the values and the Gaussian log-std, for Discrete and Box actions, with
// and without value clipping and an entropy bonus, on ratios both inside and outside the clip.
#include "tests/learner/torch_catch.h"

#include <algorithm>
#include <numeric>
#include <random>
#include <vector>

#include "learner/policy_networks.h"
#include "learner/ppo_loss.h"
#include "native/ppo_objective.h"

namespace rlx {
namespace {

std::vector<float> uniform_floats(std::mt19937& rng, size_t count, float low, float high) {
  std::uniform_real_distribution<float> draw(low, high);
  std::vector<float> values(count);
  for (float& v : values) v = draw(rng);
  return values;
}

torch::Tensor tensor_of(const std::vector<float>& values, std::vector<int64_t> shape, bool grad = false) {
  return torch::tensor(values, torch::kFloat).view(shape).clone().set_requires_grad(grad);
}

void check_close(const float* native, const torch::Tensor& expected, double tolerance) {
  const torch::Tensor flat = expected.contiguous().view({-1});
  double scale = 0.0, worst = 0.0;
  for (int64_t i = 0; i < flat.numel(); ++i) {
    scale = std::max(scale, std::abs(flat[i].item<double>()));
    worst = std::max(worst, std::abs(native[i] - flat[i].item<double>()));
  }
  INFO("worst difference " << worst << " of a largest gradient " << scale);
  CHECK(scale > 0.0);  // the inputs reach this gradient
  CHECK(worst <= tolerance * std::max(scale, 1e-3));
}

void compare_with_autograd(bool discrete, const PpoObjectiveOptions& options, uint32_t seed) {
  std::mt19937 rng(seed);
  const int64_t samples = 60, rows = 37, p = discrete ? 4 : 3;
  std::vector<int64_t> order(samples);
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), rng);
  order.resize(rows);

  const std::vector<float> policy_out = uniform_floats(rng, rows * p, -1.5f, 1.5f);
  const std::vector<float> log_std = uniform_floats(rng, p, -0.7f, 0.3f);
  const std::vector<float> values = uniform_floats(rng, rows, -2.0f, 2.0f);
  const std::vector<float> advantages = uniform_floats(rng, rows, -2.0f, 2.0f);
  const std::vector<float> returns = uniform_floats(rng, samples, -2.0f, 2.0f);
  const std::vector<float> old_values = uniform_floats(rng, samples, -2.0f, 2.0f);
  const std::vector<float> action_values = uniform_floats(rng, samples * p, -2.0f, 2.0f);
  std::vector<int64_t> action_indices(samples);
  for (int64_t& a : action_indices) a = std::uniform_int_distribution<int64_t>(0, p - 1)(rng);

  // LibTorch: the distribution over the rows' outputs, then ppo_loss, then autograd.
  const torch::Tensor out = tensor_of(policy_out, {rows, p}, true);
  const torch::Tensor log_std_t = tensor_of(log_std, {p}, true);
  const torch::Tensor values_t = tensor_of(values, {rows}, true);
  const torch::Tensor index = torch::tensor(order, torch::kLong);
  const ActionDistribution dist =
      discrete ? ActionDistribution::categorical(out) : ActionDistribution::diagonal_gaussian(out, log_std_t);
  const torch::Tensor actions = discrete ? torch::tensor(action_indices, torch::kLong).index_select(0, index)
                                         : tensor_of(action_values, {samples, p}).index_select(0, index);
  const torch::Tensor log_probs = dist.log_prob(actions);
  // Old log-probs near the new ones: some ratios inside the clip range, some outside.
  const std::vector<float> offsets = uniform_floats(rng, samples, -0.6f, 0.6f);
  std::vector<float> old_log_probs(samples, 0.0f);
  for (int64_t r = 0; r < rows; ++r) old_log_probs[order[r]] = log_probs[r].item<float>() + offsets[order[r]];

  PpoLossInputs in;
  in.log_probs = log_probs;
  in.old_log_probs = tensor_of(old_log_probs, {samples}).index_select(0, index);
  in.advantages = tensor_of(advantages, {rows});
  in.values = values_t;
  in.old_values = tensor_of(old_values, {samples}).index_select(0, index);
  in.returns = tensor_of(returns, {samples}).index_select(0, index);
  in.entropy = dist.entropy();
  PpoLossOptions loss_options;
  loss_options.clip_param = options.clip_param;
  loss_options.vf_clip_param = options.vf_clip_param;
  loss_options.vf_loss_coeff = options.vf_loss_coeff;
  loss_options.entropy_coeff = options.entropy_coeff;
  loss_options.normalize_advantages = false;  // the native objective takes them normalised already
  const PpoLoss loss = ppo_loss(in, loss_options);
  loss.total.backward();

  // Native.
  PpoObjectiveBatch batch;
  batch.rows = rows;
  batch.outputs = p;
  batch.discrete = discrete;
  batch.policy_out = policy_out.data();
  batch.log_std = discrete ? nullptr : log_std.data();
  batch.values = values.data();
  batch.advantages = advantages.data();
  batch.order = order.data();
  batch.action_indices = action_indices.data();
  batch.action_values = action_values.data();
  batch.old_log_probs = old_log_probs.data();
  batch.returns = returns.data();
  batch.old_values = old_values.data();
  std::vector<float> grad_out(rows * p), grad_values(rows), grad_log_std(p), scratch;
  const PpoObjectiveStats stats =
      ppo_objective(batch, options, scratch, {grad_out.data(), grad_values.data(), grad_log_std.data()});

  const auto stat = [&](PpoLossStat::Index i) { return loss.stats[i].item<double>(); };
  CHECK(stats.policy_loss == Approx(stat(PpoLossStat::kPolicyLoss)).margin(1e-5));
  CHECK(stats.vf_loss == Approx(stat(PpoLossStat::kVfLoss)).epsilon(1e-5));
  CHECK(stats.entropy == Approx(stat(PpoLossStat::kEntropy)).epsilon(1e-5));
  CHECK(stats.approx_kl == Approx(stat(PpoLossStat::kApproxKl)).margin(1e-5));
  CHECK(stats.clip_fraction == Approx(stat(PpoLossStat::kClipFraction)).margin(1e-9));
  CHECK(stats.clip_fraction > 0.0);  // the clip is exercised
  CHECK(stats.clip_fraction < 1.0);
  check_close(grad_out.data(), out.grad(), 1e-4);
  check_close(grad_values.data(), values_t.grad(), 1e-4);
  if (!discrete) check_close(grad_log_std.data(), log_std_t.grad(), 1e-4);
}

TEST_CASE("the native PPO objective and its gradients equal LibTorch autograd's through ppo_loss", "[native][ppo]") {
  const PpoObjectiveOptions plain{0.2, 0.0, 0.5, 0.0};
  const PpoObjectiveOptions clipped_values_entropy{0.1, 0.3, 0.7, 0.01};
  for (uint32_t seed : {1u, 2u, 3u}) {
    INFO("seed " << seed);
    for (const bool discrete : {true, false}) {
      INFO((discrete ? "Discrete" : "Box"));
      compare_with_autograd(discrete, plain, seed);
      compare_with_autograd(discrete, clipped_values_entropy, seed);
    }
  }
}

}  // namespace
}  // namespace rlx
