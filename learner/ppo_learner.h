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
// Speed: gradients come from ActorCriticBackprop (a hand-written backward, no autograd) unless the
// config turns that off, the precision is not fp32 or the model shares a trunk. The model's
// parameters live in one flat buffer (each parameter a view of it) with one flat gradient buffer,
// so Adam, gradient clipping and zeroing are a handful of ops per step regardless of the number of
// layers, and a data-parallel all-reduce sees one tensor. Hence: optimizer() holds that single flat
// tensor; model() must not be moved to another device or have its parameters replaced; and never
// call zero_grad() on either (the learner manages the gradient buffer). On a small CPU machine run
// the learner with one intra-op thread (set_inference_threads(1)): tiny GEMMs do not gain from two,
// and contend with the samplers.
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
// Precision (config.precision, learner/mixed_precision.h): bf16 and fp16 run each minibatch step's
// forward pass and loss under autocast, the network's outputs cast back to float32 before the
// distribution and the loss; the parameters, gradients, Adam and the gradient all-reduce stay
// float32, and so does the pass that computes the update's values and targets (GAE, V-trace: no
// gradient, once per update). Gradients come from autograd then (autocast does not reach the
// hand-written backward). fp16 (CUDA only; the constructor refuses it on the CPU) scales the loss
// dynamically: a step whose unscaled gradient is not finite is skipped (metrics.skipped_steps) and
// the scale backs off; the scale is part of state_json.
//
// Minibatch order: each update shuffles with an rlx::Rng seeded from (seed, num_updates), so a
// checkpoint needs only num_updates (in state_json) to reproduce the next permutations.
//
// A stop (core/stop_signal.h): one learner's update reads its stop check (rlx::stop_overdue) before
// each minibatch step and, once the stop is overdue, puts back the snapshot every update takes
// (the non-finite rollback's: parameters, Adam, statistics, update count, loss scale) and throws
// StopRequested. A data-parallel update finishes instead.
//
// The code: ppo_learner.cc (construction, configuration, weights), ppo_train_batch.cc (statistics,
// staging, targets), ppo_update.cc (update() and evaluate() as named steps), ppo_sequences.cc (a
// recurrent model's streams and sequences; sequence_shards.h lists them over ranks),
// ppo_learner_state.cc (the undo snapshot, the checkpoint file and state_json).
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
#include "learner/mixed_precision.h"
#include "learner/policy_networks.h"
#include "learner/ppo_loss.h"
#include "models/model_spec.h"
#include "models/weights.h"
#include "native/ppo_fragments.h"
#include "native/ppo_update_metrics.h"
#include "native/ppo_update_steps.h"
#include "native/running_mean_std.h"
#include "native/sequence_plan.h"

namespace rlx {

class ActorCriticBackprop;
struct GlobalSequences;  // learner/sequence_shards.h

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
// learner computes on the whole batch. A recurrent model's shard holds whole env columns, and the
// permutation is over the global batch's sequences (learner/sequence_shards.h), the weight its
// samples held over the minibatch's.
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
  // the model's initial weights and the minibatch permutations. Throws on a bad config
  // (ConfigError for precision fp16 on the CPU).
  PpoLearner(const ModelSpec& model_config, PpoConfig config, uint64_t seed,
             torch::Device device = torch::kCPU);
  ~PpoLearner();
  PpoLearner(const PpoLearner&) = delete;
  PpoLearner& operator=(const PpoLearner&) = delete;

