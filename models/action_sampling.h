// Drawing actions from network outputs, torch-free: categorical over logits, diagonal Gaussian
// over means, SAC's tanh-squashed Gaussian, and epsilon-greedy over Q-values. Each draws from an rlx::Rng in a fixed order,
// so a seed fixes the action stream whichever back end computed the outputs.
#pragma once

#include <cstdint>

#include "core/rng.h"

namespace rlx {

// Index of the first largest of row[0..n).
int64_t argmax(const float* row, int64_t n);

// An action from Categorical(softmax(logits[0..n))): an inverse-CDF draw of one uniform, or the
// argmax (drawing nothing) when deterministic. Writes log pi(action) to *log_prob.
int64_t sample_categorical(const float* logits, int64_t n, Rng& rng, bool deterministic, float* log_prob);

// An action from N(mean, diag(std^2)) into action[0..size): mean + std * z with size standard
// normal draws, or the mean (drawing nothing) when deterministic. Returns log pi(action).
float sample_diagonal_gaussian(const float* mean, const float* std, const float* log_std, int64_t size, Rng& rng,
                               bool deterministic, float* action);

// SAC's squashed Gaussian: u = mean + std * z (size standard normal draws; u = mean, drawing
// nothing, when deterministic), action[0..size) = tanh(u) in [-1, 1], with std = exp(log_std)
// and log_std clamped to [kSacLogStdMin, kSacLogStdMax]. Returns log pi(action) =
// log N(u; mean, std) - sum log(1 - tanh(u)^2), the correction computed stably as
// 2 (log 2 - u - softplus(-2u)).
float sample_squashed_gaussian(const float* mean, const float* log_std, int64_t size, Rng& rng, bool deterministic,
                               float* action);

// log(1 - tanh(u)^2), stably for any u: 2 (log 2 - u - softplus(-2u)).
double log_one_minus_tanh_squared(double u);

// With probability epsilon a uniform action, else argmax(q[0..n)). Draws the coin every time,
// so the stream does not depend on the Q-values.
int64_t epsilon_greedy(const float* q, int64_t n, double epsilon, Rng& rng);

}  // namespace rlx
