// The schema table and KeySpec's modifiers and checks.
#include "core/config_schema.h"

#include <cctype>
#include <cmath>
#include <type_traits>

#include "core/config_error.h"

namespace rlx {
namespace {

// "cpu", "cuda" or "cuda:N".
bool is_device_name(const std::string& text) {
  if (text == "cpu" || text == "cuda") return true;
  if (text.rfind("cuda:", 0) != 0 || text.size() == 5) return false;
  for (size_t i = 5; i < text.size(); ++i) {
    if (!std::isdigit(static_cast<unsigned char>(text[i]))) return false;
  }
  return true;
}

// "auto", or OUT:KERNEL:STRIDE entries of positive integers separated by commas (what
// models/cnn_encoder.h's parse_conv_filters reads; it checks the sizes against the image).
bool is_conv_filters_text(const std::string& text) {
  if (text == "auto") return true;
  int64_t numbers_in_entry = 0;
  bool in_number = false, nonzero = false;
  for (size_t i = 0; i <= text.size(); ++i) {
    const char c = i < text.size() ? text[i] : ',';
    if (std::isdigit(static_cast<unsigned char>(c))) {
      if (!in_number) ++numbers_in_entry;
      in_number = true;
      nonzero = nonzero || c != '0';
      continue;
    }
    if (c == ' ') continue;
    if (c != ':' && c != ',') return false;
    if (!in_number || !nonzero) return false;  // empty or zero number
    in_number = nonzero = false;
    if (c == ',') {
      if (numbers_in_entry != 3) return false;
      numbers_in_entry = 0;
    }
  }
  return true;
}

std::vector<KeySpec> build_schema() {
  std::vector<KeySpec> keys;
  auto add = [&keys](KeySpec&& key) { keys.push_back(std::move(key)); };

  // ---- common ----
  add(int_key("seed", 0, "Seed of environments, workers, network initialisation and sampling; with num_workers: 0 a run repeats exactly").at_least(0).to(&CommonConfig::seed));
  add(int_key("num_workers", 2, "Rollout worker processes; 0 samples synchronously in the learner process (deterministic)").at_least(0).to(&CommonConfig::num_workers));
  add(int_key("num_envs_per_worker", 8, "Environments each worker steps as one batch (K; SAC: 1)").at_least(1).default_for(AlgorithmKind::kSAC, int64_t{1}).to(&CommonConfig::num_envs_per_worker));
  add(int_key("rollout_fragment_length", 64, "Steps per environment in one fragment a worker sends (T; SAC: 1, so every env step is followed by its gradient steps)").at_least(1).default_for(AlgorithmKind::kSAC, int64_t{1}).to(&CommonConfig::rollout_fragment_length));
  add(int_key("max_policy_lag", 1, "Fragments from weights more than this many versions old are dropped and counted (APPO: 32; SAC, off-policy: 1000)").at_least(0).default_for(AlgorithmKind::kAPPO, int64_t{32}).default_for(AlgorithmKind::kSAC, int64_t{1000}).to(&CommonConfig::max_policy_lag));
  add(int_key("worker_weight_delay", 0, "For experiments on stale data: workers act with the weights published this many versions before the newest (fragments are at least this old); must stay below max_policy_lag").at_least(0).at_most(1000).to(&CommonConfig::worker_weight_delay));
  add(int_key("max_worker_restarts", 10, "Crashed worker processes restarted per run before the run fails").at_least(0).to(&CommonConfig::max_worker_restarts));
  add(int_key("max_workers", 1024,
              "Workers (local and remote) the learner serves at once; more wait. Bounds the learner's memory for "
              "queued fragments: max_workers x 2 credits x the largest fragment")
          .at_least(1)
          .at_most(1 << 20)
          .to(&CommonConfig::max_workers));
  add(int_key("num_learners", 1, "Data-parallel learner processes (gradients all-reduced)").at_least(1).to(&CommonConfig::num_learners));
  add(string_key("device", "cpu", "Learner device").matching(is_device_name, "\"cpu\", \"cuda\" or \"cuda:N\"").to(&CommonConfig::device));
  add(string_key("learner_backend", "auto",
                 "\"auto\" (the default): the native learner where it can train the experiment (PPO with separate "
                 "policy and value MLPs, one CPU learner: the same update as LibTorch's to float rounding), else "
                 "LibTorch's; \"torch\": LibTorch's learners (any network, device and num_learners, DQN, APPO); "
                 "\"native\": rlx's own CPU learner, refusing what it cannot train: it needs no LibTorch (`rlx "
                 "train` starts in milliseconds) and steps small networks about 2x faster. SAC has the native learner "
                 "only")
          .one_of({"torch", "native", "auto"})
          .default_for(AlgorithmKind::kSAC, std::string("native"))
          .to(&CommonConfig::learner_backend));
  add(int_key("learner_threads", 0, "Threads of the native learner (PPO, SAC) for its large matrix products, which they split by rows: any count computes the same numbers; 0 = one per CPU the learner process may run on, less num_workers (the local worker processes), from 1 to 8. LibTorch's learners run one intra-op thread").at_least(0).at_most(64).to(&CommonConfig::learner_threads));
  add(bool_key("elastic", false, "Data-parallel learners (LibTorch, PPO and APPO) survive losing a rank: the others detect it (at once when its process dies, within learner_timeout_s when its host or link goes silent), re-form the group under a new generation number, redo the interrupted update from the last completed one on the ranks that are left, and take a rank that joins (`rlx learner --join`, a requeued srun step) in at the next iteration boundary with the current weights and optimizer state; below min_learners the run checkpoints and stops (Horovod Elastic, TorchElastic)").to(&CommonConfig::elastic));
  add(int_key("min_learners", 1, "elastic: the fewest learner ranks the run goes on with; below it, it checkpoints and stops with an error").at_least(1).to(&CommonConfig::min_learners));
  add(int_key("max_learners", 0, "elastic: the most learner ranks the group takes in (ranks that join beyond it wait); 0 = num_learners").at_least(0).to(&CommonConfig::max_learners));
  add(string_key("learner_sync", "allreduce", "How data-parallel learners combine gradients: \"allreduce\", every rank's gradient summed in lock step (exact: M learners give one learner's update); \"parameter_server\" (PPO and APPO, CPU), a server on rank 0 hands every rank (itself too) the update's minibatch steps on request, applies each gradient pushed as it arrives and answers with fresh weights: a slow rank computes fewer steps and holds no other back, at the price of gradients computed on weights a few updates old (their staleness is in the results); docs/data-parallel.md says when each wins").one_of({"allreduce", "parameter_server"}).to(&CommonConfig::learner_sync));
  add(int_key("max_staleness", 4, "learner_sync: parameter_server: stale-synchronous parallel's bound, how many more minibatch steps of an update a rank may have done than the slowest rank still working; 0 = lock step").at_least(0).at_most(1000000).to(&CommonConfig::max_staleness));
  add(string_key("precision", "fp32", "LibTorch learners' arithmetic: \"fp32\"; \"bf16\", autocast of the forward pass and the loss to bfloat16 with fp32 master weights, optimizer and gradient all-reduce; \"fp16\" (CUDA only), the same in float16 with a dynamic loss scale").one_of({"fp32", "bf16", "fp16"}).to(&PpoConfig::precision).to(&DqnConfig::precision));
  add(int_key("debug_slow_rank", -1, "For experiments on stragglers: this data-parallel learner rank sleeps (debug_slow_factor - 1) times the time each of its minibatch steps took; -1: none").at_least(-1).to(&CommonConfig::debug_slow_rank));
  add(float_key("debug_slow_factor", 3.0, "debug_slow_rank's slowdown: that rank's minibatch steps take this many times as long").at_least(1).at_most(1000).to(&CommonConfig::debug_slow_factor));
  add(float_key("learner_timeout_s", 60.0, "Data-parallel learners: rendezvous and collective timeout; a rank silent this long fails the run").above(0).to(&CommonConfig::learner_timeout_s));
  add(float_key("worker_learner_timeout_s", 60.0, "A local worker that hears nothing from its learner this long exits (the learner restarts it while the run goes on)").above(0).to(&CommonConfig::worker_learner_timeout_s));
  add(bool_key("drop_nonfinite_episodes", false, "false: a NaN or infinite observation or reward from an env stops the run (exit 2) naming env, worker, step and field; true: that step ends its episode as a truncation at the last finite observation with reward 0, the episode is left out of the returns and counted in sampler.episodes_dropped_nonfinite").to(&CommonConfig::drop_nonfinite_episodes));
  add(bool_key("tensorboard", true, "Write TensorBoard event files (events.out.tfevents.*) beside progress.csv: every result column as a scalar at the step of timesteps_total, and the experiment as a text table").to(&CommonConfig::tensorboard));
  add(int_key("record_video_every", 0, "Iterations between evaluation videos in TRIAL_DIR/videos/ (iteration_NNNNNN.mp4: one deterministic episode filmed by `rlx evaluate --record` from a checkpoint of that iteration); 0: none").at_least(0).to(&CommonConfig::record_video_every));
  add(string_key("count_steps_by", "env_steps", "Multi-agent envs: what timesteps_total (and the schedules' horizon) counts, \"env_steps\" (one per step of an env, however many agents act in it) or \"agent_steps\" (one per acting agent); both are reported (RLlib's count_steps_by)").one_of({"env_steps", "agent_steps"}).to(&CommonConfig::count_steps_by));
  add(int_key("checkpoint_freq", 10, "Iterations between checkpoints; 0 checkpoints only at the end").at_least(0).to(&CommonConfig::checkpoint_freq));
  add(float_key("gamma", 0.99, "Discount factor").at_least(0).at_most(1).to(&PpoConfig::gamma).to(&DqnConfig::gamma).to(&SacConfig::gamma));
  add(float_key("lr", 3e-4, "Adam learning rate (SAC: of the actor, the critics and alpha, unless actor_lr, critic_lr or alpha_lr is set)").above(0).to(&PpoConfig::lr).to(&DqnConfig::lr).to(&SacConfig::lr));
  add(string_key("lr_schedule", "constant", "\"linear\" anneals lr to 0 over stop.timesteps_total").one_of({"constant", "linear"}).to(&PpoConfig::lr_schedule).to(&DqnConfig::lr_schedule).to(&SacConfig::lr_schedule));
  add(int_list_key("hidden_sizes", {64, 64}, "Widths of the hidden layers of the policy/value/Q networks (SAC: [256, 256])").at_least(1).default_for(AlgorithmKind::kSAC, IntList{256, 256}).to(&CommonConfig::hidden_sizes));
  add(string_key("encoder", "auto", "The network that reads observations: \"mlp\" (hidden_sizes dense layers over the flattened observation), \"cnn\" (conv_filters over each image of the observation, a Box of rank 3 height x width x channels at least 4x4, alone or inside a Dict or Tuple; then hidden_sizes dense layers with activation over the images' features and the other keys flattened, as SB3's MultiInputPolicy), or \"auto\": for an observation with images the CNN preset for their size (models/cnn_encoder.h: Nature CNN 32:8:4,64:4:2,64:3:1 + dense 512 from 36x36 up, else 16:3:1 + dense 128 as MinAtar's paper; ReLU throughout, hidden_sizes and activation not read), otherwise mlp").one_of({"auto", "mlp", "cnn"}).to(&CommonConfig::encoder));
  add(string_key("conv_filters", "auto", "The cnn encoder's convolutions, OUT:KERNEL:STRIDE separated by commas (e.g. \"32:8:4,64:4:2,64:3:1\"; no padding, ReLU); \"auto\": the preset for the images' size").matching(is_conv_filters_text, "\"auto\" or OUT:KERNEL:STRIDE[,...] with positive integers").to(&CommonConfig::conv_filters));
  // 64 = kMaxFrameStack (envs/frame_stack.h), the bound a worker holds a Welcome to.
  add(int_key("frame_stack", 1, "Observations the model sees at once: every consumer of the env (workers, synchronous sampling, the learner's model, rlx evaluate and its videos) sees the last N observations stacked, as SB3's VecFrameStack and Gymnasium's FrameStackObservation give them; 1: off. The observation space must be a Box: an image (H, W, C) stacks on its channel axis to (H, W, C*N), channels last with the oldest frame first (MinAtar/Breakout-v1's 10x10x4 with 4 frames: 10x10x16); a vector (D,) becomes (N*D,), the oldest frame first; other spaces are refused. dtype and bounds are kept (uint8 stays bytes). A reset fills the stack with the first observation (Gymnasium's padding \"reset\"), each step drops the oldest frame, an episode's final observation is stacked too, and an action mask is the newest frame's").at_least(1).at_most(64).to(&CommonConfig::frame_stack));
  add(string_key("activation", "tanh", "Activation of the hidden layers (SAC: relu)").one_of({"tanh", "relu"}).default_for(AlgorithmKind::kSAC, std::string("relu")).to(&CommonConfig::activation));
  add(bool_key("vf_share_layers", false, "Policy and value heads share the hidden layers").to(&CommonConfig::vf_share_layers));
  add(bool_key("use_lstm", false, "A recurrent core, an LSTM (PyTorch's LSTMCell), between the encoder and the heads (RLlib's use_lstm): the policy carries a state per env, zeroed at each episode's start; with vf_share_layers one core, else one for the policy and one for the value (SB3's RecurrentPPO). PPO and APPO (LibTorch's learner) train it on sequences of at most max_seq_len steps").to(&CommonConfig::use_lstm));
  add(bool_key("use_gru", false, "A recurrent core as use_lstm, but a GRU (PyTorch's GRUCell): one state vector instead of two").to(&CommonConfig::use_gru));
  add(int_key("lstm_cell_size", 256, "Units of the recurrent core (use_lstm or use_gru)").at_least(1).at_most(16384).to(&CommonConfig::lstm_cell_size));
  add(int_key("lstm_num_layers", 1, "Stacked cells of the recurrent core").at_least(1).at_most(8).to(&CommonConfig::lstm_num_layers));
  add(int_key("max_seq_len", 20, "A recurrent model: the longest sequence the learner trains on. Each fragment is cut at every episode start and then into pieces of at most this many steps; a piece starts from the state the worker shipped with the fragment, zeros at an episode start, or else the state the learner recomputes from the fragment's start with the weights the update begins with; padded pieces are masked out of the loss").at_least(1).at_most(100000).to(&PpoConfig::max_seq_len));
  add(int_list_key("head_fcnet_hiddens", {}, "Dense layers of these widths, with activation, just before the policy's output and, their own copy, before the value's (RLlib's head_fcnet_hiddens; SB3's net_arch pi=[...], vf=[...] after RecurrentPPO's LSTM): after the encoder and the recurrent core, one stack per output with vf_share_layers too; [] (the default): the outputs read the encoder or core directly. Initialised as the hidden layers").at_least(1).at_most(65536).to(&PpoConfig::head_fcnet_hiddens));
  add(bool_key("normalize_observations", false, "Normalise observations by running mean and variance (state saved in checkpoints)").to(&PpoConfig::normalize_observations));
  add(bool_key("obs_stats_after_update", false, "With normalize_observations: each train batch joins the observation statistics after its update, so the update sees the observations normalised as the workers saw them and PPO's ratios start at 1 (SB3's VecNormalize); false: before it, normalised with statistics that include the batch, which shifts the ratios while the statistics still move").to(&PpoConfig::obs_stats_after_update));
  add(float_key("grad_clip", 0.5, "Global gradient-norm clip; 0 turns clipping off (SAC: 0; per optimiser)").at_least(0).default_for(AlgorithmKind::kSAC, 0.0).to(&PpoConfig::grad_clip).to(&DqnConfig::grad_clip).to(&SacConfig::grad_clip));
  add(float_key("adam_eps", 1e-5, "Adam epsilon (SAC: 1e-8)").above(0).default_for(AlgorithmKind::kSAC, 1e-8).to(&PpoConfig::adam_eps).to(&DqnConfig::adam_eps).to(&SacConfig::adam_eps));

  // ---- PPO ----
  add(int_key("train_batch_size", 0, "Samples per iteration; 0 = max(num_workers, 1) * num_envs_per_worker * rollout_fragment_length; at least one fragment").at_least(0).to(&PpoConfig::train_batch_size));
  add(int_key("num_epochs", 10, "Passes of SGD over each train batch").at_least(1).to(&PpoConfig::num_epochs));
  add(int_key("minibatch_size", 64, "Samples per SGD minibatch").at_least(1).to(&PpoConfig::minibatch_size));
  add(float_key("lambda", 0.95, "GAE lambda; APPO: V-trace's trace decay (c_t = lambda min(c_bar, pi/mu))").at_least(0).at_most(1).to(&PpoConfig::lambda));
  add(float_key("clip_param", 0.2, "PPO ratio clip epsilon").above(0).to(&PpoConfig::clip_param));
  add(string_key("clip_schedule", "constant", "\"linear\" anneals clip_param to 0 over stop.timesteps_total").one_of({"constant", "linear"}).to(&PpoConfig::clip_schedule));
  add(float_key("vf_clip_param", 0.0, "Clip of the value-function update around the old values; 0 turns it off").at_least(0).to(&PpoConfig::vf_clip_param));
  add(float_key("vf_loss_coeff", 0.5, "Weight of the value loss").at_least(0).to(&PpoConfig::vf_loss_coeff));
  add(float_key("entropy_coeff", 0.0, "Weight of the entropy bonus").at_least(0).to(&PpoConfig::entropy_coeff));
  add(bool_key("normalize_advantages", true, "Normalise advantages per minibatch").to(&PpoConfig::normalize_advantages));
  add(bool_key("scale_rewards", false, "Divide rewards by a running standard deviation of the discounted return").to(&PpoConfig::scale_rewards));
  add(float_key("log_std_init", 0.0, "Initial log standard deviation of the Gaussian policy (Box actions)").to(&PpoConfig::log_std_init));
  add(bool_key("use_sde", false, "Box actions: generalized state-dependent exploration (gSDE, SB3's use_sde): the action's noise is the policy's latent features times a matrix drawn from N(0, exp(log_std)^2), log_std [latent, A] learned and the matrix held for sde_sample_freq steps; greedy actions are the mean as before. Needs learner_backend: torch (auto picks it)").to(&PpoConfig::use_sde));
  add(int_key("sde_sample_freq", -1, "use_sde: env steps between draws of each env's exploration matrix within a fragment; -1: once, at each fragment's start (SB3's default)").at_least(-1).to(&PpoConfig::sde_sample_freq));
  add(bool_key("ortho_init", true, "Orthogonal initial weights (hidden gain sqrt(2), policy output 0.01, value output 1) and zero biases; false: PyTorch's nn.Linear default, weights and biases uniform in +-1/sqrt(fan_in) (SB3's ortho_init=False, as RL Zoo's HalfCheetah)").to(&PpoConfig::ortho_init));

  // ---- APPO (reads the PPO keys too) ----
  add(bool_key("vtrace", true, "V-trace value targets and advantages, correcting for the lag between the workers' policy mu and the learner's pi; false: no correction for the lag at all, as plain PPO on stale data (GAE advantages, the surrogate's ratio taken to the learner's own policy at the start of the update; for ablations)").to(&AppoConfig::vtrace));
  add(string_key("surrogate_ratio", "behaviour", "The ratio PPO's clip applies to: \"behaviour\", pi/mu (the workers' policy); \"learner\", pi over the learner's policy at the start of the update, the lag corrected by V-trace's advantages alone (IMPACT's and RLlib's APPO)").one_of({"behaviour", "learner"}).to(&AppoConfig::surrogate_ratio));
  add(float_key("rho_bar", 1.0, "V-trace: clip of the importance ratio pi/mu in the TD errors and the policy-gradient advantages").above(0).to(&AppoConfig::rho_bar));
  add(float_key("c_bar", 1.0, "V-trace: clip of the ratio in the traces (how far corrections reach back)").above(0).to(&AppoConfig::c_bar));
  add(bool_key("use_kl_loss", false, "Adds kl_coeff * KL(target || pi) to the loss, the target network refreshed every target_update_frequency updates").to(&AppoConfig::use_kl_loss));
  add(float_key("kl_coeff", 1.0, "Weight of the KL term to the target network (with use_kl_loss)").at_least(0).to(&AppoConfig::kl_coeff));
  add(int_key("target_update_frequency", 1, "Updates between copies of the learner's weights into the target network (with use_kl_loss)").at_least(1).to(&AppoConfig::target_update_frequency));
  add(int_key("learner_queue_size", 4, "Train batches the learner may have waiting: each worker may have enough fragments in flight or queued for its share of them, so workers sample on while the learner updates").at_least(1).at_most(1024).to(&AppoConfig::learner_queue_size));
  add(int_key("broadcast_interval", 1, "Updates between publishing weights to the workers").at_least(1).to(&AppoConfig::broadcast_interval));

  // ---- DQN ----
  add(int_key("buffer_size", 100000, "Replay buffer capacity in transitions (SAC: 1000000)").at_least(1).default_for(AlgorithmKind::kSAC, int64_t{1000000}).to(&DqnConfig::buffer_size).to(&SacConfig::buffer_size));
  add(int_key("learning_starts", 1000, "Env steps collected before training starts (SAC: 100; workers act uniformly at random until then)").at_least(0).default_for(AlgorithmKind::kSAC, int64_t{100}).to(&DqnConfig::learning_starts).to(&SacConfig::learning_starts));
  add(int_key("train_freq", 4, "Env steps between training rounds").at_least(1).to(&DqnConfig::train_freq));
  add(int_key("gradient_steps", 1, "Gradient steps per training round").at_least(1).to(&DqnConfig::gradient_steps));
  add(int_key("batch_size", 64, "Transitions per gradient step (SAC: 256)").at_least(1).default_for(AlgorithmKind::kSAC, int64_t{256}).to(&DqnConfig::batch_size).to(&SacConfig::batch_size));
  add(int_key("target_update_interval", 1000, "Env steps between hard target-network copies (when tau = 1)").at_least(1).to(&DqnConfig::target_update_interval));
  add(float_key("tau", 1.0, "Target update: 1 = hard copy every target_update_interval; < 1 = Polyak averaging every training round (SAC: 0.005, Polyak averaging of the target critics after every gradient step)").above(0).at_most(1).default_for(AlgorithmKind::kSAC, 0.005).to(&DqnConfig::tau).to(&SacConfig::tau));
  add(bool_key("double_q", true, "Double Q-learning targets").to(&DqnConfig::double_q));
  add(bool_key("dueling", false, "Dueling value/advantage heads").to(&DqnConfig::dueling));
  add(int_key("n_step", 1, "Steps of the n-step return").at_least(1).to(&DqnConfig::n_step));
  add(bool_key("prioritized_replay", false, "Prioritised experience replay").to(&DqnConfig::prioritized_replay));
  add(float_key("prioritized_replay_alpha", 0.6, "Priority exponent alpha").at_least(0).to(&DqnConfig::prioritized_replay_alpha));
  add(float_key("prioritized_replay_beta", 0.4, "Initial importance-sampling exponent beta, annealed to 1 over stop.timesteps_total").at_least(0).at_most(1).to(&DqnConfig::prioritized_replay_beta));
  add(float_key("exploration_initial_eps", 1.0, "Epsilon at the start of the schedule").at_least(0).at_most(1).to(&DqnConfig::exploration_initial_eps));
  add(float_key("exploration_final_eps", 0.05, "Epsilon at the end of the schedule").at_least(0).at_most(1).to(&DqnConfig::exploration_final_eps));
  add(float_key("exploration_fraction", 0.1, "Fraction of stop.timesteps_total over which epsilon decays linearly").at_least(0).at_most(1).to(&DqnConfig::exploration_fraction));
  add(bool_key("apex_epsilons", false, "false: every worker follows the schedule; true: worker i of N uses 0.4^(1 + 7i/(N-1)) (Ape-X)").to(&DqnConfig::apex_epsilons));
  add(float_key("huber_delta", 1.0, "Delta of the Huber TD loss").above(0).to(&DqnConfig::huber_delta));
  add(bool_key("checkpoint_replay_buffer", true, "Keep the replay buffer (with its n-step windows and priorities) in checkpoints, so a resumed run continues exactly: in segments in TRIAL/replay/, each checkpoint writing only the transitions new since the last (docs/sac.md); data-parallel DQN keeps every rank's shard, for a resume with the same number of learners (docs/data-parallel.md)").to(&DqnConfig::checkpoint_replay_buffer).to(&SacConfig::checkpoint_replay_buffer));

  // ---- SAC (reads gamma, lr, lr_schedule, adam_eps, grad_clip and DQN's buffer_size, learning_starts, batch_size, tau, checkpoint_replay_buffer too) ----
  add(float_key("utd_ratio", 1.0, "Updates-to-data ratio: gradient steps per env step received, once learning_starts transitions are stored").above(0).at_most(1000).to(&SacConfig::utd_ratio));
  add(float_key("actor_lr", 0.0, "Adam learning rate of the policy; 0 takes lr").at_least(0).to(&SacConfig::actor_lr));
  add(float_key("critic_lr", 0.0, "Adam learning rate of the twin Q networks; 0 takes lr").at_least(0).to(&SacConfig::critic_lr));
  add(float_key("alpha_lr", 0.0, "Adam learning rate of log alpha (the entropy temperature); 0 takes lr").at_least(0).to(&SacConfig::alpha_lr));
  add(float_key("initial_alpha", 1.0, "Entropy temperature alpha at the start").above(0).to(&SacConfig::initial_alpha));
  add(bool_key("autotune_alpha", true, "Learn log alpha so that the policy's entropy approaches the target -|A| (A: action dimensions); false keeps alpha at initial_alpha").to(&SacConfig::autotune_alpha));
  return keys;
}

KeySpec make_key(std::string name, ConfigType type, ConfigValue value, std::string description) {
  KeySpec key;
  key.name = std::move(name);
  key.type = type;
  key.default_value = std::move(value);
  key.description = std::move(description);
  return key;
}

std::string bound_text(double value) {
  std::string text = format_double(value);
  if (value == static_cast<double>(static_cast<int64_t>(value)) && text.size() > 2 &&
      text.compare(text.size() - 2, 2, ".0") == 0) {
    text.resize(text.size() - 2);
  }
  return text;
}

}  // namespace

const char* algorithm_name(AlgorithmKind algorithm) {
  switch (algorithm) {
    case AlgorithmKind::kPPO: return "PPO";
    case AlgorithmKind::kDQN: return "DQN";
    case AlgorithmKind::kAPPO: return "APPO";
    case AlgorithmKind::kSAC: return "SAC";
  }
  return "?";
}

std::optional<AlgorithmKind> parse_algorithm(std::string_view name) {
  for (AlgorithmKind kind : kAllAlgorithms) {
    if (name == algorithm_name(kind)) return kind;
  }
  return std::nullopt;
}

const std::vector<std::string>& algorithm_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> all;
    for (AlgorithmKind kind : kAllAlgorithms) all.emplace_back(algorithm_name(kind));
    return all;
  }();
  return names;
}