  // One PPO update on the fragments (each needs log_probs, and values unless recompute_values);
  // the schedules are evaluated at timesteps_done. Throws std::invalid_argument on a batch that
  // does not fit the model; then nothing has changed. Throws NonFiniteLearnerError
  // (learner/non_finite.h) when a minibatch's loss or gradient norm is not finite, after undoing
  // the whole update (weights, Adam state, statistics, update count). A learner without
  // data-parallel hooks throws StopRequested (core/stop_signal.h) after the same undo when the
  // stop check turns true before a minibatch step: an update that outlasts half a stop's grace
  // period is abandoned.
  // With a shard (and the hooks installed), this rank's part of a data-parallel update: every
  // rank calls it with its own fragments and the same shard layout, metrics are global; it
  // never abandons for a stop (the ranks would part ways in a collective), so it finishes.
  PpoUpdateMetrics update(const std::vector<SampleBatch>& batches, int64_t timesteps_done,
                          const PpoShard* shard = nullptr);
  // Replaces what update() (without hooks) reads before each minibatch step to abandon
  // (rlx::stop_overdue by default; a test counts steps with its own).
  void set_stop_check(std::function<bool()> overdue) { stop_check_ = std::move(overdue); }

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
  // Statistics and counters as JSON: {"obs_stats", "reward_scaler", "num_updates", "seed"}, and
  // with precision fp16 "loss_scaler" (LossScaler::to_json).
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
  // The dynamic loss scale (enabled with precision fp16 only).
  const LossScaler& loss_scaler() const { return scaler_; }

  // The parameter-server strategy (ppo_task_update.cc): an update as numbered tasks, task t the
  // minibatch step t % M of epoch t / M in one learner's order (M minibatches per epoch).
  // Prepares the whole batch as update() does (statistics, targets at the current weights; the
  // rewards already scaled by the driver) and fixes every epoch's order; returns the task count.
  // std::invalid_argument for a recurrent model or precision fp16.
  int64_t begin_tasks(const std::vector<SampleBatch>& batches, int64_t timesteps_done);
  // Task `task`'s gradient of the minibatch loss (not clipped) at weights `params`, which this
  // learner takes; its loss statistics ([PpoLossStat::kCount]) in `statistics`.
  void task_gradient(int64_t task, const std::vector<float>& params, std::vector<float>& gradient,
                     std::vector<float>& statistics);
  // The server's step: clips `gradient` by its norm as update() does, then one Adam step at the
  // update's lr. NonFiniteLearnerError for a non-finite gradient (nothing is changed).
  void apply_task_gradient(const std::vector<float>& gradient);
  // Ends the tasks' update: the update counter moves on; metrics from the pushed statistics'
  // sums over `steps` applied gradients (the server's; a rank that only computed passes {}, 0).
  PpoUpdateMetrics end_tasks(const std::vector<double>& statistic_sums, int64_t steps);
  // The flat parameters now.
  std::vector<float> flat_parameters() const;

 private:

  // One update's samples on the device, rows in native/ppo_fragments.h's order (this rank's N).
  struct TrainBatch {
    enum Column : int64_t { kOldLogProbs = 0, kAdvantages, kReturns, kOldValues, kNumColumns };  // rows of columns
    int64_t num_samples = 0;      // N
    torch::Tensor obs;            // [N, O] normalised
    torch::Tensor actions;        // [N, D] int64 indices or [N, A] float
    torch::Tensor masks;          // [N, P] bool, the legal logits, when the model masks actions; else undefined
    torch::Tensor columns;        // [kNumColumns, N] old log-probs, advantages, returns, old values
    torch::Tensor target_policy;  // [N, P or A] the target network's logits or means (APPO's KL term); else undefined
    double explained_variance = 0.0;
    // A recurrent model: the update's streams and sequences (native/sequence_plan.h) and the
    // state each sequence starts from, [sequences, S] on the device; else null and undefined.
    std::shared_ptr<const SequencePlan> plan;
    torch::Tensor sequence_states;
  };
  // begin_tasks' prepared batch and epoch orders, until end_tasks (ppo_task_update.cc).
  struct TaskUpdate {
    TrainBatch data;
    std::vector<std::vector<int64_t>> orders;  // each epoch's permutation of the batch
    int64_t minibatches = 0;                   // per epoch
    PpoLossOptions options;
    PpoUpdateMetrics metrics;
    double grad_norm_sum = 0.0;                // the server's: norms of the gradients it applied
  };
  // The sequences one recurrent minibatch holds, its rows one sequence after another.
  struct MinibatchSequences {
    std::vector<int64_t> lengths;  // steps of each sequence, in row order
    torch::Tensor states;          // [sequences, S] the state each starts from
  };
  // What an update changes, to undo it.
  struct Snapshot {
    torch::Tensor params;
    std::vector<torch::Tensor> adam;  // exp_avg, exp_avg_sq (, max_exp_avg_sq) of the flat parameter; empty before the first step
    int64_t adam_step = 0;
    RunningMeanStd obs_stats;
    RewardScaler reward_scaler;
    int64_t num_updates = 0;
    LossScaler loss_scaler;
  };
  struct StepSums;       // sums over one update's minibatch steps (ppo_update.cc)
  struct MinibatchSlot;  // where one minibatch step lies (ppo_update.cc)

