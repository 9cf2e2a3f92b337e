// V-trace (native/vtrace.h) against a hand-computed fragment, against the paper's sum written
// out directly, and against GAE with lambda = 1 when the behaviour policy is the learner's.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <tuple>
#include <vector>

#include "core/rng.h"
#include "native/gae.h"
#include "native/vtrace.h"

namespace {

struct Fragment {
  int64_t t = 0, k = 0;
  std::vector<float> rewards, values, final_values, bootstrap, log_ratios;
  std::vector<uint8_t> terminated, truncated;

  rlx::VtraceInputs vtrace_inputs() const {
    return {gae_inputs(), log_ratios.data()};
  }
  rlx::GaeInputs gae_inputs() const {
    return {t, k, rewards.data(), values.data(), terminated.data(), truncated.data(), final_values.data(),
            bootstrap.data()};
  }
};

// T steps of K envs with random rewards, values and log-ratios; episode ends when ends is set.
Fragment random_fragment(int64_t t, int64_t k, uint64_t seed, bool ends, double log_ratio_scale) {
  rlx::Rng rng(seed);
  Fragment f;
  f.t = t;
  f.k = k;
  const auto n = static_cast<size_t>(t * k);
  f.rewards.resize(n);
  f.values.resize(n);
  f.final_values.resize(n);
  f.log_ratios.resize(n);
  f.terminated.assign(n, 0);
  f.truncated.assign(n, 0);
  for (size_t i = 0; i < n; ++i) {
    f.rewards[i] = static_cast<float>(rng.normal());
    f.values[i] = static_cast<float>(rng.normal(1.0, 2.0));
    f.final_values[i] = static_cast<float>(rng.normal(1.0, 2.0));
    f.log_ratios[i] = static_cast<float>(rng.normal(0.0, log_ratio_scale));
    if (ends) {
      const double u = rng.uniform();
      f.terminated[i] = u < 0.08;
      f.truncated[i] = u >= 0.08 && u < 0.14;
    }
  }
  for (int64_t e = 0; e < k; ++e) f.bootstrap.push_back(static_cast<float>(rng.normal(1.0, 2.0)));
  return f;
}

// The paper's definition written out, per step: v_s = V(x_s) + sum_{u=s}^{end} gamma^{u-s}
// (prod_{s<=i<u} c_i) delta_u, the sum running to the step after which the episode or the
// fragment ends; and advantage_s = rho_s (r_s + gamma v_{s+1} - V(x_s)).
void reference_vtrace(const Fragment& f, const rlx::VtraceOptions& o, std::vector<double>& vs, std::vector<double>& adv) {
  const auto n = static_cast<size_t>(f.t * f.k);
  vs.assign(n, 0.0);
  adv.assign(n, 0.0);
  const auto at = [&](int64_t step, int64_t env) { return static_cast<size_t>(step * f.k + env); };
  const auto ends_after = [&](int64_t step, int64_t env) {
    return f.terminated[at(step, env)] || f.truncated[at(step, env)] || step == f.t - 1;
  };
  const auto next_value = [&](int64_t step, int64_t env) -> double {
    const size_t i = at(step, env);
    if (f.terminated[i]) return 0.0;
    if (f.truncated[i]) return f.final_values[i];
    if (step == f.t - 1) return f.bootstrap[static_cast<size_t>(env)];
    return f.values[at(step + 1, env)];
  };
  const auto rho = [&](size_t i) { return std::min(o.rho_bar, std::exp(static_cast<double>(f.log_ratios[i]))); };
  const auto c = [&](size_t i) { return o.lambda * std::min(o.c_bar, std::exp(static_cast<double>(f.log_ratios[i]))); };
  for (int64_t env = 0; env < f.k; ++env) {
    for (int64_t s = 0; s < f.t; ++s) {
      double sum = 0.0, discount = 1.0;
      for (int64_t u = s;; ++u) {
        const size_t i = at(u, env);
        sum += discount * rho(i) * (f.rewards[i] + o.gamma * next_value(u, env) - f.values[i]);
        if (ends_after(u, env)) break;
        discount *= o.gamma * c(i);
      }
      vs[at(s, env)] = f.values[at(s, env)] + sum;
    }
    for (int64_t s = 0; s < f.t; ++s) {
      const size_t i = at(s, env);
      const double next_target = ends_after(s, env) ? next_value(s, env) : vs[at(s + 1, env)];
      adv[i] = rho(i) * (f.rewards[i] + o.gamma * next_target - f.values[i]);
    }
  }
}

void run(const Fragment& f, const rlx::VtraceOptions& o, std::vector<float>& vs, std::vector<float>& adv) {
  vs.assign(static_cast<size_t>(f.t * f.k), std::numeric_limits<float>::quiet_NaN());
  adv = vs;
  rlx::compute_vtrace(f.vtrace_inputs(), o, vs.data(), adv.data());
}

}  // namespace