std::string expected_algorithm_text() { return "expected \"PPO\", \"APPO\", \"DQN\" or \"SAC\""; }

KeySpec&& KeySpec::default_for(AlgorithmKind algorithm, ConfigValue value) && {
  algorithm_defaults.emplace_back(algorithm, std::move(value));
  return std::move(*this);
}

const ConfigValue& KeySpec::default_value_for(AlgorithmKind algorithm) const {
  for (const auto& [kind, value] : algorithm_defaults) {
    if (kind == algorithm) return value;
  }
  return default_value;
}

KeySpec&& KeySpec::at_least(double bound) && {
  min = bound;
  min_exclusive = false;
  return std::move(*this);
}
KeySpec&& KeySpec::above(double bound) && {
  min = bound;
  min_exclusive = true;
  return std::move(*this);
}
KeySpec&& KeySpec::at_most(double bound) && {
  max = bound;
  max_exclusive = false;
  return std::move(*this);
}
KeySpec&& KeySpec::below(double bound) && {
  max = bound;
  max_exclusive = true;
  return std::move(*this);
}
KeySpec&& KeySpec::one_of(std::vector<std::string> allowed) && {
  choices = std::move(allowed);
  return std::move(*this);
}
KeySpec&& KeySpec::matching(bool (*predicate)(const std::string&), std::string expected_text) && {
  check = predicate;
  check_expected = std::move(expected_text);
  return std::move(*this);
}