  // Construction and configuration (ppo_learner.cc).
  // Moves every parameter into a view of flat_params_, its gradient a view of flat_grads_.
  void flatten_parameters();
  // Builds or drops the hand-written backward as config and model allow.
  void refresh_backprop();
  // The statistics as the float32 tensors normalize() applies (undefined when not normalising).
  void refresh_obs_tensors();
  // The observations normalised with the current statistics (as they are when not normalising).
  torch::Tensor normalize(const torch::Tensor& obs) const;
  // ppo_loss's options from the config, with this update's clip_param.
  PpoLossOptions loss_options(double clip_param) const;
  // check_ppo_batches for this model and config.
  void check_batches(const std::vector<SampleBatch>& batches) const;
  // APPO's target network (built with the current weights on first use), and its refresh.
  ActorCritic& target_model();
  void refresh_target();

  // The train batch: statistics, staging and targets (ppo_train_batch.cc).
  // Folds the batches' observations into the statistics (across the shards when sharded) and
  // refreshes the tensors normalize() applies.
  void update_obs_stats(const std::vector<SampleBatch>& batches, const PpoShard* shard);
  // update_obs_stats over every rank's observations: global moments from two all-reduces.
  void update_obs_stats_sharded(const std::vector<SampleBatch>& batches);
  // Normalised observations, actions and targets (GAE or V-trace with the current network) of
  // the fragments on the device; folds statistics in (and scales rewards updating the scaler)
  // only when update_statistics.
  TrainBatch prepare(const std::vector<SampleBatch>& batches, bool update_statistics, const PpoShard* shard = nullptr);
  // Host staging: raw observations [N + E, O], actions, old log-probs, and the rewards (scaled
  // unless prescaled, updating the scaler when update_statistics) into the staging buffers.
  void stage_samples(const std::vector<SampleBatch>& batches, const PpoRowCounts& rows, bool update_statistics,
                     bool prescaled);
  // log pi(a|s) - log mu(a|s) of the n staged samples (masks: their legal logits, or undefined)
  // into log_ratios_ (current network, for V-trace); without behaviour_ratio, log pi(a|s) also
  // replaces the staged old log-probs.
  void stage_log_ratios(const torch::Tensor& policy_out, const torch::Tensor& actions, const torch::Tensor& masks, int64_t n);

  // A recurrent model's train batch (ppo_sequences.cc).
  // Runs the current network over every fragment's streams from their shipped states (no
  // gradient): plans the sequences and their start states into out, stages the log ratios (and
  // APPO's target policy) as prepare() does, and returns the values of all N + E rows on the host.
  torch::Tensor prepare_sequences(const std::vector<SampleBatch>& batches, const torch::Tensor& obs_all, int64_t n,
                                  TrainBatch& out);
  // Policy outputs and values of a minibatch's rows [M, O] that hold whole sequences in order.
  PolicyOutput sequence_outputs(const torch::Tensor& obs, const MinibatchSequences& sequences);
  // The sequences a recurrent update shuffles: the whole batch's (listed alike on every rank from
  // one all-reduce when sharded), each with its local index on this rank or -1.
  GlobalSequences update_sequences(const std::vector<SampleBatch>& batches, const TrainBatch& data,
                                   const PpoShard* shard) const;
  // The epochs of a recurrent update: each epoch's minibatches are shuffled whole sequences of
  // `global`; a sharded rank trains on its members of each (weighted by their share of its samples).
  StepSums run_sequence_epochs(const TrainBatch& data, const GlobalSequences& global, bool sharded,
                               const PpoLossOptions& options, const Snapshot& before);
  // Every sequence of the batch as one minibatch (evaluate()): its rows in sequence order, and the sequences.
  TrainBatch all_sequences(const TrainBatch& data, MinibatchSequences& sequences) const;

