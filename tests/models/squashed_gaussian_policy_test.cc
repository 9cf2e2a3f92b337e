// SquashedGaussianPolicy (SAC's workers and `rlx evaluate`): deterministic actions are the tanh
// of the mean scaled to the Box, sampled ones stay inside it, epsilon 1 acts uniformly; and the
// sampler's log-prob with its stable tanh correction.
#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include "models/action_sampling.h"
#include "models/rollout_policy.h"

namespace rlx {
namespace {

// Obs size 2, a Box of two actions on [0, 4] x [-1, 1], pi_out's weights zero: the mean and
// log-std are its biases, whatever the observation.
struct Fixture {
  ModelSpec config;
  std::vector<float> weights;
  Fixture() {
    config.obs_size = 2;
    config.action_space = Space::box({2}, std::vector<float>{0.0f, -1.0f}, std::vector<float>{4.0f, 1.0f});
    config.hidden_sizes = {8};
    config.activation = "relu";
    const SquashedGaussianLayout layout = squashed_gaussian_layout(config);
    weights = initial_parameters(layout, 1);
    const LayerSpec& out = layout.chain.back();
    for (int64_t i = 0; i < out.out * out.in; ++i) weights[out.weight_offset() + static_cast<size_t>(i)] = 0.0f;
    const float biases[4] = {0.5f, -1.0f, -1.0f, -30.0f};  // means 0.5, -1; log-stds -1, -30 (clamped to -20)
    for (int j = 0; j < 4; ++j) weights[out.bias_offset() + static_cast<size_t>(j)] = biases[j];
  }
};

}  // namespace

TEST_CASE("SquashedGaussianPolicy's deterministic action is tanh(mean) scaled to the Box", "[rollout][policy][sac]") {
  Fixture f;
  SquashedGaussianPolicy policy(f.config, 0.0, 5, true);
  policy.load_weights(f.weights.data(), f.weights.size(), 3);
  const std::vector<float> obs = {0.3f, -2.0f, 1.0f, 4.0f};
  std::vector<float> actions(4);
  ActOutput out;
  out.action_values = actions.data();
  policy.act(obs.data(), 2, out);
  for (int k = 0; k < 2; ++k) {
    CHECK(actions[k * 2] == Approx(2.0 * (std::tanh(0.5) + 1.0)));
    CHECK(actions[k * 2 + 1] == Approx(std::tanh(-1.0)));
  }
  CHECK(policy.version() == 3);
  CHECK_FALSE(policy.has_policy_outputs());
}

TEST_CASE("SquashedGaussianPolicy samples inside the Box, and acts uniformly at epsilon 1", "[rollout][policy][sac]") {
  Fixture f;
  SquashedGaussianPolicy policy(f.config, 0.0, 5);
  policy.load_weights(f.weights.data(), f.weights.size(), 1);
  const int kEnvs = 2000;
  const std::vector<float> obs(static_cast<size_t>(kEnvs * 2), 0.5f);
  std::vector<float> actions(static_cast<size_t>(kEnvs * 2));
  ActOutput out;
  out.action_values = actions.data();
  policy.act(obs.data(), kEnvs, out);
  double first_sum = 0.0;
  for (int k = 0; k < kEnvs; ++k) {
    CHECK(actions[k * 2] >= 0.0f);
    CHECK(actions[k * 2] <= 4.0f);
    first_sum += actions[k * 2];
    CHECK(actions[k * 2 + 1] == Approx(std::tanh(-1.0)).margin(1e-6));  // std e^-20: the mean
  }
  // E[2 (tanh(0.5 + e^-1 z) + 1)] is about 2.86; a uniform action's mean would be 2.
  CHECK(first_sum / kEnvs == Approx(2.86).margin(0.05));

  policy.set_epsilon(1.0);
  double sums[2] = {0.0, 0.0};
  policy.act(obs.data(), kEnvs, out);
  for (int k = 0; k < kEnvs; ++k) {
    sums[0] += actions[k * 2];
    sums[1] += actions[k * 2 + 1];
    CHECK(actions[k * 2 + 1] >= -1.0f);
    CHECK(actions[k * 2 + 1] <= 1.0f);
  }
  CHECK(sums[0] / kEnvs == Approx(2.0).margin(0.1));
  CHECK(sums[1] / kEnvs == Approx(0.0).margin(0.05));
  CHECK_THROWS_AS(policy.set_epsilon(1.5), std::invalid_argument);
  ModelSpec discrete = f.config;
  discrete.action_space = Space::discrete(3);
  CHECK_THROWS_AS(SquashedGaussianPolicy(discrete, 0.0, 1), std::invalid_argument);
}

TEST_CASE("The squashed Gaussian's log-prob corrects for tanh, stably for large pre-squash values", "[rollout][sac]") {
  for (double u : {-5.0, -0.7, 0.0, 0.3, 4.0}) {
    const double t = std::tanh(u);
    CHECK(log_one_minus_tanh_squared(u) == Approx(std::log(1.0 - t * t)).epsilon(1e-9));
  }
  // Where 1 - tanh(u)^2 rounds to 0 the stable form stays finite: about 2 (log 2 - |u|).
  CHECK(std::isfinite(log_one_minus_tanh_squared(60.0)));
  CHECK(log_one_minus_tanh_squared(60.0) == Approx(2.0 * (std::log(2.0) - 60.0)));
  CHECK(log_one_minus_tanh_squared(-60.0) == Approx(2.0 * (std::log(2.0) - 60.0)));

  // log pi(a) = log N(u; mean, std) - log(1 - tanh(u)^2), summed over the action's elements.
  const float mean[2] = {0.2f, -0.4f}, log_std[2] = {-0.5f, 0.1f};
  Rng rng(11), replay(11);
  float action[2];
  const float log_prob = sample_squashed_gaussian(mean, log_std, 2, rng, false, action);
  double expected = 0.0;
  for (int j = 0; j < 2; ++j) {
    const double z = replay.normal(), s = std::exp(static_cast<double>(log_std[j])), u = mean[j] + s * z;
    CHECK(action[j] == Approx(std::tanh(u)));
    expected += -0.5 * z * z - std::log(s) - 0.5 * std::log(2.0 * M_PI) - std::log(1.0 - std::tanh(u) * std::tanh(u));
  }
  CHECK(log_prob == Approx(expected).epsilon(1e-5));
}

}  // namespace rlx