TEST_CASE("V-trace: a hand-computed 3-step fragment with clipped ratios and a termination", "[native][vtrace]") {
  // gamma 0.9, rho_bar 1, c_bar 0.5. Env 0 terminates at t = 1; t = 2 bootstraps from 2.0.
  // ratios: t0 2.0 (rho 1, c 0.5), t1 0.5 (rho 0.5, c 0.5), t2 1.5 (rho 1, c 0.5).
  //   t2: delta = 1 * (3 + 0.9 * 2.0 - 1.5) = 3.3         v = 1.5 + 3.3 = 4.8    A = 3.3
  //   t1: delta = 0.5 * (2 + 0 - 1.0) = 0.5 (terminal)    v = 1.0 + 0.5 = 1.5    A = 0.5 * (2 - 1) = 0.5
  //   t0: delta = 1 * (1 + 0.9 * 1.0 - 0.5) = 1.4
  //       v = 0.5 + 1.4 + 0.9 * 0.5 * 0.5 = 2.125         A = 1 * (1 + 0.9 * 1.5 - 0.5) = 1.85
  Fragment f;
  f.t = 3;
  f.k = 1;
  f.rewards = {1.0f, 2.0f, 3.0f};
  f.values = {0.5f, 1.0f, 1.5f};
  f.terminated = {0, 1, 0};
  f.truncated = {0, 0, 0};
  f.final_values = {0.0f, 0.0f, 0.0f};
  f.bootstrap = {2.0f};
  f.log_ratios = {std::log(2.0f), std::log(0.5f), std::log(1.5f)};
  rlx::VtraceOptions o;
  o.gamma = 0.9;
  o.rho_bar = 1.0;
  o.c_bar = 0.5;
  std::vector<float> vs, adv;
  run(f, o, vs, adv);
  CHECK(vs[2] == Approx(4.8));
  CHECK(vs[1] == Approx(1.5));
  CHECK(vs[0] == Approx(2.125));
  CHECK(adv[2] == Approx(3.3));
  CHECK(adv[1] == Approx(0.5));
  CHECK(adv[0] == Approx(1.85));
}

TEST_CASE("V-trace: the recursion equals the paper's sum with episode ends and clipping", "[native][vtrace]") {
  for (const auto& [rho_bar, c_bar, lambda] : {std::tuple{1.0, 1.0, 1.0}, std::tuple{1.0, 0.7, 1.0},
                                               std::tuple{2.0, 1.0, 1.0}, std::tuple{0.5, 0.3, 1.0},
                                               std::tuple{1.0, 1.0, 0.9}, std::tuple{2.0, 0.7, 0.8}}) {
    for (bool ends : {false, true}) {
      CAPTURE(rho_bar, c_bar, lambda, ends);
      const Fragment f = random_fragment(24, 3, 11 + static_cast<uint64_t>(ends), ends, 0.8);
      rlx::VtraceOptions o;
      o.gamma = 0.97;
      o.rho_bar = rho_bar;
      o.c_bar = c_bar;
      o.lambda = lambda;
      std::vector<float> vs, adv;
      run(f, o, vs, adv);
      std::vector<double> ref_vs, ref_adv;
      reference_vtrace(f, o, ref_vs, ref_adv);
      for (size_t i = 0; i < vs.size(); ++i) {
        CAPTURE(i);
        CHECK(vs[i] == Approx(ref_vs[i]).margin(1e-4));
        CHECK(adv[i] == Approx(ref_adv[i]).margin(1e-4));
      }
    }
  }
}