  // The update's steps (ppo_update.cc).
  // Throws unless the hooks are installed and the shard names an offset (and stride) per fragment.
  void check_shard(const std::vector<SampleBatch>& batches, const PpoShard& shard) const;
  // Metrics with the schedules at timesteps_done, the batch's explained variance and num_samples.
  PpoUpdateMetrics scheduled_metrics(int64_t timesteps_done, const TrainBatch& data, int64_t num_samples) const;
  // Points every parameter's gradient at its view of flat_grads_ again (zero_grad(set_to_none) undoes that).
  void reattach_gradients();
  // The epochs of shuffled minibatch steps (local_row: a shard's local row of each global sample);
  // restores `before` and throws NonFiniteLearnerError at a non-finite step.
  StepSums run_epochs(const TrainBatch& data, const PpoShard* shard, const std::vector<int64_t>& local_row,
                      int64_t global_n, const PpoLossOptions& options, const Snapshot& before);
  // The batch's rows in `order` (local rows), on the device.
  TrainBatch rows_in_order(const TrainBatch& data, const std::vector<int64_t>& order) const;
  // One step: this rank's gradient of its rows of the slot (zero when it holds none), weighted by
  // its share and all-reduced, checked finite (else `before` is restored and NonFiniteLearnerError
  // thrown), clipped, and Adam's step; adds the loss statistics and gradient norm to sums. Without
  // shard or hooks, first restores `before` and throws StopRequested when the stop check says so.
  void minibatch_step(const TrainBatch& epoch, const MinibatchSlot& slot, const PpoLossOptions& options,
                      const torch::Tensor& epoch_moments, bool sharded, std::vector<torch::Tensor>& grads,
                      const Snapshot& before, StepSums& sums, const MinibatchSequences* sequences = nullptr);
  // One minibatch's gradient into flat_grads_ (a recurrent model's rows hold `sequences`); returns
  // the loss statistics.
  torch::Tensor minibatch_gradients(const torch::Tensor& obs, const torch::Tensor& actions, const torch::Tensor& masks,
                                    const torch::Tensor& columns, const torch::Tensor& target_policy,
                                    const PpoLossOptions& options, const MinibatchSequences* sequences = nullptr);
  // Policy outputs and values of a minibatch's rows: by sequence for a recurrent model.
  PolicyOutput minibatch_outputs(const torch::Tensor& obs, const MinibatchSequences* sequences);
  // The loss inputs a train batch's columns hold: old log-probs, advantages, returns, old values.
  static void set_column_inputs(const torch::Tensor& columns, PpoLossInputs& in);
  // The means of the steps' sums into metrics (the loss statistics summed over the ranks when sharded).
  void set_step_means(const StepSums& sums, bool sharded, PpoUpdateMetrics& metrics) const;

  // State (ppo_learner_state.cc).
  // What update() changes, copied; restore_snapshot() puts it back.
  Snapshot take_snapshot() const;
  void restore_snapshot(const Snapshot& snapshot);
  // Reads the LibTorch archive of the format before native/ppo_state_file.h.
  void load_torch_archive(std::istream& in);

  ModelSpec model_config_;
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
  Precision precision_ = Precision::kFp32;  // config_.precision
  LossScaler scaler_;                       // enabled for fp16
  std::function<bool()> stop_check_;        // true: abandon the update under way (one learner's)

  // Host staging buffers, reused across updates.
  std::vector<float> obs_host_;        // [N + E, O] raw: samples, then extra (final / bootstrap) observations
  std::vector<float> columns_host_;    // [4, N] old log-probs, advantages, returns, old values
  std::vector<int64_t> action_index_host_;  // [N, D]
  std::vector<uint8_t> mask_host_;          // [N, P] when the model masks actions
  std::vector<float> action_value_host_;
  std::vector<float> scaled_rewards_;
  std::vector<float> log_ratios_;      // V-trace's log pi - log mu per sample
  PpoMinibatchOrder minibatches_;      // each epoch's permutation of the global batch
  std::unique_ptr<TaskUpdate> tasks_;  // between begin_tasks and end_tasks
  bool rewards_prescaled_ = false;     // begin_tasks' prepare: the driver scaled the rewards
};

}  // namespace rlx
