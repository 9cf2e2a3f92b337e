// RolloutPolicy: what a rollout worker runs each step, one batched inference call for all K
// envs, writing into caller-owned buffers. Torch-free: the networks run on the inference
// kernel of models/network_kernel.h, single-threaded (workers are one per core).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "core/rng.h"
#include "models/model_spec.h"
#include "models/network_kernel.h"

namespace rlx {

// K observations as stored (core/observation_layout.h): floats [K, float_slots] and bytes
// [K, byte_slots] (null when the layout has none). A float* converts to it.
struct ObsBatch {
  const float* floats = nullptr;
  const uint8_t* bytes = nullptr;
  ObsBatch(const float* float_part, const uint8_t* byte_part = nullptr) : floats(float_part), bytes(byte_part) {}  // NOLINT: implicit
};

// Caller-owned outputs of RolloutPolicy::act, each with K rows.
struct ActOutput {
  int64_t* action_indices = nullptr;  // [K, D] for indexed actions (D = action_components())
  float* action_values = nullptr;     // [K, A] for Box actions, as sampled (unclipped)
  float* log_probs = nullptr;         // [K] log pi(a|s), when has_policy_outputs()
  float* values = nullptr;            // [K] V(s), when has_values()
};

// Observation normalisation with running statistics shipped by the learner:
// clip((obs - mean) / sqrt(var + 1e-8), -10, 10), elementwise over [O].
class ObsNormalizer {
 public:
  // Installs statistics; throws std::invalid_argument when mean/var sizes differ from obs_size or var < 0.
  void set(int64_t obs_size, const std::vector<float>& mean, const std::vector<float>& var, double count);
  // Drops the statistics: apply() becomes a plain copy.
  void clear();
  bool active() const { return !mean_.empty(); }
  const std::vector<float>& mean() const { return mean_; }
  const std::vector<float>& var() const { return var_; }
  double count() const { return count_; }
  // Normalises rows [rows, O] from in to out (which may alias); requires active().
  void apply(const float* in, int64_t rows, float* out) const;

 private:
  std::vector<float> mean_, var_, std_;
  double count_ = 0.0;
};

// The policy a rollout worker steps with. Not thread-safe: one per worker thread.
class RolloutPolicy {
 public:
  virtual ~RolloutPolicy() = default;

  // Chooses actions for num_envs stored observations (raw, unnormalised) with one forward call
  // and fills out's buffers: action_indices or action_values, and log_probs/values when
  // has_policy_outputs(). Never chooses an action the observation's mask forbids.
  virtual void act(const ObsBatch& obs, int num_envs, const ActOutput& out) = 0;
  // Overwrites the weights from a flat float32 vector (see policy_model.h for the order) and
  // records its version; throws std::invalid_argument when count differs from num_parameters().
  virtual void load_weights(const float* params, size_t count, uint64_t version) = 0;
  // Number of floats load_weights expects.
  virtual size_t num_parameters() const = 0;
  // The current weights as a flat float32 vector.
  virtual std::vector<float> weights() const = 0;
  // True when act() fills log_probs and values.
  virtual bool has_policy_outputs() const = 0;
  // A fragment starts with the next act(): exploration noise held over steps (gSDE's) is redrawn
  // there, so a fragment's actions depend on the generator's state at its start alone.
  virtual void begin_fragment() {}
  // Whether act() reports V(s) too (a PPO worker whose learner recomputes the values skips it).
  virtual bool has_values() const { return has_policy_outputs(); }

  // Version of the loaded weights (0 until the first load_weights).
  uint64_t version() const { return version_; }
  // The model spec, its kind that of this policy.
  const ModelSpec& config() const { return config_; }
  // The network's input width (the observation flattened).
  int64_t obs_size() const { return config_.obs_size; }
  // Where each part of a stored observation lies.
  const ObservationLayout& observation_layout() const { return layout_; }
  // A for Box actions, 0 for indexed ones (the SampleBatch convention).
  int64_t action_size() const { return config_.indexed_actions() ? 0 : config_.action_space.size(); }
  // Indices per action: 1 for Discrete, action_space.size() for MultiDiscrete and MultiBinary.
  int64_t action_components() const { return config_.indexed_actions() ? config_.action_space.size() : 1; }

