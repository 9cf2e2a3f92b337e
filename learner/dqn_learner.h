// DqnLearner: DQN on one device with a replay buffer (uniform or prioritized), n-step returns,
// double Q, dueling heads (ModelSpec::dueling), a target network, Huber loss, Adam and
// global gradient-norm clipping. Intervals count env steps; see DqnConfig in core/algorithm_config.h.
//
// One gradient step: sample B transitions, target y = R + gamma^m (1 - terminated) Q_t(s', a*)
// with a* = argmax_a Q(s', a) of the online net when double_q (else max_a Q_t(s', a)), loss =
// mean_i w_i huber(Q(s_i, a_i) - y_i) (w = importance weights when prioritized, else 1), then
// Adam after clipping, and |Q(s, a) - y| as the new priorities.
//
// The replay ratio: the caller counts transitions received (from any number of workers) and
// asks training_rounds_due() how many rounds of config.gradient_steps are due; each round is
// one train() call. Rounds that fall due before learning_starts (or while the buffer is not
// ready()) are skipped, as in SB3.
//
// Observations: the replay stores them as the workers send them (floats and bytes, uint8 images
// as bytes; core/observation_layout.h) and a sampled batch is flattened into the network's input
// (gymnasium.spaces.flatten) just before the step. With an action mask, the target's max (double
// Q's argmax) ranges over the actions legal in s', read from the next observation's stored mask.
//
// Determinism: the seed fixes the initial weights and the replay draws (the draw stream of
// gradient step i is derived from (seed, i), so the counters in state_json() are the whole
// RNG state). Checkpoints: save()/load() carry the online and target networks and the Adam
// state; state_json() the counters and seed; save_replay()/load_replay() the replay buffer with
// its carried n-step windows (and priorities). Without the buffer, a restored learner refills it
// to learning_starts before training again (ready() says when); with it, save + load +
// load_state_json + load_replay give bit-identical subsequent updates.
//
// A stop (core/stop_signal.h): train() stops between gradient steps once the stop is overdue, so
// a round of many steps cannot outlast the grace period. Each step is whole (its draw, Adam
// step, priorities and counters), so the learner is sound as it is and a checkpoint of it resumes
// consistently: the next step draws with the next step's seed. Undoing the round instead would
// mean copying the prioritized buffer's priorities too; what is lost is the rest of one round,
// as rounds that fall due before learning_starts are. A data-parallel round finishes.
//
// Speed: both networks' parameters live in one flat buffer each (every parameter a view of
// it, gradients a view of one flat gradient), so Adam, clipping, zeroing and target updates
// are a handful of ops per step whatever the depth; a batch is gathered on the host in one
// copy and wrapped with from_blob (no copy on CPU). online()/target() must therefore not be
// moved to another device or have their parameters replaced. On the CPU the gradient comes from
// QNetworkBackprop (learner/q_network_backprop.h: a hand-written backward, no autograd, several
// times faster on DQN's small networks); elsewhere, or when switched off, from autograd. Adam
// on the CPU is learner/flat_adam.h's one loop over torch's own Adam state.
//
// Precision (config.precision, learner/mixed_precision.h): bf16 and fp16 run each gradient step's
// forward passes (online and target networks) and loss under autocast, the Q-values cast back to
// float32 before the targets and the Huber loss; weights, gradients, Adam and the all-reduce stay
// float32, and gradients come from autograd (not QNetworkBackprop's float32 pass). fp16 (CUDA
// only) scales the loss dynamically: a step whose unscaled gradient is not finite is skipped
// (counted, its transitions' priorities kept, num_gradient_steps counting it still) and the
// scale backs off; the scale is part of state_json.
//
// Where the code is: dqn_learner.cc (construction, ingest, readiness, train() and its metrics),
// dqn_update.cc (the gradient step and target sync), dqn_checkpoint.cc (save/load, replay bytes,
// counters), learner/dqn_replay.h (the buffer from DqnConfig, each step's draw seed).
#pragma once

#include <cstdint>
#include <functional>
#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <torch/optim/adam.h>
#include <torch/types.h>

