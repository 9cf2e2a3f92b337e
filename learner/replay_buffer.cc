#include "learner/replay_buffer.h"

#include <cstring>
#include <stdexcept>
#include <string>

namespace rlx {

ReplayBuffer::ReplayBuffer(int64_t capacity, int64_t obs_size, NStepConfig n_step)
    : capacity_(capacity), obs_size_(obs_size), n_step_(obs_size, n_step) {
  if (capacity_ < 1) throw std::invalid_argument("ReplayBuffer needs capacity >= 1, got " + std::to_string(capacity_));
  const auto slots = static_cast<size_t>(capacity_);
  obs_.resize(slots * static_cast<size_t>(obs_size_));
  next_obs_.resize(slots * static_cast<size_t>(obs_size_));
  actions_.resize(slots);
  rewards_.resize(slots);
  terminated_.resize(slots);
  discounts_.resize(slots);
}

int64_t ReplayBuffer::add(const SampleBatch& batch) {
  const int64_t before = total_added_;
  n_step_.add(batch, [this](const Transition& t) { add_transition(t); });
  return total_added_ - before;
}

void ReplayBuffer::add_transition(const Transition& t) {
  const int64_t slot = next_;
  const size_t row = static_cast<size_t>(slot * obs_size_);
  const size_t bytes = static_cast<size_t>(obs_size_) * sizeof(float);
  std::memcpy(obs_.data() + row, t.obs, bytes);
  std::memcpy(next_obs_.data() + row, t.next_obs, bytes);
  actions_[static_cast<size_t>(slot)] = t.action;
  rewards_[static_cast<size_t>(slot)] = t.reward;
  terminated_[static_cast<size_t>(slot)] = t.terminated ? 1.0f : 0.0f;
  discounts_[static_cast<size_t>(slot)] = t.discount;
  next_ = (next_ + 1) % capacity_;
  if (size_ < capacity_) ++size_;
  ++total_added_;
  on_stored(slot);
}

int64_t ReplayBuffer::flush_pending() {
  return n_step_.flush([this](const Transition& t) { add_transition(t); });
}

void ReplayBuffer::sample(int64_t batch_size, Rng& rng, ReplaySample& out) const {
  if (batch_size < 1) throw std::invalid_argument("ReplayBuffer::sample needs batch_size >= 1, got " + std::to_string(batch_size));
  if (size_ == 0) throw std::logic_error("ReplayBuffer::sample on an empty buffer");
  out.indices.resize(static_cast<size_t>(batch_size));
  for (int64_t& slot : out.indices) slot = rng.uniform_int(size_);
  out.weights.assign(static_cast<size_t>(batch_size), 1.0f);
  gather(out.indices.data(), batch_size, out);
}

ReplaySample ReplayBuffer::sample(int64_t batch_size, Rng& rng) const {
  ReplaySample out;
  sample(batch_size, rng, out);
  return out;
}

void ReplayBuffer::gather(const int64_t* slots, int64_t count, ReplaySample& out) const {
  const auto b = static_cast<size_t>(count);
  const auto o = static_cast<size_t>(obs_size_);
  if (out.indices.data() != slots) out.indices.assign(slots, slots + count);
  out.obs.resize(b * o);
  out.next_obs.resize(b * o);
  out.actions.resize(b);
  out.rewards.resize(b);
  out.terminated.resize(b);
  out.discounts.resize(b);
  for (size_t i = 0; i < b; ++i) {
    const int64_t slot = slots[i];
    if (slot < 0 || slot >= size_) throw std::out_of_range("replay slot " + std::to_string(slot) + " is not filled");
    const auto s = static_cast<size_t>(slot);
    std::memcpy(out.obs.data() + i * o, obs_.data() + s * o, o * sizeof(float));
    std::memcpy(out.next_obs.data() + i * o, next_obs_.data() + s * o, o * sizeof(float));
    out.actions[i] = actions_[s];
    out.rewards[i] = rewards_[s];
    out.terminated[i] = terminated_[s];
    out.discounts[i] = discounts_[s];
  }
}

}  // namespace rlx
