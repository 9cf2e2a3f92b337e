// The typed configuration: the keys every run reads (CommonConfig) and one struct per algorithm
// (PpoConfig, AppoConfig, DqnConfig, SacConfig). Each member named like a config key is bound to that key once, in the
// schema table (core/config_schema.cc), which also holds its default, range and meaning; a
// default-constructed struct holds the schema's defaults. Members marked "not a key" are set by
// code (the trainer, tests, benchmarks), never by an experiment file. Torch-free.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace rlx {

using IntList = std::vector<int64_t>;

// How a hyperparameter moves over a run: kept, or annealed linearly to 0 over the run's horizon.
enum class Schedule { kConstant, kLinear };

// "constant" or "linear".
const char* schedule_name(Schedule schedule);

// Keys every algorithm reads: sampling, workers, learners, checkpoints and the network's shape.
struct CommonConfig {
  CommonConfig();

  int64_t seed{};
  int64_t num_workers{};
  int64_t num_envs_per_worker{};
  int64_t rollout_fragment_length{};
  int64_t max_policy_lag{};
  int64_t worker_weight_delay{};
  int64_t max_worker_restarts{};
  int64_t max_workers{};
  int64_t num_learners{};
  std::string device;
  std::string learner_backend;         // "torch", "native" or "auto" (algorithms/native_algorithms.h)
  int64_t learner_threads{};           // the native learner's product threads; 0 = auto
  bool elastic{};                     // the learner group survives losing ranks (learner/elastic_group.h)
  int64_t min_learners{};
  int64_t max_learners{};              // 0 = num_learners
  std::string learner_sync;            // "allreduce" or "parameter_server"
  int64_t max_staleness{};             // parameter_server: stale-synchronous parallel's bound
  int64_t debug_slow_rank{};           // a straggler for experiments: -1 none
  double debug_slow_factor{};
  double learner_timeout_s{};
  double worker_learner_timeout_s{};
  bool drop_nonfinite_episodes{};
  int64_t checkpoint_freq{};
  std::string count_steps_by;          // "env_steps" or "agent_steps": what timesteps_total counts in a multi-agent run
  bool tensorboard{};
  int64_t record_video_every{};
  std::string encoder;                 // "auto", "mlp" or "cnn" (algorithms/model_from_config.h)
  std::string conv_filters;            // "auto" or "OUT:KERNEL:STRIDE,..." (models/cnn_encoder.h)
  int64_t frame_stack{};               // observations stacked over this many steps; 1 = off (envs/frame_stack.h)
  IntList hidden_sizes;
  std::string activation;
  bool vf_share_layers{};
  bool use_lstm{};                     // a recurrent core (ModelSpec::core): an LSTM ...
  bool use_gru{};                      // ... or a GRU
  int64_t lstm_cell_size{};            // the core's units (LSTM or GRU)
  int64_t lstm_num_layers{};           // its stacked cells
  // True when the model has a recurrent core.
  bool recurrent() const { return use_lstm || use_gru; }
};

// PPO's hyperparameters (RLlib's names). The value loss is a plain mean squared error
// (learner/ppo_loss.h).
struct PpoConfig {
  PpoConfig();

  double lr{};
  Schedule lr_schedule{};             // kLinear: lr * (1 - timesteps_done / total_timesteps), floored at 0
  double gamma{};
  double lambda{};                    // GAE lambda
  double clip_param{};
  Schedule clip_schedule{};           // clip_param annealed like lr
  double vf_clip_param{};             // 0: off; else PPO2-style clip of V around the old value
  double vf_loss_coeff{};
  double entropy_coeff{};
  int64_t num_epochs{};
  int64_t minibatch_size{};           // the last, partial minibatch of an epoch is used too
  int64_t train_batch_size{};         // 0: derived (effective_train_batch_size in core/config.h)
  double grad_clip{};                 // 0: off; global norm over all parameters
  bool normalize_advantages{};        // per minibatch
  bool normalize_observations{};
  bool obs_stats_after_update{};      // the batch joins the observation statistics after its update
  bool scale_rewards{};
  double adam_eps{};
  std::string precision;              // "fp32", "bf16" or "fp16": LibTorch's autocast (learner/mixed_precision.h)
  double log_std_init{};
  bool use_sde{};                     // gSDE exploration (ModelSpec::sde)
  int64_t sde_sample_freq{};          // gSDE: steps between noise draws; -1: each fragment's start
  bool ortho_init{};                  // false: PyTorch's default init (ModelSpec::ortho_init)
  int64_t max_seq_len{};              // a recurrent model trains on sequences of at most this many steps
  IntList head_fcnet_hiddens;         // dense layers before each output (ModelSpec::head_sizes); empty: none

  // Not keys: APPO's loss (algorithms/appo_algorithm.h fills them from AppoConfig; PPO leaves them off).
  bool vtrace = false;                // V-trace targets and advantages (native/vtrace.h) instead of GAE
  double rho_bar = 1.0;
  double c_bar = 1.0;
  double kl_coeff = 0.0;              // > 0: + kl_coeff * KL(target || pi), the target refreshed every
  int64_t target_update_frequency = 1;  // this many updates
  bool behaviour_ratio = true;        // the surrogate's ratio is pi/mu (the batch's log-probs); false:
                                      // pi over the learner's policy at the start of the update