#include "core/algorithm_config.h"
#include "core/observation_layout.h"
#include "core/rng.h"
#include "core/sample_batch.h"
#include "learner/communicator.h"
#include "learner/mixed_precision.h"
#include "learner/prioritized_replay.h"
#include "learner/replay_buffer.h"
#include "learner/policy_networks.h"
#include "models/model_spec.h"
#include "models/weights.h"

namespace rlx {

// Seams for data-parallel DQN (learner/data_parallel.h builds them from a Communicator). Each
// rank keeps its own replay shard (the transitions it was given) and samples
// batch_size / world_size of every gradient step from it; the gradients are summed after each
// rank weighted its own by 1 / world_size, i.e. the mean loss over the global batch.
struct DqnDataParallelHooks {
  int rank = 0;
  int world_size = 1;
  // After backward, before clipping: the flat gradient's SUM over ranks, in place.
  std::function<void(std::vector<torch::Tensor>& grads)> allreduce_gradients;
  // Reduces host doubles over ranks in place (readiness, metrics, prioritized-replay weights).
  std::function<void(std::vector<double>& values, ReduceOp op)> allreduce_host;
};

// Means over one train() call's gradient steps unless noted.
struct DqnUpdateMetrics {
  double loss = 0.0;                // Huber loss (importance-weighted when prioritized)
  double q_mean = 0.0;              // Q(s, a) of the sampled transitions
  double td_abs_mean = 0.0;         // |Q(s, a) - y|
  double grad_norm = 0.0;           // global gradient norm before clipping (applied steps)
  double lr = 0.0;
  double epsilon = 0.0;             // exploration schedule at timesteps_done
  double beta = 0.0;                // importance exponent used (0 without prioritized replay)
  int64_t target_updates = 0;       // target-network updates so far (intervals passed)
  int64_t num_gradient_steps = 0;   // so far, over all calls
  int64_t buffer_size = 0;          // transitions stored now
  // precision fp16: this call's steps skipped for an inf or NaN gradient (not in the means; all
  // of them skipped: the means are NaN), and the loss scale after it; else 0 and 0.
  int64_t skipped_steps = 0;
  double loss_scale = 0.0;
};

class QNetworkBackprop;
struct DqnBatch;
struct DqnLossOutput;

class DqnLearner {
 public:
  // Builds online and target QNetworks (Discrete actions only; dueling from model_config) on
  // device, Adam and the replay buffer. Throws ConfigError on a key out of its schema range or
  // precision fp16 on the CPU, std::invalid_argument on a bad model or non-key field. The
  // initial weights come from torch's default CPU generator reseeded with seed for the
  // construction and restored afterwards (so don't construct concurrently with its other users).
  DqnLearner(const ModelSpec& model_config, DqnConfig config, uint64_t seed, torch::Device device = torch::kCPU);
  ~DqnLearner();
  DqnLearner(const DqnLearner&) = delete;
  DqnLearner& operator=(const DqnLearner&) = delete;

  // Stores the fragment's transitions in the replay buffer; returns how many were stored.
  // Throws std::invalid_argument (storing nothing) when it does not fit the model (Discrete
  // actions in range, the layout's floats and bytes per observation).
  int64_t add(const SampleBatch& batch);
  // True when the buffer holds at least learning_starts and batch_size transitions (per rank
  // when data-parallel: learning_starts / world_size rounded up, and the local batch).
  bool ready() const;
  // Collective when data-parallel: ready() on every rank.
  bool ready_on_all_ranks();
  // Training rounds due now that received_steps transitions were received in all (never
  // decreasing): one per train_freq boundary crossed beyond learning_starts since the last
  // call, 0 while !ready() (those rounds are skipped). Throws when received_steps decreases.
  int64_t training_rounds_due(int64_t received_steps);

  // Applies the target updates due at timesteps_done, then runs gradient_steps steps.
  // Throws std::logic_error when !ready(), std::invalid_argument when gradient_steps < 1, and
  // NonFiniteLearnerError (learner/non_finite.h) before a step whose loss or gradient norm is not
  // finite (the steps before it stay applied). One learner (not data-parallel) throws
  // StopRequested (core/stop_signal.h) before a step when the stop check says the stop is
  // overdue: the steps before it stay applied, and the round's others are not made up.
  DqnUpdateMetrics train(int gradient_steps, int64_t timesteps_done);
  // Replaces what train() reads before each gradient step to stop (rlx::stop_overdue by default;
  // a test counts steps with its own).
  void set_stop_check(std::function<bool()> overdue) { stop_check_ = std::move(overdue); }

