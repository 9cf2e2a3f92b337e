// V-trace (Espeholt et al., IMPALA, 2018): off-policy value targets and policy-gradient
// advantages for fragments sampled by a behaviour policy mu older than the learner's pi.
// Torch-free, over one time-major fragment, with the episode ends of native/gae.h.
//
// With ratio_t = pi(a_t|x_t) / mu(a_t|x_t), rho_t = min(rho_bar, ratio_t) and
// c_t = lambda min(c_bar, ratio_t) (the paper's lambda, section 4.1; 1 by default):
//   delta_t = rho_t (r_t + gamma V(x_{t+1}) - V(x_t))
//   v_t - V(x_t) = delta_t + gamma c_t (v_{t+1} - V(x_{t+1}))            (the recursion)
//                = sum_{u>=t} gamma^{u-t} (prod_{t<=i<u} c_i) delta_u      (the paper's sum)
//   advantage_t = rho_t (r_t + gamma v_{t+1} - V(x_t))
// Where the episode or the fragment ends after step t, nothing of what follows is carried back:
//   terminated:            V(x_{t+1}) = v_{t+1} = 0
//   truncated (not term.): V(x_{t+1}) = v_{t+1} = V(final obs of step t)
//   t = T - 1, not done:   V(x_{t+1}) = v_{t+1} = V(bootstrap_obs[k])
// With pi = mu, rho_bar, c_bar >= 1 and lambda = 1 this is GAE with lambda = 1: v_t its return
// (the n-step return bootstrapped where the fragment ends) and advantage_t its advantage. With
// pi = mu and lambda < 1, v_t is GAE(lambda)'s return.
#pragma once

#include <cstdint>

#include "native/gae.h"

namespace rlx {

// One fragment's columns as GAE reads them (values: V(x_t) under the learner's current
// network), and its log-ratios [T, K].
struct VtraceInputs : GaeInputs {
  const float* log_ratios = nullptr;        // log pi(a_t|x_t) - log mu(a_t|x_t)
};

struct VtraceOptions {
  double gamma = 0.99;
  double rho_bar = 1.0;  // clip of the importance ratio in delta_t and the advantage
  double c_bar = 1.0;    // clip of the ratio in the trace (how far corrections reach back)
  double lambda = 1.0;   // trace decay on top of the clip, as GAE's lambda
};

// Writes the value targets v_t and the advantages [T, K] (accumulated in double). Throws
// std::invalid_argument on a null column, a negative size, gamma outside [0, 1], a clip that is
// not positive, or a log-ratio that is not finite (naming the step).
void compute_vtrace(const VtraceInputs& in, const VtraceOptions& options, float* value_targets, float* advantages);

}  // namespace rlx
