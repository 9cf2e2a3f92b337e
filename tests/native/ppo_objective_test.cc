// The native learner's PPO objective (native/ppo_objective.h) held to LibTorch autograd through
// learner/ppo_loss.h's ppo_loss on random inputs: its statistics and its gradients with respect
// to the policy outputs, the values and the Gaussian log-std, for Discrete, MultiDiscrete,
// MultiBinary (each with and without an action mask) and Box actions, with and without value
// clipping and an entropy bonus, on ratios both inside and outside the clip.
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

// An action space as the objective sees it: Box(3), or categorical segments with or without a mask.
struct ActionCase {
  const char* name;
  std::vector<int64_t> categories;  // empty: Box(3)
  bool masked = false;
};

// Per sample, a mask [samples, P] with about half the logits of each segment legal (at least
// one), and legal action indices [samples, D].
void draw_masked_actions(std::mt19937& rng, const std::vector<int64_t>& categories, int64_t samples, bool masked,
                         std::vector<uint8_t>& masks, std::vector<int64_t>& actions) {
  int64_t p = 0;
  for (int64_t n : categories) p += n;
  masks.assign(static_cast<size_t>(samples * p), 1);
  actions.clear();
  for (int64_t i = 0; i < samples; ++i) {
    uint8_t* mask = masks.data() + i * p;
    for (int64_t n : categories) {
      std::vector<int64_t> legal;
      for (int64_t j = 0; j < n; ++j) {
        if (masked) mask[j] = std::bernoulli_distribution(0.5)(rng) ? 1 : 0;
        if (mask[j] != 0) legal.push_back(j);
      }
      if (legal.empty()) {
        const int64_t j = std::uniform_int_distribution<int64_t>(0, n - 1)(rng);
        mask[j] = 1;
        legal.push_back(j);
      }
      actions.push_back(legal[std::uniform_int_distribution<size_t>(0, legal.size() - 1)(rng)]);
      mask += n;
    }
  }
}

void compare_with_autograd(const ActionCase& action_case, const PpoObjectiveOptions& options, uint32_t seed) {
  std::mt19937 rng(seed);
  const bool discrete = !action_case.categories.empty();
  int64_t p = 3;
  if (discrete) p = std::accumulate(action_case.categories.begin(), action_case.categories.end(), int64_t{0});
  const auto elements = static_cast<int64_t>(action_case.categories.size());
  const int64_t samples = 60, rows = 37;
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
  std::vector<int64_t> action_indices;
  std::vector<uint8_t> masks;
  if (discrete) draw_masked_actions(rng, action_case.categories, samples, action_case.masked, masks, action_indices);

  // LibTorch: the distribution over the rows' outputs, then ppo_loss, then autograd.
  const torch::Tensor out = tensor_of(policy_out, {rows, p}, true);
  const torch::Tensor log_std_t = tensor_of(log_std, {p}, true);
  const torch::Tensor values_t = tensor_of(values, {rows}, true);
  const torch::Tensor index = torch::tensor(order, torch::kLong);
  torch::Tensor mask_t;
  if (action_case.masked) {
    mask_t = torch::tensor(std::vector<int64_t>(masks.begin(), masks.end()), torch::kLong).view({samples, p}).index_select(0, index) != 0;
  }
  const ActionDistribution dist = discrete ? ActionDistribution::categorical(out, action_case.categories, mask_t)
                                           : ActionDistribution::diagonal_gaussian(out, log_std_t);
  const torch::Tensor actions = discrete ? torch::tensor(action_indices, torch::kLong).view({samples, elements}).index_select(0, index)
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
  batch.categories = discrete ? action_case.categories.data() : nullptr;
  batch.elements = discrete ? elements : 1;
  batch.masks = action_case.masked ? masks.data() : nullptr;
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
  if (action_case.masked) {
    // No gradient reaches a masked logit, in either back end.
    int64_t masked_logits = 0;
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t j = 0; j < p; ++j) {
        if (masks[static_cast<size_t>(order[r] * p + j)] != 0) continue;
        ++masked_logits;
        CHECK(grad_out[static_cast<size_t>(r * p + j)] == 0.0f);
        CHECK(out.grad()[r][j].item<float>() == 0.0f);
      }
    }
    CHECK(masked_logits > rows / 2);
  }
}

TEST_CASE("the native PPO objective and its gradients equal LibTorch autograd's through ppo_loss", "[native][ppo]") {
  const PpoObjectiveOptions plain{0.2, 0.0, 0.5, 0.0};
  const PpoObjectiveOptions clipped_values_entropy{0.1, 0.3, 0.7, 0.01};
  const std::vector<ActionCase> cases = {
      {"Discrete(4)", {4}, false},          {"Box(3)", {}, false},
      {"Discrete(5) masked", {5}, true},    {"MultiDiscrete([3 4 2])", {3, 4, 2}, false},
      {"MultiDiscrete([3 4 2]) masked", {3, 4, 2}, true}, {"MultiBinary(3)", {2, 2, 2}, false},
  };
  for (uint32_t seed : {1u, 2u, 3u}) {
    INFO("seed " << seed);
    for (const ActionCase& action_case : cases) {
      INFO(action_case.name);
      compare_with_autograd(action_case, plain, seed);
      compare_with_autograd(action_case, clipped_values_entropy, seed);
    }
  }
}

}  // namespace
}  // namespace rlx
