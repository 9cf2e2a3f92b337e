#include "tests/learner/torch_catch.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/rng.h"
#include "learner/ppo_loss.h"

namespace {

torch::Tensor column(const std::vector<double>& values, bool requires_grad = false) {
  return torch::tensor(values, torch::kFloat).set_requires_grad(requires_grad);
}

double stat(const rlx::PpoLoss& loss, rlx::PpoLossStat::Index which) { return loss.stats[which].item<double>(); }

}  // namespace

TEST_CASE("ppo_loss: hand-computed surrogate, value loss and entropy with clipped cases", "[learner][ppo]") {
  // ratios 0.5 (A=+1, below the clip range), 1.1 (A=-2, inside), 1.5 (A=+3, above), 0.9 (A=-0.5, inside).
  // min(A r, A clip(r)): 0.5, -2.2, 3.6, -0.45 -> policy loss = -(1.45 / 4) = -0.3625.
  // Two of four ratios lie outside [0.8, 1.2]: clip fraction 0.5.
  const std::vector<double> ratios = {0.5, 1.1, 1.5, 0.9};
  const std::vector<double> old_log_probs = {-1.0, -0.5, -2.0, -0.3};
  std::vector<double> new_log_probs;
  for (size_t i = 0; i < ratios.size(); ++i) new_log_probs.push_back(old_log_probs[i] + std::log(ratios[i]));

  rlx::PpoLossInputs in;
  in.log_probs = column(new_log_probs, true);
  in.old_log_probs = column(old_log_probs);
  in.advantages = column({1.0, -2.0, 3.0, -0.5});
  in.values = column({1.0, 2.0, 0.0, -1.0}, true);
  in.old_values = column({0.5, 2.5, 0.05, -1.0});
  in.returns = column({2.0, 1.0, 1.0, -1.5});
  in.entropy = column({0.6, 0.7, 0.5, 0.2}, true);

  rlx::PpoLossOptions options;
  options.clip_param = 0.2;
  options.normalize_advantages = false;
  options.vf_loss_coeff = 0.5;
  options.entropy_coeff = 0.01;

  // Unclipped value loss: errors -1, 1, -1, 0.5 -> mean of squares (1 + 1 + 1 + 0.25) / 4 = 0.8125.
  rlx::PpoLoss loss = rlx::ppo_loss(in, options);
  const double entropy = (0.6 + 0.7 + 0.5 + 0.2) / 4;
  CHECK(stat(loss, rlx::PpoLossStat::kPolicyLoss) == Approx(-0.3625));
  CHECK(stat(loss, rlx::PpoLossStat::kVfLoss) == Approx(0.8125));
  CHECK(stat(loss, rlx::PpoLossStat::kEntropy) == Approx(entropy));
  CHECK(stat(loss, rlx::PpoLossStat::kClipFraction) == Approx(0.5));
  double kl = 0.0;
  for (double r : ratios) kl += (r - 1.0) - std::log(r);
  CHECK(stat(loss, rlx::PpoLossStat::kApproxKl) == Approx(kl / 4).epsilon(1e-5));
  CHECK(loss.total.item<double>() == Approx(-0.3625 + 0.5 * 0.8125 - 0.01 * entropy));

  // Gradient of the surrogate: -A r / B for unclipped terms (or clipped ones where the clip is
  // not the minimum), 0 where the clipped term is the minimum (the r = 1.5, A = +3 case).
  loss.total.backward();
  const std::vector<double> expected_grad = {-1.0 * 0.5 / 4, 2.0 * 1.1 / 4, 0.0, 0.5 * 0.9 / 4};
  for (size_t i = 0; i < 4; ++i) CHECK(in.log_probs.grad()[i].item<double>() == Approx(expected_grad[i]).margin(1e-7));

  // Clipped value loss with vf_clip 0.2: V_clipped = old + clip(V - old, +-0.2) = 0.7, 2.3, 0.05 + (-0.05) = 0, -1.
  // Squared errors unclipped 1, 1, 1, 0.25; clipped (0.7-2)^2 = 1.69, (2.3-1)^2 = 1.69, 1, 0.25.
  // max: 1.69, 1.69, 1, 0.25 -> mean 4.63 / 4 = 1.1575.
  options.vf_clip_param = 0.2;
  loss = rlx::ppo_loss(in, options);
  CHECK(stat(loss, rlx::PpoLossStat::kVfLoss) == Approx(1.1575));
}