  // One gradient step on the given transitions (no replay draw, no priority or target update),
  // e.g. to check a data-parallel step against one learner on the ranks' samples together.
  void gradient_step_on(const ReplaySample& sample);
  // The transitions the last gradient step of train() drew (this rank's share).
  const ReplaySample& last_sample() const { return sample_; }

  // Installs the data-parallel seams; the replay buffer becomes this rank's shard of
  // buffer_size / world_size. Throws std::logic_error once transitions were stored,
  // std::invalid_argument unless batch_size is a multiple of world_size.
  void set_data_parallel_hooks(DqnDataParallelHooks hooks);
  // Transitions this rank draws per gradient step.
  int64_t local_batch_size() const { return config_.batch_size / hooks_.world_size; }

  // Exploration rate of the linear schedule after timesteps_done env steps.
  double epsilon(int64_t timesteps_done) const { return config_.epsilon(timesteps_done); }

  // The online network's flat float32 parameters for workers (no observation statistics).
  std::shared_ptr<Weights> weights(uint64_t version) const;

  // Online and target networks and the Adam state (a torch archive). load() expects the same
  // model config (throws std::invalid_argument otherwise) and keeps this learner's lr/adam_eps.
  void save(std::ostream& out) const;
  void load(std::istream& in);
  // The replay buffer's bytes (learner/replay_buffer.h), and their restore into a buffer of the
  // same capacity (std::invalid_argument, the buffer unchanged, otherwise).
  std::string save_replay() const;
  void load_replay(const std::string& bytes);
  // The replay in segments (native/replay_segments.h): the listing for a checkpoint, with the
  // transitions stored since the last one written to a new segment in dir, and the rest of the
  // buffer's state (n-step windows, priorities; ReplayBuffer::save_rest) as bytes for a
  // checkpoint file; and their restore into a fresh buffer (std::runtime_error or
  // std::invalid_argument naming what does not fit, the buffer unchanged).
  ReplayListing checkpoint_replay(const std::filesystem::path& dir);
  std::string save_replay_rest() const;
  void restore_replay(const std::filesystem::path& dir, const ReplayListing& listing, const std::string& rest);
  // Counters and seed: {"seed", "num_gradient_steps", "target_updates", "target_timesteps",
  // "received_steps"}, and with precision fp16 "loss_scaler" (LossScaler::to_json).
  nlohmann::json state_json() const;
  // Restores state_json()'s form; throws std::invalid_argument on a malformed state.
  void load_state_json(const nlohmann::json& state);

  const DqnConfig& config() const { return config_; }
  // Changes hyperparameters (e.g. a PBT explore step). Fields baked into stored transitions or
  // the buffer's layout (gamma, n_step, n_step_carry, prioritized_replay, prioritized_replay_alpha,
  // per_eps, buffer_size), and precision, must stay; throws std::invalid_argument otherwise,
  // ConfigError on a bad value.
  void set_config(DqnConfig config);

  QNetwork& online() { return *online_; }
  QNetwork& target() { return *target_; }
  const ReplayBuffer& buffer() const { return *buffer_; }
  ReplayBuffer& buffer() { return *buffer_; }
  // The prioritized buffer, or nullptr with uniform replay.
  const PrioritizedReplayBuffer* prioritized_buffer() const { return prioritized_; }
  torch::optim::Adam& optimizer() { return *optimizer_; }
  torch::Device device() const { return device_; }
  int64_t num_gradient_steps() const { return num_gradient_steps_; }
  // True when gradient steps use the hand-written backward (the default on the CPU in fp32),
  // false when they use autograd.
  bool hand_written_gradients() const { return backprop_ != nullptr; }
  // Chooses the hand-written backward (on) or autograd (off) for later steps; throws
  // std::invalid_argument when on and QNetworkBackprop::supports() refuses the networks or the
  // precision is not fp32.
  void use_hand_written_gradients(bool on);
  int64_t target_updates() const { return target_updates_; }
  // The dynamic loss scale (enabled with precision fp16 only).
  const LossScaler& loss_scaler() const { return scaler_; }