TEST_CASE("V-trace with pi = mu is GAE with lambda 1: n-step returns and their advantages", "[native][vtrace]") {
  for (bool ends : {false, true}) {
    CAPTURE(ends);
    Fragment f = random_fragment(32, 4, 5, ends, 0.0);
    std::fill(f.log_ratios.begin(), f.log_ratios.end(), 0.0f);  // pi = mu
    rlx::VtraceOptions o;
    o.gamma = 0.95;
    std::vector<float> vs, adv;
    run(f, o, vs, adv);
    std::vector<float> gae_adv(vs.size()), gae_returns(vs.size());
    rlx::compute_gae(f.gae_inputs(), o.gamma, 1.0, gae_adv.data(), gae_returns.data());
    for (size_t i = 0; i < vs.size(); ++i) {
      CAPTURE(i);
      CHECK(vs[i] == Approx(gae_returns[i]).margin(1e-4));
      CHECK(adv[i] == Approx(gae_adv[i]).margin(1e-4));
    }
  }
  // With lambda < 1 the targets are GAE(lambda)'s returns.
  {
    Fragment g = random_fragment(32, 4, 6, true, 0.0);
    std::fill(g.log_ratios.begin(), g.log_ratios.end(), 0.0f);
    rlx::VtraceOptions o;
    o.gamma = 0.95;
    o.lambda = 0.9;
    std::vector<float> vs, adv;
    run(g, o, vs, adv);
    std::vector<float> gae_adv(vs.size()), gae_returns(vs.size());
    rlx::compute_gae(g.gae_inputs(), o.gamma, 0.9, gae_adv.data(), gae_returns.data());
    for (size_t i = 0; i < vs.size(); ++i) CHECK(vs[i] == Approx(gae_returns[i]).margin(1e-4));
  }
  // Without episode ends the first env's v_0 is the discounted sum of its rewards bootstrapped
  // from the fragment's end: the n-step return.
  Fragment f = random_fragment(6, 1, 9, false, 0.0);
  std::vector<float> vs, adv;
  rlx::VtraceOptions o;
  o.gamma = 0.9;
  run(f, o, vs, adv);
  double expected = 0.0, discount = 1.0;
  for (int64_t t = 0; t < 6; ++t, discount *= 0.9) expected += discount * f.rewards[static_cast<size_t>(t)];
  expected += discount * f.bootstrap[0];
  CHECK(vs[0] == Approx(expected).margin(1e-4));
}

TEST_CASE("V-trace: a truncation bootstraps from the final value and a ratio above rho_bar is clipped", "[native][vtrace]") {
  Fragment f;
  f.t = 2;
  f.k = 1;
  f.rewards = {1.0f, 1.0f};
  f.values = {2.0f, 3.0f};
  f.terminated = {0, 0};
  f.truncated = {1, 0};  // step 0 ends its episode by the time limit: V(final obs) = 10
  f.final_values = {10.0f, 0.0f};
  f.bootstrap = {4.0f};
  f.log_ratios = {std::log(5.0f), 0.0f};
  rlx::VtraceOptions o;
  o.gamma = 0.5;
  std::vector<float> vs, adv;
  run(f, o, vs, adv);
  // t0: rho = min(1, 5) = 1; delta = 1 + 0.5 * 10 - 2 = 4; the next episode's step 1 is not carried.
  CHECK(vs[0] == Approx(6.0));
  CHECK(adv[0] == Approx(4.0));
  CHECK(vs[1] == Approx(3.0 + (1.0 + 0.5 * 4.0 - 3.0)));
}

TEST_CASE("V-trace refuses null columns bad options and non-finite log-ratios", "[native][vtrace]") {
  Fragment f = random_fragment(4, 2, 3, true, 0.5);
  std::vector<float> vs(8), adv(8);
  rlx::VtraceInputs in = f.vtrace_inputs();
  rlx::VtraceOptions o;
  in.log_ratios = nullptr;
  CHECK_THROWS_WITH(rlx::compute_vtrace(in, o, vs.data(), adv.data()), Catch::Contains("null column"));
  in = f.vtrace_inputs();
  o.c_bar = 0.0;
  CHECK_THROWS_WITH(rlx::compute_vtrace(in, o, vs.data(), adv.data()), Catch::Contains("c_bar"));
  o = rlx::VtraceOptions();
  o.gamma = 1.5;
  CHECK_THROWS_WITH(rlx::compute_vtrace(in, o, vs.data(), adv.data()), Catch::Contains("gamma"));
  o = rlx::VtraceOptions();
  o.lambda = -0.1;
  CHECK_THROWS_WITH(rlx::compute_vtrace(in, o, vs.data(), adv.data()), Catch::Contains("lambda"));
  o = rlx::VtraceOptions();
  f.log_ratios[5] = std::numeric_limits<float>::infinity();
  in = f.vtrace_inputs();
  CHECK_THROWS_WITH(rlx::compute_vtrace(in, o, vs.data(), adv.data()), Catch::Contains("step 2, env 1"));
}
