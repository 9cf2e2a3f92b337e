// DqnLearner: construction (seeded networks over flat buffers, Adam, the replay buffer), ingest
// and readiness, the replay ratio, the data-parallel seams, train() and its metrics. The
// gradient step and target sync are in dqn_update.cc, checkpoints in dqn_checkpoint.cc.
#include "learner/dqn_learner.h"

#include "core/config_schema.h"
#include "core/stop_signal.h"

#include <ATen/CPUGeneratorImpl.h>
#include <torch/utils.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>

#include "learner/dqn_replay.h"
#include "learner/q_network_backprop.h"

namespace rlx {

namespace {

// A QNetwork whose initial weights depend only on seed: the default CPU generator is seeded
// for the construction and restored afterwards.
std::shared_ptr<QNetwork> seeded_qnetwork(const ModelSpec& config, uint64_t seed) {
  at::Generator generator = at::detail::getDefaultCPUGenerator();
  const torch::Tensor saved = generator.get_state();
  generator.set_current_seed(seed);
  std::shared_ptr<QNetwork> net;
  try {
    net = std::make_shared<QNetwork>(config);
  } catch (...) {
    generator.set_state(saved);
    throw;
  }
  generator.set_state(saved);
  return net;
}

// The schema's checks of the keys, and the members no key sets.
void validate(const DqnConfig& config) {
  check_config(config);
  auto require = [](bool ok, const std::string& what) {
    if (!ok) throw std::invalid_argument("DqnConfig: " + what);
  };
  require(config.per_eps > 0.0, "per_eps must be > 0");
  require(config.per_beta_timesteps >= 0, "per_beta_timesteps must be >= 0");
  require(config.total_timesteps >= 1, "total_timesteps must be >= 1");
}

}  // namespace

DqnLearner::DqnLearner(const ModelSpec& model_config, DqnConfig config, uint64_t seed, torch::Device device)
    : model_config_(model_config), config_(config), seed_(seed), device_(device), stop_check_(stop_overdue) {
  model_config_.validate();
  layout_ = model_config_.observation_layout();
  if (!model_config_.action_space.is_discrete()) {
    throw std::invalid_argument("DQN needs a Discrete action space, got " + model_config_.action_space.to_string());
  }
  validate(config_);
  precision_ = parse_precision(config_.precision);
  check_precision(precision_, device_);
  scaler_ = LossScaler(precision_ == Precision::kFp16);
  online_ = seeded_qnetwork(model_config_, seed_);
  target_ = std::make_shared<QNetwork>(model_config_);
  online_->to(device_);
  flat_online_ = flatten_parameters(*online_, device_);
  flat_grad_ = flatten_gradients(*online_, flat_online_);
  target_->to(device_);
  flat_target_ = flatten_parameters(*target_, device_);
  {
    torch::NoGradGuard no_grad;
    flat_target_.copy_(flat_online_);
  }
  for (auto& p : target_->parameters()) p.set_requires_grad(false);
  online_->train();
  target_->eval();
  // Adam over the flat buffer: its gradient is the flat gradient the module's grads view.
  flat_online_.mutable_grad() = flat_grad_;
  optimizer_ = std::make_unique<torch::optim::Adam>(std::vector<torch::Tensor>{flat_online_},
                                                    torch::optim::AdamOptions(config_.lr).eps(config_.adam_eps));
  set_buffer(make_dqn_replay_buffer(config_, stored_obs_size()));
  // Autocast reaches autograd's ops, not the float32 hand-written pass: bf16 and fp16 train by autograd.
  if (QNetworkBackprop::supports(*online_) && precision_ == Precision::kFp32) use_hand_written_gradients(true);
}

DqnLearner::~DqnLearner() = default;

void DqnLearner::use_hand_written_gradients(bool on) {
  if (!on) {
    backprop_.reset();
  } else if (!backprop_) {
    if (precision_ != Precision::kFp32) {
      throw std::invalid_argument(std::string("DqnLearner: the hand-written backward computes in float32; precision ") +
                                  precision_name(precision_) + " trains through autograd");
    }
    if (!QNetworkBackprop::supports(*online_)) {
      throw std::invalid_argument("DqnLearner: the hand-written backward needs float32 networks on the CPU, the learner runs on " +
                                  device_.str());
    }
    backprop_ = std::make_unique<QNetworkBackprop>(*online_, *target_, flat_grad_);
  }
}

int64_t DqnLearner::add(const SampleBatch& batch) {
  if (!batch.discrete()) throw std::invalid_argument("DQN needs Discrete actions; the fragment has Box actions");
  const int64_t n = online_->num_actions();
  for (int64_t a : batch.action_indices) {
    if (a < 0 || a >= n) throw std::invalid_argument("fragment action " + std::to_string(a) + " outside Discrete(" + std::to_string(n) + ")");
  }
  return buffer_->add(batch);  // validates the rest before storing anything
}

bool DqnLearner::ready() const {
  const int64_t world = hooks_.world_size;
  return buffer_->size() >= (config_.learning_starts + world - 1) / world && buffer_->size() >= local_batch_size();
}

bool DqnLearner::ready_on_all_ranks() {
  if (hooks_.world_size == 1) return ready();
  std::vector<double> flag{ready() ? 1.0 : 0.0};
  hooks_.allreduce_host(flag, ReduceOp::kMin);
  return flag[0] > 0.5;
}

void DqnLearner::set_data_parallel_hooks(DqnDataParallelHooks hooks) {
  if (buffer_->size() > 0) throw std::logic_error("DqnLearner: data-parallel hooks must be installed before transitions are stored");
  if (hooks.world_size < 1 || hooks.rank < 0 || hooks.rank >= hooks.world_size) {
    throw std::invalid_argument("DqnLearner: rank " + std::to_string(hooks.rank) + " outside a group of " +
                                std::to_string(hooks.world_size));
  }
  if (hooks.world_size > 1 && (!hooks.allreduce_gradients || !hooks.allreduce_host)) {
    throw std::invalid_argument("DqnLearner: data-parallel hooks need allreduce_gradients and allreduce_host");
  }
  if (config_.batch_size % hooks.world_size != 0) {
    throw std::invalid_argument("DQN batch_size " + std::to_string(config_.batch_size) + " is not a multiple of the " +
                                std::to_string(hooks.world_size) + " learners");
  }
  hooks_ = std::move(hooks);
  DqnConfig shard = config_;
  shard.buffer_size = std::max<int64_t>(1, (config_.buffer_size + hooks_.world_size - 1) / hooks_.world_size);
  set_buffer(make_dqn_replay_buffer(shard, stored_obs_size()));
}

void DqnLearner::set_buffer(std::unique_ptr<ReplayBuffer> buffer) {
  buffer_ = std::move(buffer);
  prioritized_ = dynamic_cast<PrioritizedReplayBuffer*>(buffer_.get());
}

int64_t DqnLearner::training_rounds_due(int64_t received_steps) {
  if (received_steps < received_steps_) {
    throw std::invalid_argument("training_rounds_due: received steps went down from " + std::to_string(received_steps_) +
                                " to " + std::to_string(received_steps));
  }
  // Round boundaries are the multiples m of train_freq with m > learning_starts.
  auto rounds_until = [this](int64_t steps) {
    return std::max<int64_t>(0, steps / config_.train_freq - config_.learning_starts / config_.train_freq);
  };
  const int64_t due = rounds_until(received_steps) - rounds_until(received_steps_);
  received_steps_ = received_steps;
  return ready() ? due : 0;
}

DqnUpdateMetrics DqnLearner::train(int gradient_steps, int64_t timesteps_done) {
  if (gradient_steps < 1) throw std::invalid_argument("DqnLearner::train needs gradient_steps >= 1, got " + std::to_string(gradient_steps));
  if (!ready()) {
    throw std::logic_error("DqnLearner::train before the buffer is ready: " + std::to_string(buffer_->size()) +
                           " transitions stored, learning_starts " + std::to_string(config_.learning_starts) +
                           ", batch_size " + std::to_string(config_.batch_size));
  }
  update_target(timesteps_done);
  const double lr = config_.lr_at(timesteps_done);
  for (auto& group : optimizer_->param_groups()) static_cast<torch::optim::AdamOptions&>(group.options()).lr(lr);
  const double beta = prioritized_ != nullptr ? annealed_beta(config_.prioritized_replay_beta, timesteps_done, config_.beta_horizon()) : 0.0;
  clear_step_records();
  const int64_t skipped_before = scaler_.skipped_steps();
  for (int step = 0; step < gradient_steps; ++step) {
    // One learner only: a data-parallel rank stopping alone would leave the others in the all-reduce.
    if (hooks_.world_size == 1 && stop_check_ && stop_check_()) {
      throw StopRequested("the DQN training round stopped after " + std::to_string(step) + " of " +
                          std::to_string(gradient_steps) + " gradient steps: the stop is overdue (half of " +
                          kStopGraceEnv + " passed); the steps taken stay, each whole");
    }
    gradient_step(beta);
  }
  DqnUpdateMetrics metrics = round_metrics(lr, beta, timesteps_done);
  metrics.skipped_steps = scaler_.skipped_steps() - skipped_before;
  metrics.loss_scale = scaler_.enabled() ? scaler_.scale() : 0.0;
  return metrics;
}

DqnUpdateMetrics DqnLearner::round_metrics(double lr, double beta, int64_t timesteps_done) {
  // One host read for all the means (over the applied steps: NaN when fp16 skipped them all).
  std::vector<double> m(4, std::numeric_limits<double>::quiet_NaN());
  if (!losses_.empty()) {
    const torch::Tensor means = torch::stack({torch::stack(losses_).mean(), torch::cat(q_values_).mean(),
                                              torch::cat(td_errors_).abs().mean(), torch::stack(grad_norms_).mean()})
                                    .to(torch::kCPU, torch::kDouble);
    std::copy(means.data_ptr<double>(), means.data_ptr<double>() + 4, m.begin());
  }
  if (hooks_.world_size > 1) {  // equal local batches: the global means are the ranks' mean
    hooks_.allreduce_host(m, ReduceOp::kSum);
    for (double& x : m) x /= static_cast<double>(hooks_.world_size);
  }
  DqnUpdateMetrics metrics;
  metrics.loss = m[0];
  metrics.q_mean = m[1];
  metrics.td_abs_mean = m[2];
  metrics.grad_norm = m[3];
  metrics.lr = lr;
  metrics.epsilon = epsilon(timesteps_done);
  metrics.beta = beta;
  metrics.target_updates = target_updates_;
  metrics.num_gradient_steps = num_gradient_steps_;
  metrics.buffer_size = buffer_->size();
  return metrics;
}

std::shared_ptr<Weights> DqnLearner::weights(uint64_t version) const {
  auto out = std::make_shared<Weights>();
  out->policy_version = version;
  const torch::Tensor host = flat_online_.detach().to(torch::kCPU).contiguous();
  out->params.resize(static_cast<size_t>(host.numel()));
  std::memcpy(out->params.data(), host.data_ptr<float>(), out->params.size() * sizeof(float));
  return out;
}

void DqnLearner::set_config(DqnConfig config) {
  validate(config);
  auto same = [](bool equal, const char* field) {
    if (!equal) throw std::invalid_argument(std::string("DqnLearner::set_config cannot change ") + field + " of a running learner");
  };
  same(config.gamma == config_.gamma, "gamma");
  same(config.n_step == config_.n_step, "n_step");
  same(config.n_step_carry == config_.n_step_carry, "n_step_carry");
  same(config.prioritized_replay == config_.prioritized_replay, "prioritized_replay");
  same(config.prioritized_replay_alpha == config_.prioritized_replay_alpha, "prioritized_replay_alpha");
  same(config.per_eps == config_.per_eps, "per_eps");
  same(config.buffer_size == config_.buffer_size, "buffer_size");
  same(config.precision == config_.precision, "precision");
  config_ = config;
  apply_optimizer_options();
}

void DqnLearner::apply_optimizer_options() {
  for (auto& group : optimizer_->param_groups()) {
    auto& options = static_cast<torch::optim::AdamOptions&>(group.options());
    options.lr(config_.lr);
    options.eps(config_.adam_eps);
  }
}

}  // namespace rlx
