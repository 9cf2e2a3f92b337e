#include "models/action_sampling.h"

#include <algorithm>
#include <cmath>

#include "models/network_layout.h"

namespace rlx {

namespace {
constexpr double kHalfLog2Pi = 0.91893853320467274178;  // 0.5 * log(2 pi)
constexpr double kLog2 = 0.69314718055994530942;
}  // namespace

int64_t argmax(const float* row, int64_t n) {
  int64_t best = 0;
  for (int64_t j = 1; j < n; ++j) {
    if (row[j] > row[best]) best = j;
  }
  return best;
}

void mask_logits(const float* logits, const uint8_t* mask, int64_t n, float* out) {
  for (int64_t j = 0; j < n; ++j) out[j] = mask[j] != 0 ? logits[j] : kMaskedLogit;
}

int64_t sample_categorical(const float* logits, int64_t n, Rng& rng, bool deterministic, float* log_prob,
                           const uint8_t* mask) {
  // Masked logits (mask_logits) without the copy: a masked action's exp(kMaskedLogit - max) is 0.
  auto logit = [&](int64_t j) { return mask == nullptr || mask[j] != 0 ? logits[j] : kMaskedLogit; };
  int64_t best = 0;
  for (int64_t j = 1; j < n; ++j) {
    if (logit(j) > logit(best)) best = j;
  }
  const float max_logit = logit(best);
  // exp(logit - max) in double; log-prob = logit - max - log(sum).
  double total = 0.0;
  for (int64_t j = 0; j < n; ++j) total += std::exp(static_cast<double>(logit(j)) - max_logit);
  int64_t action = best;  // also where rounding leaves the draw past the last legal action
  if (!deterministic) {
    const double target = rng.uniform() * total;
    double cumulative = 0.0;
    for (int64_t j = 0; j < n; ++j) {
      const double weight = std::exp(static_cast<double>(logit(j)) - max_logit);
      cumulative += weight;
      if (target < cumulative && weight > 0.0) {
        action = j;
        break;
      }
    }
  }
  *log_prob = static_cast<float>(logit(action) - max_logit - std::log(total));
  return action;
}

float sample_multi_categorical(const float* logits, const int64_t* categories, int64_t elements, Rng& rng,
                               bool deterministic, int64_t* actions, const uint8_t* mask) {
  double log_prob = 0.0;
  for (int64_t e = 0; e < elements; ++e) {
    float one = 0.0f;
    actions[e] = sample_categorical(logits, categories[e], rng, deterministic, &one, mask);
    log_prob += one;
    logits += categories[e];
    if (mask != nullptr) mask += categories[e];
  }
  return static_cast<float>(log_prob);
}

namespace {
// log N(x; mean, std^2) for one element, with z = (x - mean) / std.
double normal_log_density(double z, double log_std) { return -0.5 * z * z - log_std - kHalfLog2Pi; }
}  // namespace

float sample_diagonal_gaussian(const float* mean, const float* std, const float* log_std, int64_t size, Rng& rng,
                               bool deterministic, float* action) {
  double log_prob = 0.0;
  for (int64_t j = 0; j < size; ++j) {
    const double z = deterministic ? 0.0 : rng.normal();
    action[j] = static_cast<float>(mean[j] + std[j] * z);
    log_prob += normal_log_density(z, log_std[j]);
  }
  return static_cast<float>(log_prob);
}

void draw_sde_matrix(const float* std, int64_t size, Rng& rng, float* matrix) {
  for (int64_t i = 0; i < size; ++i) matrix[i] = static_cast<float>(std[i] * rng.normal());
}

float sample_state_dependent_gaussian(const float* mean, const float* latent, int64_t latent_size, const float* std,
                                      const float* matrix, int64_t size, bool deterministic, float* action) {
  double log_prob = 0.0;
  for (int64_t a = 0; a < size; ++a) {
    double noise = 0.0, variance = kSdeVarianceEpsilon;
    for (int64_t l = 0; l < latent_size; ++l) {
      const double x = latent[l], s = std[l * size + a];
      if (!deterministic) noise += x * matrix[l * size + a];
      variance += x * x * s * s;
    }
    action[a] = static_cast<float>(mean[a] + noise);
    // The log-prob of the action as stored (float), as the learner computes it.
    const double sigma = std::sqrt(variance);
    log_prob += normal_log_density((static_cast<double>(action[a]) - mean[a]) / sigma, std::log(sigma));
  }
  return static_cast<float>(log_prob);
}

double log_one_minus_tanh_squared(double u) {
  // softplus(x) = log(1 + e^x), as max(x, 0) + log1p(e^-|x|) so it never overflows.
  const double x = -2.0 * u;
  const double softplus = std::max(x, 0.0) + std::log1p(std::exp(-std::abs(x)));
  return 2.0 * (kLog2 - u - softplus);
}

float sample_squashed_gaussian(const float* mean, const float* log_std, int64_t size, Rng& rng, bool deterministic,
                               float* action) {
  double log_prob = 0.0;
  for (int64_t j = 0; j < size; ++j) {
    const double clamped = std::min(std::max(static_cast<double>(log_std[j]), kSacLogStdMin), kSacLogStdMax);
    const double z = deterministic ? 0.0 : rng.normal();
    const double u = mean[j] + std::exp(clamped) * z;
    action[j] = static_cast<float>(std::tanh(u));
    log_prob += -0.5 * z * z - clamped - kHalfLog2Pi - log_one_minus_tanh_squared(u);
  }
  return static_cast<float>(log_prob);
}

int64_t epsilon_greedy(const float* q, int64_t n, double epsilon, Rng& rng, const uint8_t* mask) {
  const bool explore = rng.uniform() < epsilon;
  if (mask == nullptr) return explore ? rng.uniform_int(n) : argmax(q, n);
  int64_t legal = 0, best = -1;
  for (int64_t j = 0; j < n; ++j) {
    if (mask[j] == 0) continue;
    ++legal;
    if (best < 0 || q[j] > q[best]) best = j;
  }
  if (!explore || legal == 0) return best < 0 ? argmax(q, n) : best;
  int64_t pick = rng.uniform_int(legal);
  for (int64_t j = 0; j < n; ++j) {
    if (mask[j] != 0 && pick-- == 0) return j;
  }
  return best;
}

}  // namespace rlx
