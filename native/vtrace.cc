#include "native/vtrace.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace rlx {

namespace {

void check(const VtraceInputs& in, const VtraceOptions& options, const float* value_targets, const float* advantages) {
  if (in.num_steps < 0 || in.num_envs < 0) throw std::invalid_argument("compute_vtrace got a negative size");
  if (!in.rewards || !in.values || !in.terminated || !in.truncated || !in.final_values || !in.bootstrap_values ||
      !in.log_ratios || !value_targets || !advantages) {
    throw std::invalid_argument("compute_vtrace got a null column");
  }
  if (!(options.gamma >= 0.0 && options.gamma <= 1.0)) {
    throw std::invalid_argument("compute_vtrace: gamma must be in [0, 1], got " + std::to_string(options.gamma));
  }
  if (!(options.lambda >= 0.0 && options.lambda <= 1.0)) {
    throw std::invalid_argument("compute_vtrace: lambda must be in [0, 1], got " + std::to_string(options.lambda));
  }
  if (!(options.rho_bar > 0.0) || !(options.c_bar > 0.0)) {
    throw std::invalid_argument("compute_vtrace: rho_bar and c_bar must be > 0, got " + std::to_string(options.rho_bar) +
                                " and " + std::to_string(options.c_bar));
  }
  const int64_t n = in.num_steps * in.num_envs;
  for (int64_t i = 0; i < n; ++i) {
    if (!std::isfinite(in.log_ratios[i])) {
      throw std::invalid_argument("compute_vtrace: the log-ratio of step " + std::to_string(i / in.num_envs) + ", env " +
                                  std::to_string(i % in.num_envs) + " is not finite");
    }
  }
}

}  // namespace

void compute_vtrace(const VtraceInputs& in, const VtraceOptions& options, float* value_targets, float* advantages) {
  check(in, options, value_targets, advantages);
  const int64_t k_max = in.num_envs;
  const double gamma = options.gamma;
  for (int64_t k = 0; k < k_max; ++k) {
    double correction = 0.0;   // v_{t+1} - V(x_{t+1})
    double next_target = 0.0;  // v_{t+1}
    for (int64_t t = in.num_steps - 1; t >= 0; --t) {
      const int64_t i = t * k_max + k;
      const double value = in.values[i];
      double next_value;  // V(x_{t+1})
      bool ends = true;   // the episode or the fragment ends after step t: v_{t+1} = V(x_{t+1})
      if (in.terminated[i]) {
        next_value = 0.0;
      } else if (in.truncated[i]) {
        next_value = in.final_values[i];
      } else if (t == in.num_steps - 1) {
        next_value = in.bootstrap_values[k];
      } else {
        next_value = in.values[i + k_max];
        ends = false;
      }
      if (ends) {
        correction = 0.0;
        next_target = next_value;
      }
      const double ratio = std::exp(static_cast<double>(in.log_ratios[i]));
      const double rho = std::min(options.rho_bar, ratio);
      const double c = options.lambda * std::min(options.c_bar, ratio);
      const double reward = in.rewards[i];
      advantages[i] = static_cast<float>(rho * (reward + gamma * next_target - value));
      correction = rho * (reward + gamma * next_value - value) + gamma * c * correction;
      next_target = value + correction;
      value_targets[i] = static_cast<float>(next_target);
    }
  }
}

}  // namespace rlx