namespace {

// Whether an experiment of `algorithm` reads the members of a binding's section.
bool section_read_by(const KeyBinding& binding, AlgorithmKind algorithm) {
  if (std::holds_alternative<MemberBinding<CommonConfig>>(binding)) return true;
  if (std::holds_alternative<MemberBinding<PpoConfig>>(binding)) return reads_ppo_keys(algorithm);
  if (std::holds_alternative<MemberBinding<AppoConfig>>(binding)) return algorithm == AlgorithmKind::kAPPO;
  if (std::holds_alternative<MemberBinding<DqnConfig>>(binding)) return algorithm == AlgorithmKind::kDQN;
  return algorithm == AlgorithmKind::kSAC;  // SacConfig
}

}  // namespace

KeyScope KeySpec::scope() const {
  bool every = true;
  for (AlgorithmKind kind : kAllAlgorithms) every = every && applies_to(kind);
  if (every) return KeyScope::kCommon;
  auto bound_to = [this](auto section_tag) {
    using Binding = decltype(section_tag);
    for (const auto& binding : bindings) {
      if (std::holds_alternative<Binding>(binding)) return true;
    }
    return false;
  };
  if (bound_to(MemberBinding<AppoConfig>{})) return KeyScope::kAPPO;
  if (bound_to(MemberBinding<PpoConfig>{})) return KeyScope::kPPO;
  if (bound_to(MemberBinding<DqnConfig>{})) return KeyScope::kDQN;
  return KeyScope::kSAC;
}

