// PpoLearner: the PPO update on one device. Takes time-major fragments (core/sample_batch.h),
// normalises observations and scales rewards with running statistics, computes GAE targets with
// the current value network, and runs epochs of shuffled minibatch Adam steps on ppo_loss.
//
// Observation normalisation: the statistics are updated with each update's raw observations
// first; then every observation of the update (and the final / bootstrap observations) is
// normalised with those current statistics, for the value targets and the new log-probs alike.
// The behaviour log-probs in the batch were computed by the worker on observations normalised
// with the (slightly older) statistics it had. The ratio therefore starts a little off 1 when
// the statistics moved; they move slowly, and this way the policy that is optimised is exactly
// the policy (weights + statistics) that is shipped to the workers next.
//
// Speed: gradients come from ActorCriticBackprop (a hand-written backward, no autograd) unless
// the config turns that off or the model shares a trunk. The model's parameters live in one
// flat buffer (each parameter a view of it) with one flat gradient buffer, so Adam, gradient
// clipping and zeroing are a handful of ops per step regardless of the number of layers, and a
// data-parallel all-reduce sees one tensor. Hence: optimizer() holds that single flat tensor;
// model() must not be moved to another device or have its parameters replaced; and never call
// zero_grad() on either (the learner manages the gradient buffer). On a small CPU machine run
// the learner with one intra-op thread (set_inference_threads(1)): tiny GEMMs do not gain from
// two, and contend with the samplers.
//
// APPO (config.vtrace, config.kl_coeff; see core/algorithm_config.h): V-trace replaces GAE,
// with pi the network at the start of the update and mu the workers' policy (the batch's
// log-probs); the surrogate's ratio stays pi/mu, clipped. With kl_coeff > 0 the loss adds
// kl_coeff * KL(target || pi), the target network a copy of the weights taken every
// target_update_frequency updates; that term's gradient comes from autograd. With
// behaviour_ratio off (APPO's vtrace: false, an ablation) the ratio is pi over the learner's own
// policy at the start of the update: no correction for the workers' lag at all. The target is not
// checkpointed: a restored learner takes its weights as the target.
//
// Minibatch order: each update shuffles with an rlx::Rng seeded from (seed, num_updates), so a
// checkpoint needs only num_updates (in state_json) to reproduce the next permutations.
#pragma once

#include <cstdint>
#include <functional>
#include <iosfwd>
#include <memory>
#include <vector>

#include <nlohmann/json.hpp>
#include <torch/optim/adam.h>
#include <torch/types.h>

#include "core/algorithm_config.h"
#include "core/rng.h"
#include "core/sample_batch.h"
#include "learner/policy_networks.h"
#include "learner/ppo_loss.h"
#include "models/model_config.h"
#include "models/weights.h"
#include "native/ppo_update_metrics.h"
#include "native/running_mean_std.h"

