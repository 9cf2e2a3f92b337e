// Generalized advantage estimation over one time-major fragment (torch-free).
//
// For step t of env k, with done meaning terminated or truncated:
//   terminated:           next value 0                      and no carry from t + 1
//   truncated (not term.): next value V(final_obs of step t) and no carry from t + 1
//   t = T - 1, not done:   next value V(bootstrap_obs[k])   (the fragment's end is not an episode's)
//   otherwise:             next value values[t + 1, k]      and A_t += gamma * lambda * A_{t+1}
//   delta_t = r_t + gamma * next value - V(s_t);  A_t = delta_t + carry;  R_t = A_t + V(s_t).
// A time-limit truncation is not a terminal: it bootstraps from the final observation's value,
// and the next row (which belongs to a new episode) never leaks across the boundary.
#pragma once

#include <cstdint>

namespace rlx {

// Views of one fragment's columns, each [T, K] row-major unless noted.
struct GaeInputs {
  int64_t num_steps = 0;                    // T
  int64_t num_envs = 0;                     // K
  const float* rewards = nullptr;
  const float* values = nullptr;            // V(s_t)
  const uint8_t* terminated = nullptr;
  const uint8_t* truncated = nullptr;
  const float* final_values = nullptr;      // V(final obs of step t); read only where truncated and not terminated
  const float* bootstrap_values = nullptr;  // [K] V(bootstrap_obs)
};

// Writes advantages and returns [T, K] (accumulated in double); throws std::invalid_argument on
// null columns or negative sizes.
void compute_gae(const GaeInputs& in, double gamma, double lambda, float* advantages, float* returns);

}  // namespace rlx