bool KeySpec::applies_to(AlgorithmKind algorithm) const {
  for (const auto& binding : bindings) {
    if (section_read_by(binding, algorithm)) return true;
  }
  return false;
}

std::string KeySpec::allowed() const {
  if (type == ConfigType::kString) {
    if (check) return check_expected;
    std::string text;
    for (size_t i = 0; i < choices.size(); ++i) text += (i ? ", \"" : "\"") + choices[i] + "\"";
    return text;
  }
  std::string range;
  if (min && max) {
    range = std::string("in ") + (min_exclusive ? "(" : "[") + bound_text(*min) + ", " + bound_text(*max) +
            (max_exclusive ? ")" : "]");
  } else if (min) {
    range = std::string(min_exclusive ? "> " : ">= ") + bound_text(*min);
  } else if (max) {
    range = std::string(max_exclusive ? "< " : "<= ") + bound_text(*max);
  }
  if (type == ConfigType::kIntList && !range.empty()) return "each " + range;
  return range;
}

std::string KeySpec::expected() const {
  const std::string range = allowed();
  if (type == ConfigType::kString) {
    if (check) return range;
    return choices.empty() ? type_description(type) : "one of " + range;
  }
  if (range.empty()) return type_description(type);
  return std::string(type_description(type)) + (type == ConfigType::kIntList ? ", " : " ") + range;
}

