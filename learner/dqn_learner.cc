#include "learner/dqn_learner.h"

#include "core/config_schema.h"

#include <ATen/CPUGeneratorImpl.h>
#include <torch/serialize/input-archive.h>
#include <torch/serialize/output-archive.h>
#include <torch/utils.h>
#include <c10/util/string_utils.h>

#ifdef __SSE2__
#include <immintrin.h>
#endif

#include <algorithm>
#include <cmath>
#include <cstring>
#include <istream>
#include <ostream>
#include <stdexcept>
#include <string>
#include <utility>

#include "learner/dqn_loss.h"
#include "learner/non_finite.h"
#include "learner/q_network_backprop.h"

namespace rlx {

namespace {

// Parameters of a module become views of one flat float32 buffer on device (values kept).
torch::Tensor flatten_parameters(torch::nn::Module& module, torch::Device device) {
  module.to(device);
  torch::NoGradGuard no_grad;
  torch::Tensor flat = torch::empty({num_flat_parameters(module)}, torch::TensorOptions().dtype(torch::kFloat).device(device));
  int64_t offset = 0;
  for (auto& p : module.parameters()) {
    torch::Tensor view = flat.narrow(0, offset, p.numel()).view(p.sizes());
    view.copy_(p);
    p.set_data(view);
    offset += p.numel();
  }
  return flat;
}

// Gradients of a module become views of one flat buffer shaped like flat_params; backward
// accumulates into them in place.
torch::Tensor flatten_gradients(torch::nn::Module& module, const torch::Tensor& flat_params) {
  torch::Tensor flat = torch::zeros_like(flat_params);
  int64_t offset = 0;
  for (auto& p : module.parameters()) {
    p.mutable_grad() = flat.narrow(0, offset, p.numel()).view(p.sizes());
    offset += p.numel();
  }
  return flat;
}

// A QNetwork whose initial weights depend only on seed: the default CPU generator is seeded
// for the construction and restored afterwards.
std::shared_ptr<QNetwork> seeded_qnetwork(const PolicyModelConfig& config, uint64_t seed) {
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

struct AdamCoefficients {
  float beta1, one_minus_beta1, beta2, one_minus_beta2, root_bias_correction2, eps, neg_step_size;
};

// One Adam update in torch's op order (m = m b1 + (1 - b1) g; v = v b2 + (1 - b2) g g;
// p += -step_size m / (sqrt(v) / sqrt(bc2) + eps)), four lanes at a time where SSE is there:
// the same IEEE operations in the same order as the scalar tail, so the same results.
void adam_update(float* __restrict p, const float* __restrict g, float* __restrict m, float* __restrict v, int64_t n,
                 const AdamCoefficients& c) {
  int64_t i = 0;
#ifdef __SSE2__
  const __m128 beta1 = _mm_set1_ps(c.beta1), one_minus_beta1 = _mm_set1_ps(c.one_minus_beta1);
  const __m128 beta2 = _mm_set1_ps(c.beta2), one_minus_beta2 = _mm_set1_ps(c.one_minus_beta2);
  const __m128 root_bc2 = _mm_set1_ps(c.root_bias_correction2), eps = _mm_set1_ps(c.eps);
  const __m128 neg_step = _mm_set1_ps(c.neg_step_size);
  for (; i + 4 <= n; i += 4) {
    const __m128 gi = _mm_loadu_ps(g + i);
    const __m128 mi = _mm_add_ps(_mm_mul_ps(_mm_loadu_ps(m + i), beta1), _mm_mul_ps(one_minus_beta1, gi));
    const __m128 vi = _mm_add_ps(_mm_mul_ps(_mm_loadu_ps(v + i), beta2), _mm_mul_ps(_mm_mul_ps(one_minus_beta2, gi), gi));
    const __m128 denom = _mm_add_ps(_mm_div_ps(_mm_sqrt_ps(vi), root_bc2), eps);
    _mm_storeu_ps(m + i, mi);
    _mm_storeu_ps(v + i, vi);
    _mm_storeu_ps(p + i, _mm_add_ps(_mm_loadu_ps(p + i), _mm_mul_ps(neg_step, _mm_div_ps(mi, denom))));
  }
#endif
  for (; i < n; ++i) {
    m[i] = m[i] * c.beta1 + c.one_minus_beta1 * g[i];
    v[i] = v[i] * c.beta2 + c.one_minus_beta2 * g[i] * g[i];
    p[i] += c.neg_step_size * (m[i] / (std::sqrt(v[i]) / c.root_bias_correction2 + c.eps));
  }
}

uint64_t mix64(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ULL;
  return x ^ (x >> 33);
}

// Seed of gradient step `step`'s replay draws.
uint64_t step_seed(uint64_t seed, int64_t step) { return mix64(seed ^ mix64(static_cast<uint64_t>(step) + 0x9e3779b97f4a7c15ULL)); }

std::unique_ptr<ReplayBuffer> make_buffer(const DqnConfig& config, int64_t obs_size) {
  NStepConfig n_step{config.n_step, config.gamma, config.n_step_carry};
  if (!config.prioritized_replay) return std::make_unique<ReplayBuffer>(config.buffer_size, obs_size, n_step);
  return std::make_unique<PrioritizedReplayBuffer>(config.buffer_size, obs_size, n_step,
                                                   PrioritizedReplayConfig{config.prioritized_replay_alpha, config.per_eps});
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

int64_t json_int(const nlohmann::json& state, const char* key) {
  if (!state.is_object() || !state.contains(key) || !state.at(key).is_number_integer()) {
    throw std::invalid_argument(std::string("DQN learner state needs an integer \"") + key + "\"");
  }
  return state.at(key).get<int64_t>();
}

}  // namespace

DqnLearner::DqnLearner(const PolicyModelConfig& model_config, DqnConfig config, uint64_t seed, torch::Device device)
    : model_config_(model_config), config_(config), seed_(seed), device_(device) {
  model_config_.validate();
  if (!model_config_.action_space.is_discrete()) {
    throw std::invalid_argument("DQN needs a Discrete action space, got " + model_config_.action_space.to_string());
  }
  validate(config_);
  online_ = seeded_qnetwork(model_config_, seed_);
  target_ = std::make_shared<QNetwork>(model_config_);
  flat_online_ = flatten_parameters(*online_, device_);
  flat_grad_ = flatten_gradients(*online_, flat_online_);
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
  buffer_ = make_buffer(config_, model_config_.obs_size);
  prioritized_ = dynamic_cast<PrioritizedReplayBuffer*>(buffer_.get());
  if (QNetworkBackprop::supports(*online_)) use_hand_written_gradients(true);
}

DqnLearner::~DqnLearner() = default;

void DqnLearner::use_hand_written_gradients(bool on) {
  if (!on) {
    backprop_.reset();
  } else if (!backprop_) {
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
  buffer_ = make_buffer(shard, model_config_.obs_size);
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

torch::Tensor DqnLearner::host_tensor(float* data, torch::IntArrayRef shape) const {
  torch::Tensor t = torch::from_blob(data, shape, torch::kFloat);
  return device_.is_cpu() ? t : t.to(device_);
}

void DqnLearner::update_target(int64_t timesteps_done) {
  if (timesteps_done <= target_timesteps_) return;
  const int64_t interval = config_.target_update_interval;
  const int64_t due = timesteps_done / interval - target_timesteps_ / interval;
  target_timesteps_ = timesteps_done;
  if (due <= 0) return;
  target_updates_ += due;
  torch::NoGradGuard no_grad;
  // k updates with a fixed online net fold into one with 1 - (1 - tau)^k.
  const double tau = config_.tau >= 1.0 ? 1.0 : 1.0 - std::pow(1.0 - config_.tau, static_cast<double>(due));
  if (tau >= 1.0) {
    flat_target_.copy_(flat_online_);
  } else {
    flat_target_.lerp_(flat_online_, tau);
  }
}

void DqnLearner::gradient_step(double beta) {
  const int64_t b = local_batch_size();
  const uint64_t rank_seed = hooks_.rank == 0 ? seed_ : mix64(seed_ ^ mix64(static_cast<uint64_t>(hooks_.rank)));
  rng_.seed_with(step_seed(rank_seed, num_gradient_steps_));
  if (prioritized_ != nullptr) {
    prioritized_->sample(b, beta, rng_, sample_);
    if (hooks_.world_size > 1) {
      // Weights (N P(i))^-beta / max_j w_j over the global buffer: each rank draws b from its
      // shard, so P(i) = p_i / (M S_r) and the max weight belongs to min over ranks of
      // (min_r / S_r). The local weights used min_r / S_r; rescale them by the global minimum.
      const double local = prioritized_->min_priority() / prioritized_->total_priority();
      std::vector<double> global{local};
      hooks_.allreduce_host(global, ReduceOp::kMin);
      const float factor = static_cast<float>(std::pow(local / global[0], -beta));
      for (float& w : sample_.weights) w *= factor;
    }
  } else {
    buffer_->sample(b, rng_, sample_);
  }
  learn_from(sample_, prioritized_ != nullptr);
  if (prioritized_ != nullptr) {
    const torch::Tensor td_host = td_errors_.back().to(torch::kCPU).contiguous();
    prioritized_->update_priorities(sample_.indices.data(), td_host.data_ptr<float>(), b);
  }
}

void DqnLearner::gradient_step_on(const ReplaySample& sample) {
  if (sample.size() < 1) throw std::invalid_argument("DqnLearner::gradient_step_on needs at least one transition");
  losses_.clear();
  q_values_.clear();
  td_errors_.clear();
  grad_norms_.clear();
  sample_ = sample;
  learn_from(sample_, prioritized_ != nullptr);
}

void DqnLearner::learn_from(ReplaySample& s, bool weighted) {
  const int64_t b = s.size();
  const int64_t o = model_config_.obs_size;
  bootstrap_.resize(static_cast<size_t>(b));
  for (size_t i = 0; i < bootstrap_.size(); ++i) bootstrap_[i] = s.terminated[i] != 0.0f ? 0.0f : s.discounts[i];

  DqnBatch batch;
  batch.obs = host_tensor(s.obs.data(), {b, o});
  batch.next_obs = host_tensor(s.next_obs.data(), {b, o});
  batch.rewards = host_tensor(s.rewards.data(), {b});
  batch.bootstrap = host_tensor(bootstrap_.data(), {b});
  batch.actions = torch::from_blob(s.actions.data(), {b, 1}, torch::kLong);
  if (!device_.is_cpu()) batch.actions = batch.actions.to(device_);
  if (weighted) batch.weights = host_tensor(s.weights.data(), {b});
  DqnLossOutput out;
  if (backprop_) {
    out = backprop_->dqn_gradients(batch, config_.double_q, config_.huber_delta);  // overwrites flat_grad_
  } else {
    out = dqn_loss(*online_, *target_, batch, config_.double_q, config_.huber_delta);
    flat_grad_.zero_();
    out.loss.backward();
  }
  const torch::Tensor& loss = out.loss;
  const torch::Tensor& q = out.q;
  const torch::Tensor& target = out.target;
  if (hooks_.world_size > 1) {
    torch::NoGradGuard no_grad;
    flat_grad_.mul_(1.0 / static_cast<double>(hooks_.world_size));
    std::vector<torch::Tensor> grads{flat_grad_};
    hooks_.allreduce_gradients(grads);
    if (!grads.at(0).is_same(flat_grad_)) flat_grad_.copy_(grads.at(0));
  }
  const torch::Tensor grad_norm = flat_grad_.norm();
  if (device_.is_cpu()) {
    // The same checks and clipping with host scalars: a few ops fewer on the CPU.
    const double norm = grad_norm.item<double>();
    const double loss_value = hooks_.world_size > 1 ? 0.0 : loss.item<double>();
    if (!std::isfinite(norm) || !std::isfinite(loss_value)) throw_non_finite(loss, grad_norm);
    const double scale = config_.grad_clip / (norm + 1e-6);
    if (config_.grad_clip > 0.0 && scale < 1.0) flat_grad_.mul_(scale);
    adam_step();
  } else {
    // The norm is global when data-parallel (the same on every rank), the loss this rank's: a
    // data-parallel step checks the norm alone so that every rank decides alike.
    if (!all_finite(hooks_.world_size > 1 ? grad_norm : torch::stack({grad_norm, loss.detach().to(grad_norm.dtype())}))) {
      throw_non_finite(loss, grad_norm);
    }
    if (config_.grad_clip > 0.0) {
      flat_grad_.mul_(torch::clamp_max(config_.grad_clip / (grad_norm + 1e-6), 1.0));
    }
    optimizer_->step();
  }

  const torch::Tensor td = q.detach() - target;
  losses_.push_back(loss.detach());
  q_values_.push_back(q.detach());
  td_errors_.push_back(td);
  grad_norms_.push_back(grad_norm);
  ++num_gradient_steps_;
}

void DqnLearner::throw_non_finite(const torch::Tensor& loss, const torch::Tensor& grad_norm) const {
  throw NonFiniteLearnerError("DQN gradient step " + std::to_string(num_gradient_steps_ + 1) + ": loss " +
                              std::to_string(loss.item<double>()) + ", gradient norm " +
                              std::to_string(grad_norm.item<double>()) +
                              " (not finite); stopped before the step, no weight changed (try a smaller lr or grad_clip)");
}

void DqnLearner::adam_step() {
  // torch::optim::Adam's update of the one flat parameter, in one loop over its own state (so
  // save()/load() and the options stay torch's); its first step creates that state.
  auto& state = optimizer_->state();
  const auto found = state.find(c10::guts::to_string(flat_online_.unsafeGetTensorImpl()));
  const auto& options = static_cast<const torch::optim::AdamOptions&>(optimizer_->param_groups()[0].options());
  if (found == state.end() || options.amsgrad() || options.weight_decay() != 0.0) {
    optimizer_->step();
    return;
  }
  auto& s = static_cast<torch::optim::AdamParamState&>(*found->second);
  s.step(s.step() + 1);
  const double beta1 = std::get<0>(options.betas());
  const double beta2 = std::get<1>(options.betas());
  const double bias_correction1 = 1.0 - std::pow(beta1, static_cast<double>(s.step()));
  const double bias_correction2 = 1.0 - std::pow(beta2, static_cast<double>(s.step()));
  // torch's op order in float: m = m b1 + (1 - b1) g; v = v b2 + (1 - b2) g g;
  // p += -step_size m / (sqrt(v) / sqrt(bc2) + eps).
  const float b1 = static_cast<float>(beta1), c1 = static_cast<float>(1.0 - beta1);
  const float b2 = static_cast<float>(beta2), c2 = static_cast<float>(1.0 - beta2);
  const float root_bc2 = static_cast<float>(std::sqrt(bias_correction2));
  const float eps = static_cast<float>(options.eps());
  const float neg_step = static_cast<float>(-options.lr() / bias_correction1);
  adam_update(flat_online_.data_ptr<float>(), flat_grad_.data_ptr<float>(), s.exp_avg().data_ptr<float>(),
              s.exp_avg_sq().data_ptr<float>(), flat_online_.numel(), {b1, c1, b2, c2, root_bc2, eps, neg_step});
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
  losses_.clear();
  q_values_.clear();
  td_errors_.clear();
  grad_norms_.clear();
  for (int step = 0; step < gradient_steps; ++step) gradient_step(beta);

  // One host read for all the means.
  const torch::Tensor means = torch::stack({torch::stack(losses_).mean(), torch::cat(q_values_).mean(),
                                            torch::cat(td_errors_).abs().mean(), torch::stack(grad_norms_).mean()})
                                  .to(torch::kCPU, torch::kDouble);
  std::vector<double> m(means.data_ptr<double>(), means.data_ptr<double>() + 4);
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

void DqnLearner::save(std::ostream& out) const {
  torch::serialize::OutputArchive archive;
  archive.write("online", flat_online_.detach().to(torch::kCPU));
  archive.write("target", flat_target_.detach().to(torch::kCPU));
  torch::serialize::OutputArchive optimizer_archive;
  optimizer_->save(optimizer_archive);
  archive.write("optimizer", optimizer_archive);
  archive.save_to(out);
}

void DqnLearner::load(std::istream& in) {
  torch::serialize::InputArchive archive;
  archive.load_from(in, device_);
  torch::Tensor online, target;
  archive.read("online", online);
  archive.read("target", target);
  if (online.numel() != flat_online_.numel() || target.numel() != flat_target_.numel()) {
    throw std::invalid_argument("DQN checkpoint holds " + std::to_string(online.numel()) + " parameters, the model has " +
                                std::to_string(flat_online_.numel()));
  }
  torch::serialize::InputArchive optimizer_archive;
  archive.read("optimizer", optimizer_archive);
  {
    torch::NoGradGuard no_grad;
    flat_online_.copy_(online.view(flat_online_.sizes()));
    flat_target_.copy_(target.view(flat_target_.sizes()));
  }
  optimizer_->load(optimizer_archive);
  apply_optimizer_options();
}

std::string DqnLearner::save_replay() const {
  BinaryWriter out;
  buffer_->save(out);
  return out.take();
}

void DqnLearner::load_replay(const std::string& bytes) {
  DqnConfig config = config_;
  config.buffer_size = buffer_->capacity();  // this rank's shard when data-parallel
  std::unique_ptr<ReplayBuffer> buffer = make_buffer(config, model_config_.obs_size);
  BinaryReader in(bytes, "the replay buffer");
  buffer->load(in);
  in.expect_end();
  buffer_ = std::move(buffer);
  prioritized_ = dynamic_cast<PrioritizedReplayBuffer*>(buffer_.get());
}

nlohmann::json DqnLearner::state_json() const {
  return {{"seed", seed_},
          {"num_gradient_steps", num_gradient_steps_},
          {"target_updates", target_updates_},
          {"target_timesteps", target_timesteps_},
          {"received_steps", received_steps_}};
}

void DqnLearner::load_state_json(const nlohmann::json& state) {
  if (!state.is_object() || !state.contains("seed") || !state.at("seed").is_number_unsigned()) {
    throw std::invalid_argument("DQN learner state needs an unsigned integer \"seed\"");
  }
  const int64_t steps = json_int(state, "num_gradient_steps");
  const int64_t updates = json_int(state, "target_updates");
  const int64_t target_timesteps = json_int(state, "target_timesteps");
  const int64_t received = json_int(state, "received_steps");
  if (steps < 0 || updates < 0 || target_timesteps < 0 || received < 0) throw std::invalid_argument("DQN learner state has a negative counter");
  seed_ = state.at("seed").get<uint64_t>();
  num_gradient_steps_ = steps;
  target_updates_ = updates;
  target_timesteps_ = target_timesteps;
  received_steps_ = received;
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
