// NativePpoLearner: the PPO update of learner/ppo_learner.h (single process, no shard, no hooks)
// for separate policy and value MLPs on CPU, without LibTorch, so that a small run (CartPole)
// never loads it. The same algorithm step for step, to float rounding: batch checks with the
// same messages; observation statistics updated first (or, with obs_stats_after_update, after
// the update, which then sees the observations as the workers did) and applied as float32;
// reward scaling; values recomputed (or the batch's) for GAE with final-observation bootstrap
// at truncations and bootstrap_obs at fragment ends; epochs of minibatches in the permutation
// stream PpoLearner draws (an Rng seeded from (seed, num_updates)); per-minibatch advantage
// normalisation; clipped surrogate (indexed actions as categoricals per element, masked as the
// workers mask them: native/ppo_objective.h), optional value clipping, entropy bonus; global gradient-norm
// clipping (grad_clip); torch::optim::Adam's step; the linear lr and clip schedules; and the
// rollback of a non-finite update. Gradients are hand-written (ActorCriticBackprop's
// formulas), the products are native/dense_backprop.h's vectorised loops, large ones split over
// native/product_threads.h's threads (the same bits for any count).
//
// save()/load() write and read the PPO learners' one file format (native/ppo_state_file.h), which
// LibTorch's PpoLearner reads and writes too.
// Statistics and counters travel in state_json(), as with PpoLearner.
#pragma once

#include <cstdint>
#include <functional>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/algorithm_config.h"
#include "core/sample_batch.h"
#include "models/model_spec.h"
#include "models/network_layout.h"
#include "models/weights.h"
#include "native/chain_backprop.h"
#include "native/ppo_update_metrics.h"
#include "native/ppo_update_steps.h"
#include "native/running_mean_std.h"

namespace rlx {

class NativePpoLearner {
 public:
  // Why this learner cannot train this model/config (e.g. a shared trunk), nullopt when it can.
  static std::optional<std::string> unsupported(const ModelSpec& model_config, const PpoConfig& config);

  // Initial weights from models' initial_parameters(actor_critic_layout(model_config), seed); throws on a bad or unsupported config.
  NativePpoLearner(const ModelSpec& model_config, PpoConfig config, uint64_t seed);
  ~NativePpoLearner();
  NativePpoLearner(NativePpoLearner&&) noexcept;
  NativePpoLearner& operator=(NativePpoLearner&&) noexcept;
  NativePpoLearner(const NativePpoLearner&) = delete;
  NativePpoLearner& operator=(const NativePpoLearner&) = delete;

  // One PPO update on the fragments (each needs log_probs, and values unless recompute_values);
  // the schedules are evaluated at timesteps_done. Throws std::invalid_argument on a batch that
  // does not fit the model (nothing has changed then), NonFiniteLearnerError
  // (core/non_finite_error.h) when a minibatch's loss or gradient norm is not finite, after
  // undoing the whole update (parameters, Adam state, statistics, update count); StopRequested
  // (core/stop_signal.h), after the same undo, when the stop check turns true between two
  // minibatch steps.
  PpoUpdateMetrics update(const std::vector<SampleBatch>& batches, int64_t timesteps_done);
  // Replaces what update() reads before each minibatch step to abandon (rlx::stop_overdue by
  // default; a test counts steps with its own).
  void set_stop_check(std::function<bool()> overdue) { stop_check_ = std::move(overdue); }

  // Flat float32 parameters and the observation statistics (when normalising), for workers;
  // the same layout and content as PpoLearner::weights.
  std::shared_ptr<Weights> weights(uint64_t version) const;

  // Parameters and Adam state in native/ppo_state_file.h's format.
  void save(std::ostream& out) const;
  // Reads save()'s format; throws std::invalid_argument naming the mismatch (magic, parameter
  // count, truncation) and then changes nothing.
  void load(std::istream& in);
  // Statistics and counters as JSON: {"obs_stats", "reward_scaler", "num_updates", "seed"}.
  nlohmann::json state_json() const;
  // Restores state_json()'s form; throws std::invalid_argument on a malformed or mismatched state.
  void load_state_json(const nlohmann::json& state);

  // The hyperparameters in use.
  const PpoConfig& config() const { return config_; }
  // Changes hyperparameters (e.g. on a PBT explore step); throws on a bad config.
  void set_config(PpoConfig config);
  // Flat parameters in the layout's order.
  const std::vector<float>& parameters() const { return params_; }
  // Overwrites the parameters; throws std::invalid_argument on a size mismatch.
  void set_parameters(const std::vector<float>& flat);
  // Updates done so far (restored by load_state_json).
  int64_t num_updates() const { return num_updates_; }

 private:
  struct Snapshot;  // what an update changes, to undo it

  void check_batches(const std::vector<SampleBatch>& batches) const;
  // Stages the update's samples: normalised observations, actions, and the columns (old
  // log-probs, advantages, returns, old values); returns the explained variance.
  double prepare(const std::vector<SampleBatch>& batches);
  void normalize_rows(float* obs, int64_t rows) const;
  // Folds the batches' observations into the statistics and uses them (use_obs_stats).
  void update_obs_stats(const std::vector<SampleBatch>& batches);
  // normalize_rows applies the statistics as they are now, rounded to float32 as the workers' are.
  void use_obs_stats();
  // Gradient of one minibatch (rows of the staged samples in `order`) into grads_; writes the
  // loss statistics [policy_loss, vf_loss, entropy, approx_kl, clip_fraction].
  void minibatch_gradients(const int64_t* order, int64_t rows, double clip_param, double stats[5]);
  // Puts back what update() changed (parameters, Adam state, statistics, update count).
  void restore(const Snapshot& before);

  ModelSpec model_config_;
  PpoConfig config_;
  uint64_t seed_;
  ActorCriticLayout layout_;
  std::vector<float> params_, grads_, exp_avg_, exp_avg_sq_;  // [P] each
  int64_t adam_step_ = 0;
  RunningMeanStd obs_stats_;
  RewardScaler reward_scaler_;
  std::vector<float> obs_mean_, obs_var_;  // float32 [O], what normalisation uses
  int64_t num_updates_ = 0;
  std::unique_ptr<ChainBackprop> policy_, value_;  // the policy and value MLPs

  // Staging buffers, reused across updates.
  std::vector<float> obs_;             // [N + E, O] normalised: samples, then final / bootstrap observations
  std::vector<float> old_log_probs_, advantages_, returns_, old_values_;  // [N]
  std::vector<int64_t> categories_;      // indexed actions: the categorical segments' sizes (ModelSpec::action_categories)
  std::vector<int64_t> action_indices_;  // [N, D] indexed actions
  std::vector<uint8_t> masks_;           // [N, P] the legal logits, when the model masks actions
  std::vector<float> action_values_;     // [N, A] Box
  std::vector<float> scaled_rewards_, all_values_;
  PpoMinibatchOrder minibatches_;
  // Minibatch buffers.
  std::vector<float> mb_obs_, mb_policy_grad_, mb_value_grad_, mb_log_p_, mb_normalized_advantages_;

  std::function<bool()> stop_check_;  // true: abandon the update under way
};

}  // namespace rlx