  bool recompute_values = true;       // not a key: V(s_t) for GAE from the current network (else the batch's)
  bool analytic_gradients = true;     // not a key: hand-written backward (~2x faster); else autograd
  int64_t total_timesteps = 1000000;  // not a key: horizon of the linear schedules (stop.timesteps_total)

  // lr after timesteps_done env steps.
  double lr_at(int64_t timesteps_done) const;
  // clip_param after timesteps_done env steps.
  double clip_param_at(int64_t timesteps_done) const;
};

// APPO's own keys (it reads PpoConfig's too): V-trace, the KL term to a target network, and
// how the asynchronous loop queues fragments and publishes weights.
struct AppoConfig {
  AppoConfig();

  bool vtrace{};
  std::string surrogate_ratio;        // "behaviour": pi/mu; "learner": pi over the learner's policy at the update's start
  double rho_bar{};
  double c_bar{};
  bool use_kl_loss{};
  double kl_coeff{};
  int64_t target_update_frequency{};
  int64_t learner_queue_size{};       // train batches waiting at the learner, at most
  int64_t broadcast_interval{};       // updates between weight publications
};

// DQN's hyperparameters. Every interval counts env steps (transitions received), as SB3 and RL
// Zoo do: learning_starts, train_freq, target_update_interval, the exploration and beta horizons.
// The target network is updated every target_update_interval env steps with
// target <- tau * online + (1 - tau) * target (tau = 1: a hard copy); updates that fall due
// while the online net is fixed are folded into one: k due updates give tau_k = 1 - (1 - tau)^k,
// exactly what SB3 computes one env step at a time. Observations are used raw.
struct DqnConfig {
  DqnConfig();

  double lr{};
  Schedule lr_schedule{};
  double gamma{};
  int64_t n_step{};                   // n-step returns (windows cut at episode ends)
  int64_t batch_size{};
  bool double_q{};                    // select a' with the online net, evaluate with the target net
  double tau{};
  int64_t target_update_interval{};
  double huber_delta{};
  double grad_clip{};                 // global gradient-norm clip; 0 = off
  double adam_eps{};
  std::string precision;              // "fp32", "bf16" or "fp16" (as PpoConfig's)
  bool prioritized_replay{};          // proportional prioritized replay
  double prioritized_replay_alpha{};
  double prioritized_replay_beta{};   // annealed linearly to 1
  int64_t buffer_size{};
  int64_t learning_starts{};          // stored transitions before the first training round
  int64_t train_freq{};               // env steps received per training round
  int64_t gradient_steps{};           // gradient steps per training round
  double exploration_initial_eps{};
  double exploration_final_eps{};
  double exploration_fraction{};      // of total_timesteps over which epsilon decays linearly
  bool dueling{};
  bool apex_epsilons{};
  bool checkpoint_replay_buffer{};

  bool n_step_carry = true;           // not a key: complete windows with the worker's next fragment
  int64_t per_beta_timesteps = 0;     // not a key: horizon of beta's annealing; 0 = total_timesteps
  double per_eps = 1e-6;              // not a key: priority = |td| + per_eps
  int64_t total_timesteps = 1000000;  // not a key: horizon of the schedules (stop.timesteps_total)

  // Exploration rate after timesteps env steps: initial -> final linearly over
  // exploration_fraction * total_timesteps, then final.
  double epsilon(int64_t timesteps) const;
  // lr after timesteps env steps.
  double lr_at(int64_t timesteps) const;
  // The annealing horizon of beta in env steps.
  int64_t beta_horizon() const { return per_beta_timesteps > 0 ? per_beta_timesteps : total_timesteps; }
};

// SAC's hyperparameters (Haarnoja et al. 2018 with the automatic temperature; SB3's names where
// it has them). Every gradient step samples batch_size transitions; gradient steps follow the
// env steps received at utd_ratio per step once learning_starts transitions are stored (before
// that, workers act uniformly at random). The target critics follow by Polyak averaging,
// target <- tau * online + (1 - tau) * target, after every gradient step.
struct SacConfig {
  SacConfig();

  double gamma{};
  double lr{};                        // every optimiser's rate unless its own key is set
  Schedule lr_schedule{};             // kLinear: every rate annealed to 0 over total_timesteps
  double actor_lr{};                  // 0: lr
  double critic_lr{};                 // 0: lr
  double alpha_lr{};                  // 0: lr
  double adam_eps{};
  double grad_clip{};                 // 0: off; global norm, per optimiser (actor, critics)
  int64_t buffer_size{};
  int64_t learning_starts{};          // stored transitions before the first gradient step
  int64_t batch_size{};
  double tau{};
  double utd_ratio{};                 // gradient steps per env step received
  double initial_alpha{};             // entropy temperature at the start
  bool autotune_alpha{};              // learn log alpha towards target entropy -|A|; false: alpha fixed
  bool checkpoint_replay_buffer{};

  int64_t total_timesteps = 1000000;  // not a key: horizon of lr_schedule (stop.timesteps_total)

  // The rate of one optimiser (its own key, or lr when that is 0) after timesteps env steps.
  double actor_lr_at(int64_t timesteps) const;
  double critic_lr_at(int64_t timesteps) const;
  double alpha_lr_at(int64_t timesteps) const;
};

// `initial` under `schedule` after timesteps_done of total_timesteps: kConstant keeps it, kLinear
// takes it linearly to 0 (never below).
double scheduled_value(Schedule schedule, double initial, int64_t timesteps_done, int64_t total_timesteps);

}  // namespace rlx
