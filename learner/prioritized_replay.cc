#include "learner/prioritized_replay.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace rlx {

void PrioritizedReplayConfig::validate() const {
  if (!(alpha >= 0.0)) throw std::invalid_argument("prioritized replay needs alpha >= 0, got " + std::to_string(alpha));
  if (!(epsilon > 0.0)) throw std::invalid_argument("prioritized replay needs epsilon > 0, got " + std::to_string(epsilon));
}

double annealed_beta(double beta0, int64_t timesteps, int64_t horizon) {
  if (!(beta0 >= 0.0 && beta0 <= 1.0)) throw std::invalid_argument("beta0 must lie in [0, 1], got " + std::to_string(beta0));
  if (horizon <= 0) return 1.0;
  const double progress = std::clamp(static_cast<double>(timesteps) / static_cast<double>(horizon), 0.0, 1.0);
  return beta0 + progress * (1.0 - beta0);
}

namespace {

PrioritizedReplayConfig validated(PrioritizedReplayConfig config) {
  config.validate();
  return config;
}

}  // namespace

PrioritizedReplayBuffer::PrioritizedReplayBuffer(int64_t capacity, StoredObsSize obs_size, NStepConfig n_step,
                                                 PrioritizedReplayConfig priority)
    : ReplayBuffer(capacity, obs_size, n_step), priority_(validated(priority)), sum_(capacity), min_(capacity) {}

void PrioritizedReplayBuffer::on_stored(int64_t slot) {
  const double p = std::pow(max_priority_, priority_.alpha);
  sum_.set(slot, p);
  min_.set(slot, p);
}

void PrioritizedReplayBuffer::sample(int64_t batch_size, double beta, Rng& rng, ReplaySample& out) const {
  if (batch_size < 1) throw std::invalid_argument("PrioritizedReplayBuffer::sample needs batch_size >= 1, got " + std::to_string(batch_size));
  if (!(beta >= 0.0)) throw std::invalid_argument("PrioritizedReplayBuffer::sample needs beta >= 0, got " + std::to_string(beta));
  if (size() == 0) throw std::logic_error("PrioritizedReplayBuffer::sample on an empty buffer");
  const auto b = static_cast<size_t>(batch_size);
  out.indices.resize(b);
  out.weights.resize(b);
  const double total = sum_.total();
  const double segment = total / static_cast<double>(batch_size);
  const auto n = static_cast<double>(size());
  const double max_weight = std::pow(n * min_.min() / total, -beta);
  for (size_t i = 0; i < b; ++i) {
    const double mass = (static_cast<double>(i) + rng.uniform()) * segment;
    const int64_t slot = sum_.find_prefix_sum(mass);
    out.indices[i] = slot;
    const double probability = sum_.get(slot) / total;
    out.weights[i] = static_cast<float>(std::pow(n * probability, -beta) / max_weight);
  }
  gather(out.indices.data(), batch_size, out);
}

void PrioritizedReplayBuffer::update_priorities(const int64_t* slots, const float* td_errors, int64_t count) {
  for (int64_t i = 0; i < count; ++i) {
    const int64_t slot = slots[i];
    if (slot < 0 || slot >= size()) throw std::out_of_range("priority update for unfilled replay slot " + std::to_string(slot));
    if (!std::isfinite(td_errors[i])) throw std::invalid_argument("priority update with a non-finite td error");
  }
  for (int64_t i = 0; i < count; ++i) {
    const double p = std::abs(static_cast<double>(td_errors[i])) + priority_.epsilon;
    const double scaled = std::pow(p, priority_.alpha);
    sum_.set(slots[i], scaled);
    min_.set(slots[i], scaled);
    max_priority_ = std::max(max_priority_, p);
  }
}

void PrioritizedReplayBuffer::save(BinaryWriter& out) const {
  ReplayBuffer::save(out);
  save_priorities(out);
}

void PrioritizedReplayBuffer::load(BinaryReader& in) {
  ReplayBuffer::load(in);
  load_priorities(in);
}

void PrioritizedReplayBuffer::save_rest(BinaryWriter& out) const {
  ReplayBuffer::save_rest(out);
  save_priorities(out);
}

void PrioritizedReplayBuffer::load_rest(BinaryReader& in) {
  ReplayBuffer::load_rest(in);
  load_priorities(in);
}

void PrioritizedReplayBuffer::save_priorities(BinaryWriter& out) const {
  std::vector<double> priorities(static_cast<size_t>(size()));
  for (int64_t slot = 0; slot < size(); ++slot) priorities[static_cast<size_t>(slot)] = sum_.get(slot);
  out.put_vector(priorities);
  out.put<double>(max_priority_);
}

void PrioritizedReplayBuffer::load_priorities(BinaryReader& in) {
  const std::vector<double> priorities = in.get_vector<double>(static_cast<uint64_t>(capacity()));
  const auto max_priority = in.get<double>();
  if (static_cast<int64_t>(priorities.size()) != size() || !(max_priority > 0.0)) {
    throw std::invalid_argument("prioritized replay state: the priorities do not fit the slots");
  }
  for (size_t slot = 0; slot < priorities.size(); ++slot) {
    if (!(priorities[slot] >= 0.0)) throw std::invalid_argument("prioritized replay state: a negative priority");
    sum_.set(static_cast<int64_t>(slot), priorities[slot]);  // a tree's nodes depend on its leaves alone
    min_.set(static_cast<int64_t>(slot), priorities[slot]);
  }
  max_priority_ = max_priority;
}

}  // namespace rlx
