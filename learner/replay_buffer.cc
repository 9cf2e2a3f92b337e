#include "learner/replay_buffer.h"

#include <algorithm>
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

void ReplayBuffer::save(BinaryWriter& out) const {
  const auto filled = static_cast<size_t>(size_);
  const auto o = static_cast<size_t>(obs_size_);
  out.put<int64_t>(capacity_);
  out.put<int64_t>(obs_size_);
  out.put<int64_t>(next_);
  out.put<int64_t>(total_added_);
  out.put_vector(std::vector<float>(obs_.begin(), obs_.begin() + static_cast<std::ptrdiff_t>(filled * o)));
  out.put_vector(std::vector<float>(next_obs_.begin(), next_obs_.begin() + static_cast<std::ptrdiff_t>(filled * o)));
  out.put_vector(std::vector<int64_t>(actions_.begin(), actions_.begin() + static_cast<std::ptrdiff_t>(filled)));
  out.put_vector(std::vector<float>(rewards_.begin(), rewards_.begin() + static_cast<std::ptrdiff_t>(filled)));
  out.put_vector(std::vector<float>(terminated_.begin(), terminated_.begin() + static_cast<std::ptrdiff_t>(filled)));
  out.put_vector(std::vector<float>(discounts_.begin(), discounts_.begin() + static_cast<std::ptrdiff_t>(filled)));
  n_step_.save(out);
}

void ReplayBuffer::load(BinaryReader& in) {
  const auto capacity = in.get<int64_t>();
  const auto obs_size = in.get<int64_t>();
  if (capacity != capacity_ || obs_size != obs_size_) {
    throw std::invalid_argument("replay state of capacity " + std::to_string(capacity) + " and observation size " +
                                std::to_string(obs_size) + " does not fit a buffer of " + std::to_string(capacity_) +
                                " and " + std::to_string(obs_size_));
  }
  const auto next = in.get<int64_t>();
  const auto total_added = in.get<int64_t>();
  const auto slots = static_cast<uint64_t>(capacity_);
  const auto o = static_cast<uint64_t>(obs_size_);
  std::vector<float> obs = in.get_vector<float>(slots * o);
  std::vector<float> next_obs = in.get_vector<float>(slots * o);
  std::vector<int64_t> actions = in.get_vector<int64_t>(slots);
  std::vector<float> rewards = in.get_vector<float>(slots);
  std::vector<float> terminated = in.get_vector<float>(slots);
  std::vector<float> discounts = in.get_vector<float>(slots);
  const uint64_t filled = actions.size();
  if (obs.size() != filled * o || next_obs.size() != filled * o || rewards.size() != filled ||
      terminated.size() != filled || discounts.size() != filled || next < 0 || next >= capacity_ ||
      total_added < static_cast<int64_t>(filled) || (filled < slots && next != static_cast<int64_t>(filled))) {
    throw std::invalid_argument("replay state: the slots and the ring position disagree");
  }
  NStepAccumulator n_step(obs_size_, n_step_.config());
  n_step.load(in);
  std::copy(obs.begin(), obs.end(), obs_.begin());
  std::copy(next_obs.begin(), next_obs.end(), next_obs_.begin());
  std::copy(actions.begin(), actions.end(), actions_.begin());
  std::copy(rewards.begin(), rewards.end(), rewards_.begin());
  std::copy(terminated.begin(), terminated.end(), terminated_.begin());
  std::copy(discounts.begin(), discounts.end(), discounts_.begin());
  size_ = static_cast<int64_t>(filled);
  next_ = next;
  total_added_ = total_added;
  n_step_ = std::move(n_step);
}

}  // namespace rlx