namespace rlx {

class ActorCriticBackprop;

// GAE targets of fragments, each [N] in fragment order (t-major within a fragment).
struct PpoTargets {
  std::vector<float> values;      // V(s_t) used (current network, or the batch's)
  std::vector<float> advantages;
  std::vector<float> returns;
};

// Seams for data-parallel training (no communication here; learner/data_parallel.h builds them
// from a Communicator).
struct PpoDataParallelHooks {
  // After backward, before clipping: replace the gradients (one flat float tensor) by their SUM
  // over ranks, in place. Each rank has already weighted its gradient by its share of the
  // global minibatch (see PpoShard), so the sum is the gradient of the global minibatch's loss.
  std::function<void(std::vector<torch::Tensor>& grads)> allreduce_gradients;
  // Per minibatch: sum [sum(A), sum(A^2), count] over ranks in place, so advantages are
  // normalised with the global minibatch's statistics.
  AdvantageMomentsReducer allreduce_advantage_moments;
  // Sums host doubles over ranks in place (observation moments, explained variance, loss
  // statistics); needed by a sharded update.
  std::function<void(std::vector<double>& values)> allreduce_host;
};

// Where this rank's fragments lie in a data-parallel update's global batch: the global batch is
// every rank's fragments concatenated in the driver's order; every rank draws the same global
// minibatch permutation and trains on the members it holds, weighting its gradient by
// (members held / global minibatch size), so the summed gradient is exactly the one a single
// learner computes on the whole batch.
struct PpoShard {
  int64_t global_samples = 0;             // N over all ranks
  std::vector<int64_t> fragment_offsets;  // global index of each local fragment's first sample
  // Per local fragment: sample (t, k) lies at global offset + t * stride + k (a fragment split
  // by envs keeps its samples' places in the whole fragment); empty: every stride is the
  // fragment's own K (contiguous).
  std::vector<int64_t> fragment_strides;
  bool rewards_prescaled = false;         // the driver already applied scale_rewards() to the whole batch
};

class PpoLearner {
 public:
  // Builds the ActorCritic on device, Adam over its parameters and the statistics; seed fixes
  // the model's initial weights and the minibatch permutations. Throws on a bad config.
  PpoLearner(const PolicyModelConfig& model_config, PpoConfig config, uint64_t seed,
             torch::Device device = torch::kCPU);
  ~PpoLearner();
  PpoLearner(const PpoLearner&) = delete;
  PpoLearner& operator=(const PpoLearner&) = delete;

  // One PPO update on the fragments (each needs log_probs, and values unless recompute_values);
  // the schedules are evaluated at timesteps_done. Throws std::invalid_argument on a batch that
  // does not fit the model; then nothing has changed. Throws NonFiniteLearnerError
  // (learner/non_finite.h) when a minibatch's loss or gradient norm is not finite, after undoing
  // the whole update (weights, Adam state, statistics, update count).
  // With a shard (and the hooks installed), this rank's part of a data-parallel update: every
  // rank calls it with its own fragments and the same shard layout, metrics are global.
  PpoUpdateMetrics update(const std::vector<SampleBatch>& batches, int64_t timesteps_done,
                          const PpoShard* shard = nullptr);

  // When scale_rewards: replaces every fragment's rewards by the scaled rewards, updating the
  // scaler as update() would (a data-parallel driver does this to the whole batch, in order,
  // before it shards it, so the per-env running returns see every fragment).
  void scale_rewards(std::vector<SampleBatch>& batches);

  // The loss of the current model on the fragments as one minibatch, with the current
  // statistics, changing nothing (rewards scaled without updating the scaler).
  PpoUpdateMetrics evaluate(const std::vector<SampleBatch>& batches, int64_t timesteps_done);

  // The GAE targets the next update would train on, with the current model and statistics,
  // changing nothing (rewards scaled without updating the scaler).
  PpoTargets compute_targets(const std::vector<SampleBatch>& batches);

  // Flat float32 parameters and the observation statistics (when normalising), for workers.
  std::shared_ptr<Weights> weights(uint64_t version) const;

  // Parameters and Adam state in the PPO learners' one file format (native/ppo_state_file.h,
  // which the native learner reads and writes too). load() expects the same model config and also
  // reads the LibTorch archives of earlier rlx versions; together with load_state_json() it
  // restores bit-identical subsequent updates.
  void save(std::ostream& out) const;
  void load(std::istream& in);
  // Statistics and counters as JSON: {"obs_stats", "reward_scaler", "num_updates", "seed"}.
  nlohmann::json state_json() const;
  // Restores state_json()'s form; throws std::invalid_argument on a malformed or mismatched state.
  void load_state_json(const nlohmann::json& state);

  // The hyperparameters in use.
  const PpoConfig& config() const { return config_; }
  // Changes hyperparameters (e.g. on a PBT explore step); throws on a bad config.
  void set_config(PpoConfig config);
  // Installs the data-parallel seams (empty functions: single-process behaviour).
  void set_data_parallel_hooks(PpoDataParallelHooks hooks) { hooks_ = std::move(hooks); }

