#include "native/gae.h"

#include <stdexcept>
#include <vector>

namespace rlx {

void compute_gae(const GaeInputs& in, double gamma, double lambda, float* advantages, float* returns) {
  if (in.num_steps < 0 || in.num_envs < 0) throw std::invalid_argument("compute_gae got a negative size");
  if (in.num_steps == 0 || in.num_envs == 0) return;
  if (!in.rewards || !in.values || !in.terminated || !in.truncated || !in.final_values || !in.bootstrap_values ||
      !advantages || !returns) {
    throw std::invalid_argument("compute_gae got a null column");
  }
  const int64_t k_max = in.num_envs;
  for (int64_t k = 0; k < k_max; ++k) {
    double carry = 0.0;  // A_{t+1} of the same episode, 0 across an episode boundary or the fragment end
    for (int64_t t = in.num_steps - 1; t >= 0; --t) {
      const int64_t i = t * k_max + k;
      const double value = in.values[i];
      double next_value;
      if (in.terminated[i]) {
        next_value = 0.0;
        carry = 0.0;
      } else if (in.truncated[i]) {
        next_value = in.final_values[i];
        carry = 0.0;
      } else if (t == in.num_steps - 1) {
        next_value = in.bootstrap_values[k];
        carry = 0.0;
      } else {
        next_value = in.values[i + k_max];
      }
      const double delta = static_cast<double>(in.rewards[i]) + gamma * next_value - value;
      const double advantage = delta + gamma * lambda * carry;
      advantages[i] = static_cast<float>(advantage);
      returns[i] = static_cast<float>(advantage + value);
      carry = advantage;
    }
  }
}

}  // namespace rlx
