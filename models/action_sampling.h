// Drawing actions from network outputs, torch-free: categorical over logits, diagonal Gaussian
// over means, SAC's tanh-squashed Gaussian, and epsilon-greedy over Q-values. Each draws from an rlx::Rng in a fixed order,
// so a seed fixes the action stream whichever back end computed the outputs.
#pragma once

#include <cstdint>

#include "core/rng.h"

namespace rlx {

// Index of the first largest of row[0..n).
int64_t argmax(const float* row, int64_t n);

// The logit of an action its mask forbids: exp of it is 0 beside any legal logit, and unlike
// -inf it keeps p * log p (the entropy) finite. SB3's MaskablePPO uses the same value. Every
// back end masks with it (the learners' losses, the readers).
constexpr float kMaskedLogit = -1e8f;

// out[0..n) = logits where mask is nonzero, kMaskedLogit elsewhere.
void mask_logits(const float* logits, const uint8_t* mask, int64_t n, float* out);

// An action from Categorical(softmax(masked logits[0..n))) (mask_logits; mask null: none): an
// inverse-CDF draw of one uniform, or the argmax (drawing nothing) when deterministic; never a
// masked action. Writes log pi(action) to *log_prob.
int64_t sample_categorical(const float* logits, int64_t n, Rng& rng, bool deterministic, float* log_prob,
                           const uint8_t* mask = nullptr);

// A MultiDiscrete action: one sample_categorical per element e over its categories[e] logits
// (laid one after another), with its segment of the mask. Writes actions[0..elements); returns
// the summed log-prob.
float sample_multi_categorical(const float* logits, const int64_t* categories, int64_t elements, Rng& rng,
                               bool deterministic, int64_t* actions, const uint8_t* mask = nullptr);

// An action from N(mean, diag(std^2)) into action[0..size): mean + std * z with size standard
// normal draws, or the mean (drawing nothing) when deterministic. Returns log pi(action).
float sample_diagonal_gaussian(const float* mean, const float* std, const float* log_std, int64_t size, Rng& rng,
                               bool deterministic, float* action);

// gSDE's exploration matrix: matrix[i] = std[i] * z_i for i in [0, size) (size standard normal
// draws), std the exp of the log-std matrix [L, A].
void draw_sde_matrix(const float* std, int64_t size, Rng& rng, float* matrix);

// gSDE's action for one row (A = size, L = latent_size): action = mean + latent . matrix, with
// matrix [L, A] from draw_sde_matrix, or the mean when deterministic (matrix may be null then). Returns its log-prob under
// N(mean, diag(sigma^2)), sigma_a^2 = sum_l latent_l^2 std[l, a]^2 + kSdeVarianceEpsilon: the
// law of the action over the matrix's draws. Draws nothing.
float sample_state_dependent_gaussian(const float* mean, const float* latent, int64_t latent_size, const float* std,
                                      const float* matrix, int64_t size, bool deterministic, float* action);

// Added to gSDE's variances (SB3's epsilon), so a latent of zeros still has a density.
constexpr double kSdeVarianceEpsilon = 1e-6;

// SAC's squashed Gaussian: u = mean + std * z (size standard normal draws; u = mean, drawing
// nothing, when deterministic), action[0..size) = tanh(u) in [-1, 1], with std = exp(log_std)
// and log_std clamped to [kSacLogStdMin, kSacLogStdMax]. Returns log pi(action) =
// log N(u; mean, std) - sum log(1 - tanh(u)^2), the correction computed stably as
// 2 (log 2 - u - softplus(-2u)).
float sample_squashed_gaussian(const float* mean, const float* log_std, int64_t size, Rng& rng, bool deterministic,
                               float* action);

// log(1 - tanh(u)^2), stably for any u: 2 (log 2 - u - softplus(-2u)).
double log_one_minus_tanh_squared(double u);

// With probability epsilon a uniform action, else argmax(q[0..n)), both among the legal actions
// when a mask is given (nonzero = legal). Draws the coin every time, so the stream does not
// depend on the Q-values.
int64_t epsilon_greedy(const float* q, int64_t n, double epsilon, Rng& rng, const uint8_t* mask = nullptr);

}  // namespace rlx