  // The trained model (parameters are views of the flat buffer; see the top of this file).
  ActorCritic& model() { return *model_; }
  // Adam over the one flat parameter tensor.
  torch::optim::Adam& optimizer() { return *optimizer_; }
  // Running observation statistics (updated only when normalize_observations).
  const RunningMeanStd& obs_stats() const { return obs_stats_; }
  // Running discounted-return statistics (updated only when scale_rewards).
  const RewardScaler& reward_scaler() const { return reward_scaler_; }
  torch::Device device() const { return device_; }
  // Updates done so far (restored by load_state_json).
  int64_t num_updates() const { return num_updates_; }

 private:
  struct Prepared;  // flat device tensors of one update's samples
  struct Snapshot;  // what an update changes, to undo it
  Snapshot take_snapshot() const;
  void restore_snapshot(const Snapshot& snapshot);
  void check_batches(const std::vector<SampleBatch>& batches) const;
  void prepare(const std::vector<SampleBatch>& batches, bool update_statistics, Prepared& out,
               const PpoShard* shard = nullptr);
  void load_torch_archive(std::istream& in);  // the format before native/ppo_state_file.h
  void update_obs_stats_sharded(const std::vector<SampleBatch>& batches);
  // Folds the batches' observations into the statistics (across the shards when sharded) and
  // refreshes the tensors normalize() applies.
  void update_obs_stats(const std::vector<SampleBatch>& batches, const PpoShard* shard);
  PpoLossOptions loss_options(double clip_param) const;
  torch::Tensor normalize(const torch::Tensor& obs) const;
  void refresh_obs_tensors();
  void flatten_parameters();
  void refresh_backprop();
  // One minibatch's gradient into flat_grads_; returns the loss statistics.
  torch::Tensor minibatch_gradients(const torch::Tensor& obs, const torch::Tensor& actions, const torch::Tensor& columns,
                                    const torch::Tensor& target_policy, const PpoLossOptions& options);
  // log pi(a|s) - log mu(a|s) of the n staged samples into log_ratios_ (current network, for
  // V-trace); without behaviour_ratio, log pi(a|s) also replaces the staged old log-probs.
  void stage_log_ratios(const torch::Tensor& obs, const torch::Tensor& actions, int64_t n);
  // APPO's target network (built with the current weights on first use), and its refresh.
  ActorCritic& target_model();
  void refresh_target();

  PolicyModelConfig model_config_;
  PpoConfig config_;
  uint64_t seed_;
  torch::Device device_;
  std::shared_ptr<ActorCritic> model_;
  std::shared_ptr<ActorCritic> target_model_;  // kl_coeff > 0: the policy the KL term pulls towards
  torch::Tensor flat_params_;  // [P] storage of every model parameter
  torch::Tensor flat_grads_;   // [P] storage of every parameter's gradient
  std::unique_ptr<torch::optim::Adam> optimizer_;
  std::unique_ptr<ActorCriticBackprop> backprop_;  // set when analytic gradients apply
  RunningMeanStd obs_stats_;
  RewardScaler reward_scaler_;
  torch::Tensor obs_mean_, obs_var_;  // float32 [O] on device, what normalize() uses
  PpoDataParallelHooks hooks_;
  int64_t num_updates_ = 0;

  // Host staging buffers, reused across updates.
  std::vector<float> obs_host_;        // [N + E, O] raw: samples, then extra (final / bootstrap) observations
  std::vector<float> columns_host_;    // [4, N] old log-probs, advantages, returns, old values
  std::vector<int64_t> action_index_host_;
  std::vector<float> action_value_host_;
  std::vector<float> scaled_rewards_;
  std::vector<float> final_values_;
  std::vector<float> log_ratios_;      // V-trace's log pi - log mu per sample
  std::vector<int64_t> permutation_;
};

}  // namespace rlx
