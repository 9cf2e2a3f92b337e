#include <catch2/catch.hpp>

#include <vector>

#include "core/rng.h"
#include "native/gae.h"

namespace {

struct Fragment {
  int64_t t = 0, k = 0;
  std::vector<float> rewards, values, final_values, bootstrap;
  std::vector<uint8_t> terminated, truncated;
  rlx::GaeInputs inputs() const {
    rlx::GaeInputs in;
    in.num_steps = t;
    in.num_envs = k;
    in.rewards = rewards.data();
    in.values = values.data();
    in.terminated = terminated.data();
    in.truncated = truncated.data();
    in.final_values = final_values.data();
    in.bootstrap_values = bootstrap.data();
    return in;
  }
};

}  // namespace

TEST_CASE("GAE: hand-computed 3-step, 2-env fragment with termination, truncation and fragment end", "[native][ppo]") {
  // gamma 0.9, lambda 0.8 (gamma * lambda = 0.72).
  // env 0: terminated at t = 1; t = 2 is the fragment's end -> bootstrap 2.0.
  //   t2: delta = 3 + 0.9 * 2.0 - 1.5 = 3.3             A = 3.3              R = 4.8
  //   t1: delta = 2 - 1.0 = 1.0 (terminal)               A = 1.0              R = 2.0
  //   t0: delta = 1 + 0.9 * 1.0 - 0.5 = 1.4              A = 1.4 + 0.72 * 1.0 = 2.12, R = 2.62
  // env 1: truncated at t = 0 (final value 10) and at t = 2 (final value 20; the bootstrap 99
  // belongs to the next episode and must not be used).
  //   t2: delta = -1 + 0.9 * 20 - 4 = 13                 A = 13               R = 17
  //   t1: delta = 1 + 0.9 * 4 - 3 = 1.6                  A = 1.6 + 0.72 * 13 = 10.96, R = 13.96
  //   t0: delta = 0.5 + 0.9 * 10 - 2 = 7.5 (no carry)    A = 7.5              R = 9.5
  Fragment f;
  f.t = 3;
  f.k = 2;
  f.rewards = {1.0f, 0.5f, 2.0f, 1.0f, 3.0f, -1.0f};
  f.values = {0.5f, 2.0f, 1.0f, 3.0f, 1.5f, 4.0f};
  f.terminated = {0, 0, 1, 0, 0, 0};
  f.truncated = {0, 1, 0, 0, 0, 1};
  f.final_values = {0.0f, 10.0f, 0.0f, 0.0f, 0.0f, 20.0f};
  f.bootstrap = {2.0f, 99.0f};
  std::vector<float> adv(6), ret(6);
  rlx::compute_gae(f.inputs(), 0.9, 0.8, adv.data(), ret.data());

  const std::vector<double> expected_adv = {2.12, 7.5, 1.0, 10.96, 3.3, 13.0};
  const std::vector<double> expected_ret = {2.62, 9.5, 2.0, 13.96, 4.8, 17.0};
  for (size_t i = 0; i < 6; ++i) {
    CHECK(adv[i] == Approx(expected_adv[i]).epsilon(1e-6));
    CHECK(ret[i] == Approx(expected_ret[i]).epsilon(1e-6));
  }

  // Terminated and truncated together is a terminal (Gymnasium: terminated wins).
  f.truncated[2] = 1;
  f.final_values[2] = 50.0f;
  rlx::compute_gae(f.inputs(), 0.9, 0.8, adv.data(), ret.data());
  CHECK(adv[2] == Approx(1.0));
}

TEST_CASE("GAE: equals the explicit sum of discounted TD errors within each episode", "[native][ppo]") {
  const int64_t t_max = 40, k_max = 3;
  const double gamma = 0.97, lambda = 0.9;
  rlx::Rng rng(11);
  Fragment f;
  f.t = t_max;
  f.k = k_max;
  const auto n = static_cast<size_t>(t_max * k_max);
  f.rewards.resize(n);
  f.values.resize(n);
  f.final_values.resize(n);
  f.terminated.resize(n);
  f.truncated.resize(n);
  f.bootstrap = {0.3f, -0.7f, 1.1f};
  for (size_t i = 0; i < n; ++i) {
    f.rewards[i] = static_cast<float>(rng.normal());
    f.values[i] = static_cast<float>(rng.normal());
    f.final_values[i] = static_cast<float>(rng.normal());
    const double u = rng.uniform();
    f.terminated[i] = u < 0.08;
    f.truncated[i] = u > 0.93;
  }
  std::vector<float> adv(n), ret(n);
  rlx::compute_gae(f.inputs(), gamma, lambda, adv.data(), ret.data());

  for (int64_t k = 0; k < k_max; ++k) {
    for (int64_t t = 0; t < t_max; ++t) {
      // A_t = sum_{l >= 0} (gamma lambda)^l delta_{t+l}, up to and including the episode's last step.
      double expected = 0.0, weight = 1.0;
      for (int64_t s = t; s < t_max; ++s) {
        const size_t i = static_cast<size_t>(s * k_max + k);
        double next;
        bool stop = true;
        if (f.terminated[i]) {
          next = 0.0;
        } else if (f.truncated[i]) {
          next = f.final_values[i];
        } else if (s == t_max - 1) {
          next = f.bootstrap[static_cast<size_t>(k)];
        } else {
          next = f.values[i + k_max];
          stop = false;
        }
        expected += weight * (f.rewards[i] + gamma * next - f.values[i]);
        weight *= gamma * lambda;
        if (stop) break;
      }
      const size_t i = static_cast<size_t>(t * k_max + k);
      CHECK(adv[i] == Approx(expected).margin(1e-5));
      CHECK(ret[i] == Approx(expected + f.values[i]).margin(1e-5));
    }
  }
}

TEST_CASE("GAE: misuse throws", "[native][ppo]") {
  rlx::GaeInputs in;
  in.num_steps = 1;
  in.num_envs = 1;
  float out[1];
  CHECK_THROWS_AS(rlx::compute_gae(in, 0.99, 0.95, out, out), std::invalid_argument);
  in.num_steps = -1;
  CHECK_THROWS_AS(rlx::compute_gae(in, 0.99, 0.95, out, out), std::invalid_argument);
}