 private:
  // dqn_learner.cc
  void set_buffer(std::unique_ptr<ReplayBuffer> buffer);  // buffer_, and prioritized_ when it is one
  std::unique_ptr<ReplayBuffer> empty_buffer() const;     // one like buffer_, holding nothing (dqn_checkpoint.cc)
  StoredObsSize stored_obs_size() const { return {layout_.float_slots, layout_.byte_slots}; }
  DqnUpdateMetrics round_metrics(double lr, double beta, int64_t timesteps_done);  // of train()'s steps
  void apply_optimizer_options();  // config_'s lr and adam_eps into Adam

  // dqn_update.cc: one gradient step, in the order these run.
  void update_target(int64_t timesteps_done);
  void gradient_step(double beta);
  void draw_sample(int64_t b, double beta);  // into sample_, from the step's own RNG seed
  bool learn_from(ReplaySample& sample, bool weighted);  // one step on sample (from_blob views it); false: skipped
  DqnLossOutput loss_and_gradient(ReplaySample& sample, bool weighted);  // flat_grad_ := the gradient
  DqnBatch stage_batch(ReplaySample& sample, bool weighted);  // the network's input (flattened), next masks
  void average_gradient_over_ranks();  // flat_grad_ := the mean over ranks
  // Checks, clips, Adam; false: the step was skipped (fp16).
  bool clip_and_apply_gradient(const torch::Tensor& loss, const torch::Tensor& grad_norm);
  // The loss scaler's verdict on a (not) finite step: true to apply, false to skip; throws
  // NonFiniteLearnerError when no loss scale explains it.
  bool admit_step(bool finite, const torch::Tensor& loss, const torch::Tensor& grad_norm);
  [[noreturn]] void throw_non_finite(const torch::Tensor& loss, const torch::Tensor& grad_norm) const;
  void clear_step_records();  // losses_, q_values_, td_errors_, grad_norms_
  torch::Tensor host_tensor(float* data, torch::IntArrayRef shape) const;

  ModelSpec model_config_;
  ObservationLayout layout_;  // how a stored observation flattens; where its mask lies
  DqnConfig config_;
  uint64_t seed_;
  torch::Device device_;
  std::shared_ptr<QNetwork> online_;
  std::shared_ptr<QNetwork> target_;
  torch::Tensor flat_online_;  // [P] storage of every online parameter
  torch::Tensor flat_grad_;    // [P] storage of every online gradient
  torch::Tensor flat_target_;  // [P] storage of every target parameter
  std::unique_ptr<torch::optim::Adam> optimizer_;
  std::unique_ptr<QNetworkBackprop> backprop_;  // set when the hand-written backward is used
  ReplaySegmentLog replay_log_;  // the segments this learner's checkpoints wrote or restored
  std::unique_ptr<ReplayBuffer> buffer_;
  PrioritizedReplayBuffer* prioritized_ = nullptr;  // buffer_ when prioritized
  Rng rng_;
  DqnDataParallelHooks hooks_;
  Precision precision_ = Precision::kFp32;  // config_.precision
  LossScaler scaler_;                       // enabled for fp16
  std::function<bool()> stop_check_;        // true: stop train() before its next step (one learner's)

  int64_t num_gradient_steps_ = 0;
  int64_t target_updates_ = 0;
  int64_t target_timesteps_ = 0;  // timesteps_done of the last target-update check
  int64_t received_steps_ = 0;    // last argument of training_rounds_due

  // Reused per step.
  ReplaySample sample_;
  std::vector<float> bootstrap_;  // [B] gamma^m (1 - terminated)
  std::vector<float> staged_obs_, staged_next_obs_;  // [B, O] flattened, unless the floats are the input
  std::vector<uint8_t> next_mask_;                   // [B, n] 0/1: legal in s'
  std::vector<torch::Tensor> losses_, q_values_, td_errors_, grad_norms_;
};

}  // namespace rlx