TEST_CASE("ppo_loss: equals an independent computation on random inputs with normalised advantages", "[learner][ppo]") {
  const int64_t b = 37;
  rlx::Rng rng(5);
  std::vector<double> logp(b), old_logp(b), adv(b), v(b), old_v(b), ret(b), ent(b);
  for (int64_t i = 0; i < b; ++i) {
    old_logp[i] = -1.0 + 0.3 * rng.normal();
    logp[i] = old_logp[i] + 0.3 * rng.normal();  // many ratios outside [0.9, 1.1]
    adv[i] = 2.0 * rng.normal() + 0.5;
    v[i] = rng.normal();
    old_v[i] = v[i] + 0.2 * rng.normal();
    ret[i] = rng.normal();
    ent[i] = rng.uniform();
  }
  rlx::PpoLossInputs in;
  in.log_probs = column(logp);
  in.old_log_probs = column(old_logp);
  in.advantages = column(adv);
  in.values = column(v);
  in.old_values = column(old_v);
  in.returns = column(ret);
  in.entropy = column(ent);
  rlx::PpoLossOptions options;
  options.clip_param = 0.1;
  options.vf_clip_param = 0.1;
  options.vf_loss_coeff = 0.7;
  options.entropy_coeff = 0.05;
  options.normalize_advantages = true;
  const rlx::PpoLoss loss = rlx::ppo_loss(in, options);

  // The same in plain double arithmetic, with the values as rounded to float.
  const auto f = [](double x) { return static_cast<double>(static_cast<float>(x)); };
  double mean = 0.0, var = 0.0;
  for (double a : adv) mean += f(a);
  mean /= b;
  for (double a : adv) var += (f(a) - mean) * (f(a) - mean);
  const double stddev = std::sqrt(var / (b - 1));
  double pg = 0.0, vf = 0.0, entropy = 0.0, kl = 0.0, clipped = 0.0;
  for (int64_t i = 0; i < b; ++i) {
    const double a = (f(adv[i]) - mean) / (stddev + 1e-8);
    const double log_ratio = f(logp[i]) - f(old_logp[i]);
    const double r = std::exp(log_ratio);
    const double rc = std::clamp(r, 0.9, 1.1);
    pg += -std::min(a * r, a * rc);
    const double vc = f(old_v[i]) + std::clamp(f(v[i]) - f(old_v[i]), -0.1, 0.1);
    vf += std::max((f(v[i]) - f(ret[i])) * (f(v[i]) - f(ret[i])), (vc - f(ret[i])) * (vc - f(ret[i])));
    entropy += f(ent[i]);
    kl += (r - 1.0) - log_ratio;
    clipped += (r < 0.9 || r > 1.1) ? 1.0 : 0.0;
  }
  pg /= b;
  vf /= b;
  entropy /= b;
  CHECK(clipped > 0.0);
  CHECK(stat(loss, rlx::PpoLossStat::kPolicyLoss) == Approx(pg).epsilon(1e-4));
  CHECK(stat(loss, rlx::PpoLossStat::kVfLoss) == Approx(vf).epsilon(1e-4));
  CHECK(stat(loss, rlx::PpoLossStat::kEntropy) == Approx(entropy).epsilon(1e-5));
  CHECK(stat(loss, rlx::PpoLossStat::kApproxKl) == Approx(kl / b).margin(1e-5));
  CHECK(stat(loss, rlx::PpoLossStat::kClipFraction) == Approx(clipped / b));
  CHECK(loss.total.item<double>() == Approx(pg + 0.7 * vf - 0.05 * entropy).epsilon(1e-4));

  // A moments reducer that leaves the local moments alone normalises the same way.
  options.reduce_advantage_moments = [](torch::Tensor& moments) { REQUIRE(moments.numel() == 3); };
  const rlx::PpoLoss reduced = rlx::ppo_loss(in, options);
  CHECK(stat(reduced, rlx::PpoLossStat::kPolicyLoss) == Approx(pg).epsilon(1e-4));
  // The reducer's output is what normalises: shifting the summed mean changes the loss.
  options.reduce_advantage_moments = [](torch::Tensor& moments) { moments[0] = moments[0] + 1000.0 * moments[2]; };
  CHECK(stat(rlx::ppo_loss(in, options), rlx::PpoLossStat::kPolicyLoss) != Approx(pg).epsilon(1e-3));
}

TEST_CASE("ppo_loss: one sample is not normalised, and bad shapes throw", "[learner][ppo]") {
  rlx::PpoLossInputs in;
  in.log_probs = column({0.0});
  in.old_log_probs = column({0.0});
  in.advantages = column({2.0});
  in.values = column({1.0});
  in.returns = column({1.0});
  in.entropy = column({0.0});
  rlx::PpoLossOptions options;
  CHECK(stat(rlx::ppo_loss(in, options), rlx::PpoLossStat::kPolicyLoss) == Approx(-2.0));
  in.returns = column({1.0, 2.0});
  CHECK_THROWS_AS(rlx::ppo_loss(in, options), std::invalid_argument);
  in.returns = column({1.0});
  options.vf_clip_param = 0.2;  // needs old_values
  CHECK_THROWS_AS(rlx::ppo_loss(in, options), std::invalid_argument);
}

TEST_CASE("ppo_loss: APPO's KL term adds kl_coeff * mean(kl_to_target) and reports it", "[learner][ppo][appo]") {
  rlx::PpoLossInputs in;
  in.log_probs = column({-1.0, -0.5}, true);
  in.old_log_probs = column({-1.0, -0.5});
  in.advantages = column({1.0, -1.0});
  in.values = column({0.0, 0.0}, true);
  in.old_values = column({0.0, 0.0});
  in.returns = column({0.0, 0.0});
  in.entropy = column({0.5, 0.5});
  rlx::PpoLossOptions options;
  options.normalize_advantages = false;
  const double base = rlx::ppo_loss(in, options).total.item<double>();
  in.kl_to_target = column({0.2, 0.4}, true);
  options.kl_coeff = 2.0;
  const rlx::PpoLoss loss = rlx::ppo_loss(in, options);
  CHECK(loss.total.item<double>() == Approx(base + 2.0 * 0.3));
  CHECK(stat(loss, rlx::PpoLossStat::kKlToTarget) == Approx(0.3));
  loss.total.backward();
  CHECK(in.kl_to_target.grad()[0].item<double>() == Approx(1.0));  // kl_coeff / B
  // The analytic gradient does not cover the KL term: refused, not silently dropped.
  CHECK_THROWS_AS(rlx::ppo_loss_gradients(in, options), std::invalid_argument);
}