std::optional<std::string> KeySpec::problem_with(const ConfigValue& value) const {
  auto in_range = [this](double x) {
    if (min && (min_exclusive ? !(x > *min) : !(x >= *min))) return false;
    if (max && (max_exclusive ? !(x < *max) : !(x <= *max))) return false;
    return true;
  };
  switch (type) {
    case ConfigType::kInt:
      if (!in_range(static_cast<double>(std::get<int64_t>(value)))) return "out of range";
      return std::nullopt;
    case ConfigType::kFloat:
      if (!in_range(std::get<double>(value))) return "out of range";
      return std::nullopt;
    case ConfigType::kBool: return std::nullopt;
    case ConfigType::kString: {
      const auto& text = std::get<std::string>(value);
      if (check && !check(text)) return "not allowed";
      if (!choices.empty()) {
        for (const auto& choice : choices) {
          if (choice == text) return std::nullopt;
        }
        return "not allowed";
      }
      return std::nullopt;
    }
    case ConfigType::kIntList:
      for (int64_t element : std::get<IntList>(value)) {
        if (!in_range(static_cast<double>(element))) return "element " + std::to_string(element) + " out of range";
      }
      return std::nullopt;
  }
  return std::nullopt;
}

KeySpec int_key(std::string name, int64_t value, std::string description) {
  return make_key(std::move(name), ConfigType::kInt, value, std::move(description));
}
KeySpec float_key(std::string name, double value, std::string description) {
  return make_key(std::move(name), ConfigType::kFloat, value, std::move(description));
}
KeySpec bool_key(std::string name, bool value, std::string description) {
  return make_key(std::move(name), ConfigType::kBool, value, std::move(description));
}
KeySpec string_key(std::string name, std::string value, std::string description) {
  return make_key(std::move(name), ConfigType::kString, std::move(value), std::move(description));
}
KeySpec int_list_key(std::string name, IntList value, std::string description) {
  return make_key(std::move(name), ConfigType::kIntList, std::move(value), std::move(description));
}