  // Normalise observations before the network with learner-shipped running statistics.
  void set_obs_normalizer(const std::vector<float>& mean, const std::vector<float>& var, double count) {
    normalizer_.set(config_.obs_size, mean, var, count);
  }
  // Feed observations to the network unnormalised again.
  void clear_obs_normalizer() { normalizer_.clear(); }
  const ObsNormalizer& obs_normalizer() const { return normalizer_; }

  // A recurrent model's state: floats per env (0 for a memoryless model), and the states [K,
  // state_size] of the K envs act() steps. They start at zeros and are zeroed again when act()
  // is called for a different K; act() reads and advances them.
  int64_t state_size() const { return state_size_; }
  const std::vector<float>& states() const { return states_; }
  // Zeroes env k's state (its episode starts); nothing for k beyond the states held.
  void reset_state(int k);
  // Sets the states of num_envs envs ([num_envs, state_size], e.g. a fragment's first states on
  // resume); throws std::invalid_argument on a size mismatch.
  void set_states(const std::vector<float>& states, int num_envs);

  // The action-sampling generator's state (for an exact resume), and its restore.
  Rng::State rng_state() const { return rng_.state(); }
  void set_rng_state(const Rng::State& state) { rng_.set_state(state); }

 protected:
  // The spec with its kind set to the policy's own; seed starts the action-sampling generator.
  RolloutPolicy(ModelSpec config, ModelKind kind, uint64_t seed);
  // The network's input [num_envs, obs_size]: the floats themselves when they are the flat input
  // and no normalizer is set, else the flattened (and normalised) observations in a reused buffer.
  const float* prepare_obs(const ObsBatch& obs, int num_envs);
  // Row k's action mask, or null when observations carry none.
  const uint8_t* mask_of(const ObsBatch& obs, int k) const {
    return layout_.mask_size == 0 ? nullptr : obs.bytes + k * layout_.byte_slots + layout_.mask_offset;
  }
  void set_version(uint64_t version) { version_ = version; }
  // The states of num_envs envs for act() to step: states_ itself, zeroed when sized anew; null
  // for a memoryless model.
  float* states_for(int num_envs);

  ModelSpec config_;
  Rng rng_;  // draws sampled actions and exploration
  int64_t state_size_ = 0;    // set by a recurrent policy's constructor

 private:
  ObservationLayout layout_;
  ObsNormalizer normalizer_;
  std::vector<float> normalized_obs_;
  std::vector<float> states_;  // [K, state_size_]
  uint64_t version_ = 0;
};

// PPO-style policy: samples from the ActorCritic's categorical / diagonal Gaussian (or takes
// argmax / mean when deterministic) and reports log pi(a|s) and V(s). Sampling draws from an
// rlx::Rng seeded at construction, so a seed fixes the action stream.
class ActorCriticPolicy : public RolloutPolicy {
 public:
  // Freshly initialised weights (initial_parameters of the layout, seeded with seed; weights
  // normally arrive via load_weights). Without values, act() leaves out V(s) and the value head.
  ActorCriticPolicy(const ModelSpec& config, uint64_t seed, bool deterministic = false, bool values = true);

  void act(const ObsBatch& obs, int num_envs, const ActOutput& out) override;
  void load_weights(const float* params, size_t count, uint64_t version) override;
  size_t num_parameters() const override;
  std::vector<float> weights() const override;
  bool has_policy_outputs() const override { return true; }
  bool has_values() const override { return values_wanted_; }

  // gSDE: the step count restarts, so act() redraws every env's exploration matrix next.
  void begin_fragment() override { sde_steps_ = 0; }
  // Switch between sampling and argmax / mean actions.
  void set_deterministic(bool deterministic) {
    deterministic_ = deterministic;
    sde_matrices_.clear();  // sampling again draws fresh gSDE matrices
  }
  bool deterministic() const { return deterministic_; }
  const ActorCriticLayout& layout() const { return kernel_.layout(); }

