#include "native/sac_learner.h"

#include <algorithm>
#include <cmath>
#include <istream>
#include <ostream>
#include <sstream>
#include <stdexcept>

#include "core/binary_io.h"
#include "core/config_schema.h"
#include "core/non_finite_error.h"
#include "core/stop_signal.h"
#include "native/dense_backprop.h"
#include "native/gradient_clip.h"

namespace rlx {

namespace {

constexpr uint64_t kSacStateMagic = 0x31305341534c5852ULL;  // "RLXSAS01"
constexpr uint64_t kLearnerStream = 0x5ac1ea57e5ULL;        // the learner's draws differ from the workers'

SacConfig validated(SacConfig config) {
  check_config(config);
  return config;
}

// The global norm of grads; scaled down to max_norm when it is larger (max_norm > 0).
double clip_gradients(std::vector<float>& grads, double max_norm) {
  const double norm = std::sqrt(sum_of_squares(grads.data(), static_cast<int64_t>(grads.size())));
  if (max_norm > 0 && norm > max_norm) {
    scale_in_place(grads.data(), static_cast<int64_t>(grads.size()), static_cast<float>(clip_scale(norm, max_norm)));
  }
  return norm;
}

void write_vector(BinaryWriter& out, const std::vector<float>& values) { out.put_vector(values); }

std::vector<float> read_vector(BinaryReader& in, size_t expected, const char* what) {
  std::vector<float> values = in.get_vector<float>(expected);
  if (values.size() != expected) {
    throw std::invalid_argument(std::string("SAC learner state: ") + what + " holds " + std::to_string(values.size()) +
                                " values, the model has " + std::to_string(expected));
  }
  return values;
}

}  // namespace

NativeSacLearner::NativeSacLearner(const ModelSpec& model_config, SacConfig config, uint64_t seed)
    : model_config_(model_config),
      config_(validated(std::move(config))),
      backprop_(squashed_gaussian_layout(model_config), continuous_q_layout(model_config)),
      replay_(config_.buffer_size, model_config.obs_size, model_config.action_space),
      rng_(seed ^ kLearnerStream),
      target_entropy_(-static_cast<double>(model_config.action_space.size())),
      stop_check_(stop_overdue) {
  actor_ = initial_parameters(backprop_.actor_layout(), seed);
  critics_ = initial_parameters(backprop_.critic_layout(), seed + 1);
  const std::vector<float> second = initial_parameters(backprop_.critic_layout(), seed + 2);
  critics_.insert(critics_.end(), second.begin(), second.end());
  targets_ = critics_;
  actor_grads_.resize(actor_.size());
  critic_grads_.resize(critics_.size());
  actor_adam_ = Adam(actor_.size());
  critic_adam_ = Adam(critics_.size());
  alpha_adam_ = Adam(1);
  log_alpha_ = static_cast<float>(std::log(config_.initial_alpha));
}

int64_t NativeSacLearner::add(const SampleBatch& batch) { return replay_.add(batch); }

int64_t NativeSacLearner::steps_due(int64_t received) const {
  if (received <= config_.learning_starts) return 0;
  const auto due = static_cast<int64_t>(std::floor(config_.utd_ratio * static_cast<double>(received - config_.learning_starts)));
  return std::max<int64_t>(0, due - gradient_steps_);
}

double NativeSacLearner::alpha() const { return std::exp(static_cast<double>(log_alpha_)); }

SacUpdateMetrics NativeSacLearner::train(int64_t steps, int64_t timesteps) {
  SacUpdateMetrics metrics;
  const int64_t rows = config_.batch_size, a = replay_.action_size();
  next_noise_.resize(static_cast<size_t>(rows * a));
  noise_.resize(static_cast<size_t>(rows * a));
  for (int64_t step = 0; step < steps; ++step) {
    if (stop_check_ && stop_check_()) {
      throw StopRequested("SAC stopped after " + std::to_string(step) + " of " + std::to_string(steps) +
                          " gradient steps due: the stop is overdue (half of " + kStopGraceEnv +
                          " passed); the steps taken stay, each whole, and the rest stay due");
    }
    replay_.sample(rows, rng_, sample_);
    for (float& z : next_noise_) z = static_cast<float>(rng_.normal());
    for (float& z : noise_) z = static_cast<float>(rng_.normal());
    const double alpha = this->alpha();
    SacStepStats stats;
    backprop_.critic_gradients(actor_.data(), critics_.data(), targets_.data(), alpha, config_.gamma, sample_,
                               next_noise_.data(), critic_grads_.data(), stats);
    backprop_.actor_gradients(actor_.data(), critics_.data(), alpha, sample_, noise_.data(), actor_grads_.data(), stats);
    const double critic_norm = clip_gradients(critic_grads_, config_.grad_clip);
    const double actor_norm = clip_gradients(actor_grads_, config_.grad_clip);
    // d/d log alpha of -log alpha * (log pi + target entropy), averaged over the batch.
    const float alpha_grad = static_cast<float>(-(stats.log_prob_mean + target_entropy_));
    if (!std::isfinite(stats.critic_loss) || !std::isfinite(stats.actor_loss) || !std::isfinite(critic_norm) ||
        !std::isfinite(actor_norm) || !std::isfinite(alpha_grad)) {
      throw NonFiniteLearnerError("SAC gradient step " + std::to_string(gradient_steps_ + 1) +
                                  ": non-finite loss or gradient (critic loss " + std::to_string(stats.critic_loss) +
                                  ", actor loss " + std::to_string(stats.actor_loss) + ")");
    }
    const double critic_lr = config_.critic_lr_at(timesteps);
    adam_step(critics_.data(), critic_grads_.data(), critic_adam_.exp_avg.data(), critic_adam_.exp_avg_sq.data(),
              static_cast<int64_t>(critics_.size()), ++critic_adam_.step, critic_lr, config_.adam_eps);
    adam_step(actor_.data(), actor_grads_.data(), actor_adam_.exp_avg.data(), actor_adam_.exp_avg_sq.data(),
              static_cast<int64_t>(actor_.size()), ++actor_adam_.step, config_.actor_lr_at(timesteps), config_.adam_eps);
    if (config_.autotune_alpha) {
      adam_step(&log_alpha_, &alpha_grad, alpha_adam_.exp_avg.data(), alpha_adam_.exp_avg_sq.data(), 1,
                ++alpha_adam_.step, config_.alpha_lr_at(timesteps), config_.adam_eps);
    }
    const auto tau = static_cast<float>(config_.tau);
    for (size_t i = 0; i < targets_.size(); ++i) targets_[i] += tau * (critics_[i] - targets_[i]);
    ++gradient_steps_;
    metrics = {stats.critic_loss, stats.actor_loss, alpha, -stats.log_prob_mean, stats.q_mean, critic_norm, actor_norm,
               critic_lr, step + 1};
  }
  return metrics;
}

std::shared_ptr<Weights> NativeSacLearner::weights(uint64_t version) const {
  auto weights = std::make_shared<Weights>();
  weights->policy_version = version;
  weights->params = actor_;
  return weights;
}

void NativeSacLearner::save(std::ostream& out) const {
  BinaryWriter writer;
  writer.put<uint64_t>(kSacStateMagic);
  for (const std::vector<float>* values : {&actor_, &critics_, &targets_}) write_vector(writer, *values);
  for (const Adam* adam : {&actor_adam_, &critic_adam_, &alpha_adam_}) {
    write_vector(writer, adam->exp_avg);
    write_vector(writer, adam->exp_avg_sq);
    writer.put<int64_t>(adam->step);
  }
  writer.put<float>(log_alpha_);
  writer.put<int64_t>(gradient_steps_);
  writer.put<Rng::State>(rng_.state());
  out << writer.bytes();
}

void NativeSacLearner::load(std::istream& in) {
  std::ostringstream text;
  text << in.rdbuf();
  const std::string bytes = text.str();
  BinaryReader reader(bytes, "SAC learner state");
  if (reader.get<uint64_t>() != kSacStateMagic) throw std::invalid_argument("SAC learner state: not a SAC learner's file");
  std::vector<float> actor = read_vector(reader, actor_.size(), "the actor");
  std::vector<float> critics = read_vector(reader, critics_.size(), "the critics");
  std::vector<float> targets = read_vector(reader, targets_.size(), "the target critics");
  Adam adams[3];
  const size_t sizes[3] = {actor_.size(), critics_.size(), 1};
  for (int i = 0; i < 3; ++i) {
    adams[i].exp_avg = read_vector(reader, sizes[i], "an Adam state");
    adams[i].exp_avg_sq = read_vector(reader, sizes[i], "an Adam state");
    adams[i].step = reader.get<int64_t>();
  }
  const auto log_alpha = reader.get<float>();
  const auto steps = reader.get<int64_t>();
  const auto rng_state = reader.get<Rng::State>();
  reader.expect_end();
  actor_ = std::move(actor);
  critics_ = std::move(critics);
  targets_ = std::move(targets);
  actor_adam_ = std::move(adams[0]);
  critic_adam_ = std::move(adams[1]);
  alpha_adam_ = std::move(adams[2]);
  log_alpha_ = log_alpha;
  gradient_steps_ = steps;
  rng_.set_state(rng_state);
}

std::string NativeSacLearner::save_replay() const {
  BinaryWriter writer;
  replay_.save(writer);
  return writer.take();
}

void NativeSacLearner::load_replay(const std::string& bytes) {
  BinaryReader reader(bytes, "SAC replay buffer");
  replay_.load(reader);
  reader.expect_end();
}

ReplayListing NativeSacLearner::checkpoint_replay(const std::filesystem::path& dir) {
  return replay_log_.checkpoint(dir, replay_.inserted(), static_cast<uint64_t>(replay_.size()),
                                [this](uint64_t first, uint64_t end, SegmentWriter& out) { replay_.write_rows(first, end, out); });
}

void NativeSacLearner::restore_replay(const std::filesystem::path& dir, const ReplayListing& listing) {
  replay_.reset_to(listing.inserted);
  replay_log_.restore(dir, listing, static_cast<uint64_t>(replay_.capacity()),
                      [this](const ReplaySegment& segment, SegmentReader& in) { replay_.read_rows(segment.first, segment.end, in); });
}

}  // namespace rlx