const std::vector<KeySpec>& config_schema() {
  static const std::vector<KeySpec> schema = build_schema();
  return schema;
}

const KeySpec* find_key(std::string_view name) {
  for (const auto& key : config_schema()) {
    if (key.name == name) return &key;
  }
  return nullptr;
}

namespace {

// Calls visit(key, binding) for every key bound to a member of Section.
template <typename Section, typename Visit>
void for_each_binding(Visit visit) {
  for (const auto& key : config_schema()) {
    for (const auto& binding : key.bindings) {
      if (const auto* member = std::get_if<MemberBinding<Section>>(&binding)) visit(key, *member);
    }
  }
}

// Writes every key's default into section; a section only SAC reads takes SAC's defaults.
template <typename Section>
void apply_defaults(Section& section) {
  for_each_binding<Section>([&section](const KeySpec& key, const MemberBinding<Section>& member) {
    member.write(section, std::is_same_v<Section, SacConfig> ? key.default_value_for(AlgorithmKind::kSAC)
                                                               : key.default_value);
  });
}

template <typename Section>
void check_section(const Section& section) {
  for_each_binding<Section>([&section](const KeySpec& key, const MemberBinding<Section>& member) {
    const ConfigValue value = member.read(section);
    const bool finite = key.type != ConfigType::kFloat || std::isfinite(std::get<double>(value));
    const auto problem = finite ? key.problem_with(value) : std::optional<std::string>("not finite");
    if (problem) {
      throw ConfigError("config key '" + key.name + "': got " + format_value(value) + ", expected " + key.expected() +
                        " (" + *problem + ")");
    }
  });
}

}  // namespace

void apply_schema_defaults(CommonConfig& section) { apply_defaults(section); }
void apply_schema_defaults(PpoConfig& section) { apply_defaults(section); }
void apply_schema_defaults(DqnConfig& section) { apply_defaults(section); }
void apply_schema_defaults(AppoConfig& section) { apply_defaults(section); }
void apply_schema_defaults(SacConfig& section) { apply_defaults(section); }
void check_config(const CommonConfig& section) { check_section(section); }
void check_config(const PpoConfig& section) { check_section(section); }
void check_config(const DqnConfig& section) { check_section(section); }
void check_config(const AppoConfig& section) { check_section(section); }
void check_config(const SacConfig& section) { check_section(section); }

void from_config_value(const ConfigValue& value, Schedule& member) {
  member = std::get<std::string>(value) == "linear" ? Schedule::kLinear : Schedule::kConstant;
}

const char* type_description(ConfigType type) {
  switch (type) {
    case ConfigType::kInt: return "an integer";
    case ConfigType::kFloat: return "a float";
    case ConfigType::kBool: return "a bool (true/false)";
    case ConfigType::kString: return "a string";
    case ConfigType::kIntList: return "a list of integers";
  }
  return "?";
}

}  // namespace rlx