 private:
  ActorCriticKernel kernel_;
  std::vector<float> weights_;
  std::vector<float> policy_out_, values_;  // [K, P] and [K] scratch
  std::vector<int64_t> categories_;         // indexed actions: the categorical size of each element
  bool deterministic_ = false;
  bool values_wanted_ = true;
  // gSDE (ModelSpec::sde): the latent features [K, L], each env's exploration matrix [K, L, A],
  // and the act() calls since begin_fragment (the matrices are redrawn when a multiple of
  // sde_sample_freq, or 0 when it is <= 0).
  std::vector<float> latent_, sde_matrices_;
  int64_t sde_steps_ = 0;
  // Redraws every env's exploration matrix when due (or when num_envs changed); counts the step.
  void advance_sde_noise(int num_envs);
};

// DQN-style policy: argmax of Q(s, .) with probability 1 - epsilon, else a uniformly random
// action drawn with an rlx::Rng seeded at construction. Fills no log_probs / values.
class EpsilonGreedyQPolicy : public RolloutPolicy {
 public:
  // Throws std::invalid_argument unless the action space is Discrete and 0 <= epsilon <= 1.
  // Weights start as initial_parameters of the layout, seeded with seed.
  EpsilonGreedyQPolicy(const ModelSpec& config, double epsilon, uint64_t seed);

  void act(const ObsBatch& obs, int num_envs, const ActOutput& out) override;
  void load_weights(const float* params, size_t count, uint64_t version) override;
  size_t num_parameters() const override;
  std::vector<float> weights() const override;
  bool has_policy_outputs() const override { return false; }

  // Sets the exploration rate; throws std::invalid_argument outside [0, 1].
  void set_epsilon(double epsilon);
  double epsilon() const { return epsilon_; }
  const QNetworkLayout& layout() const { return kernel_.layout(); }

 private:
  QNetworkKernel kernel_;
  std::vector<float> weights_;
  std::vector<float> q_values_;  // [K, n] scratch
  double epsilon_ = 0.0;
};

// SAC's policy: the squashed Gaussian of models/network_layout.h (tanh of the mean when
// deterministic), with probability epsilon a uniform action instead (epsilon 1 before SAC's
// learning starts). Its actions, in [-1, 1] from the network, are scaled affinely to the Box's
// bounds [low, high] (what the env receives and the batch holds). Fills no log_probs / values.
class SquashedGaussianPolicy : public RolloutPolicy {
 public:
  // Throws std::invalid_argument unless the actions are a Box with finite bounds and 0 <= epsilon
  // <= 1. Weights start as initial_parameters of the layout, seeded with seed.
  SquashedGaussianPolicy(const ModelSpec& config, double epsilon, uint64_t seed, bool deterministic = false);

  void act(const ObsBatch& obs, int num_envs, const ActOutput& out) override;
  void load_weights(const float* params, size_t count, uint64_t version) override;
  size_t num_parameters() const override;
  std::vector<float> weights() const override;
  bool has_policy_outputs() const override { return false; }

  // Sets the chance of a uniform random action; throws std::invalid_argument outside [0, 1].
  void set_epsilon(double epsilon);
  double epsilon() const { return epsilon_; }
  const SquashedGaussianLayout& layout() const { return layout_; }

 private:
  SquashedGaussianLayout layout_;
  ChainKernel kernel_;
  std::vector<float> weights_;
  std::vector<float> low_, half_range_;  // [A]: env action = low + (a + 1) * half_range
  std::vector<float> squashed_;          // [A] scratch
  double epsilon_ = 0.0;
  bool deterministic_ = false;
};

// Ape-X's per-worker exploration: epsilon_i = base^(1 + alpha * i / (N - 1)) (0.4, 7 by
// default); a single worker gets base.
double apex_worker_epsilon(int worker_index, int num_workers, double base = 0.4, double alpha = 7.0);

}  // namespace rlx
