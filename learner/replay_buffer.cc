#include "learner/replay_buffer.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace rlx {

ReplayBuffer::ReplayBuffer(int64_t capacity, StoredObsSize obs_size, NStepConfig n_step)
    : capacity_(capacity), obs_(obs_size), n_step_(obs_size, n_step) {
  if (capacity_ < 1) throw std::invalid_argument("ReplayBuffer needs capacity >= 1, got " + std::to_string(capacity_));
  const auto slots = static_cast<size_t>(capacity_);
  obs_floats_.resize(slots * static_cast<size_t>(obs_.floats));
  next_obs_floats_.resize(slots * static_cast<size_t>(obs_.floats));
  obs_u8_.resize(slots * static_cast<size_t>(obs_.bytes));
  next_obs_u8_.resize(slots * static_cast<size_t>(obs_.bytes));
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

int64_t ReplayBuffer::slot_bytes() const {
  const int64_t observation = obs_.floats * static_cast<int64_t>(sizeof(float)) + obs_.bytes;
  return 2 * observation + static_cast<int64_t>(sizeof(int64_t) + 3 * sizeof(float));
}

void ReplayBuffer::add_transition(const Transition& t) {
  const int64_t slot = next_;
  const auto o = static_cast<std::ptrdiff_t>(obs_.floats), b = static_cast<std::ptrdiff_t>(obs_.bytes);
  std::copy(t.obs, t.obs + o, obs_floats_.begin() + slot * o);
  std::copy(t.next_obs, t.next_obs + o, next_obs_floats_.begin() + slot * o);
  if (b > 0) {
    std::copy(t.obs_u8, t.obs_u8 + b, obs_u8_.begin() + slot * b);
    std::copy(t.next_obs_u8, t.next_obs_u8 + b, next_obs_u8_.begin() + slot * b);
  }
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
  const auto o = static_cast<size_t>(obs_.floats);
  const auto u = static_cast<size_t>(obs_.bytes);
  if (out.indices.data() != slots) out.indices.assign(slots, slots + count);
  out.obs.resize(b * o);
  out.next_obs.resize(b * o);
  out.obs_u8.resize(b * u);
  out.next_obs_u8.resize(b * u);
  out.actions.resize(b);
  out.rewards.resize(b);
  out.terminated.resize(b);
  out.discounts.resize(b);
  for (size_t i = 0; i < b; ++i) {
    const int64_t slot = slots[i];
    if (slot < 0 || slot >= size_) throw std::out_of_range("replay slot " + std::to_string(slot) + " is not filled");
    const auto s = static_cast<size_t>(slot);
    std::copy_n(obs_floats_.begin() + static_cast<std::ptrdiff_t>(s * o), o, out.obs.begin() + static_cast<std::ptrdiff_t>(i * o));
    std::copy_n(next_obs_floats_.begin() + static_cast<std::ptrdiff_t>(s * o), o,
                out.next_obs.begin() + static_cast<std::ptrdiff_t>(i * o));
    std::copy_n(obs_u8_.begin() + static_cast<std::ptrdiff_t>(s * u), u, out.obs_u8.begin() + static_cast<std::ptrdiff_t>(i * u));
    std::copy_n(next_obs_u8_.begin() + static_cast<std::ptrdiff_t>(s * u), u,
                out.next_obs_u8.begin() + static_cast<std::ptrdiff_t>(i * u));
    out.actions[i] = actions_[s];
    out.rewards[i] = rewards_[s];
    out.terminated[i] = terminated_[s];
    out.discounts[i] = discounts_[s];
  }
}

namespace {

// The first `count` values of a column.
template <typename T>
std::vector<T> head(const std::vector<T>& column, size_t count) {
  return std::vector<T>(column.begin(), column.begin() + static_cast<std::ptrdiff_t>(count));
}

}  // namespace

void ReplayBuffer::save(BinaryWriter& out) const {
  const auto filled = static_cast<size_t>(size_);
  const auto o = static_cast<size_t>(obs_.floats);
  const auto u = static_cast<size_t>(obs_.bytes);
  out.put<int64_t>(capacity_);
  out.put<int64_t>(obs_.floats);
  if (u > 0) out.put<int64_t>(obs_.bytes);  // a float-only buffer keeps the format of before
  out.put<int64_t>(next_);
  out.put<int64_t>(total_added_);
  out.put_vector(head(obs_floats_, filled * o));
  out.put_vector(head(next_obs_floats_, filled * o));
  out.put_vector(head(actions_, filled));
  out.put_vector(head(rewards_, filled));
  out.put_vector(head(terminated_, filled));
  out.put_vector(head(discounts_, filled));
  if (u > 0) {
    out.put_vector(head(obs_u8_, filled * u));
    out.put_vector(head(next_obs_u8_, filled * u));
  }
  n_step_.save(out);
}

void ReplayBuffer::load(BinaryReader& in) {
  const auto capacity = in.get<int64_t>();
  const auto obs_size = in.get<int64_t>();
  const auto obs_bytes = obs_.bytes > 0 ? in.get<int64_t>() : 0;
  if (capacity != capacity_ || obs_size != obs_.floats || obs_bytes != obs_.bytes) {
    throw std::invalid_argument("replay state of capacity " + std::to_string(capacity) + " and observations of " +
                                std::to_string(obs_size) + " floats and " + std::to_string(obs_bytes) +
                                " bytes does not fit a buffer of " + std::to_string(capacity_) + ", " +
                                std::to_string(obs_.floats) + " and " + std::to_string(obs_.bytes));
  }
  const auto next = in.get<int64_t>();
  const auto total_added = in.get<int64_t>();
  const auto slots = static_cast<uint64_t>(capacity_);
  const auto o = static_cast<uint64_t>(obs_.floats);
  const auto u = static_cast<uint64_t>(obs_.bytes);
  std::vector<float> obs = in.get_vector<float>(slots * o);
  std::vector<float> next_obs = in.get_vector<float>(slots * o);
  std::vector<int64_t> actions = in.get_vector<int64_t>(slots);
  std::vector<float> rewards = in.get_vector<float>(slots);
  std::vector<float> terminated = in.get_vector<float>(slots);
  std::vector<float> discounts = in.get_vector<float>(slots);
  std::vector<uint8_t> obs_u8, next_obs_u8;
  if (u > 0) {
    obs_u8 = in.get_vector<uint8_t>(slots * u);
    next_obs_u8 = in.get_vector<uint8_t>(slots * u);
  }
  const uint64_t filled = actions.size();
  if (obs.size() != filled * o || next_obs.size() != filled * o || obs_u8.size() != filled * u ||
      next_obs_u8.size() != filled * u || rewards.size() != filled || terminated.size() != filled ||
      discounts.size() != filled || next < 0 || next >= capacity_ || total_added < static_cast<int64_t>(filled) ||
      (filled < slots && next != static_cast<int64_t>(filled))) {
    throw std::invalid_argument("replay state: the slots and the ring position disagree");
  }
  NStepAccumulator n_step(obs_, n_step_.config());
  n_step.load(in);
  std::copy(obs.begin(), obs.end(), obs_floats_.begin());
  std::copy(next_obs.begin(), next_obs.end(), next_obs_floats_.begin());
  std::copy(obs_u8.begin(), obs_u8.end(), obs_u8_.begin());
  std::copy(next_obs_u8.begin(), next_obs_u8.end(), next_obs_u8_.begin());
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
