#include "native/continuous_replay.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace rlx {

ContinuousReplay::ContinuousReplay(int64_t capacity, int64_t obs_size, const Space& action_space)
    : capacity_(capacity), obs_size_(obs_size), action_size_(action_space.is_discrete() ? 0 : action_space.size()) {
  if (capacity < 1) throw std::invalid_argument("replay capacity must be >= 1, got " + std::to_string(capacity));
  if (obs_size < 1) throw std::invalid_argument("replay obs_size must be >= 1, got " + std::to_string(obs_size));
  if (action_space.is_discrete()) throw std::invalid_argument("SAC's replay needs a Box action space");
  for (int64_t j = 0; j < action_size_; ++j) {
    const float low = action_space.low[static_cast<size_t>(j)], high = action_space.high[static_cast<size_t>(j)];
    if (!std::isfinite(low) || !std::isfinite(high) || !(low < high)) {
      throw std::invalid_argument("SAC needs finite Box bounds low < high, got " + action_space.to_string());
    }
    low_.push_back(low);
    half_range_.push_back(0.5f * (high - low));
  }
  const auto slots = static_cast<size_t>(capacity);
  obs_.resize(slots * static_cast<size_t>(obs_size));
  next_obs_.resize(slots * static_cast<size_t>(obs_size));
  actions_.resize(slots * static_cast<size_t>(action_size_));
  rewards_.resize(slots);
  terminated_.resize(slots);
}

void ContinuousReplay::store(const float* obs, const float* env_action, float reward, const float* next_obs,
                             bool terminated) {
  const auto slot = static_cast<size_t>(next_);
  const auto o = static_cast<size_t>(obs_size_), a = static_cast<size_t>(action_size_);
  std::copy(obs, obs + o, obs_.begin() + static_cast<std::ptrdiff_t>(slot * o));
  std::copy(next_obs, next_obs + o, next_obs_.begin() + static_cast<std::ptrdiff_t>(slot * o));
  for (size_t j = 0; j < a; ++j) {
    const float scaled = (env_action[j] - low_[j]) / half_range_[j] - 1.0f;
    actions_[slot * a + j] = std::fmin(std::fmax(scaled, -1.0f), 1.0f);
  }
  rewards_[slot] = reward;
  terminated_[slot] = terminated ? 1.0f : 0.0f;
  next_ = (next_ + 1) % capacity_;
  if (size_ < capacity_) ++size_;
  ++inserted_;
}

namespace {

// Calls fn(slot, count) for each run of consecutive slots that transitions [first, end) take.
template <typename Fn>
void for_each_slot_run(uint64_t first, uint64_t end, uint64_t capacity, Fn fn) {
  while (first < end) {
    const uint64_t slot = first % capacity;
    const uint64_t count = std::min(end - first, capacity - slot);
    fn(static_cast<size_t>(slot), static_cast<size_t>(count));
    first += count;
  }
}

}  // namespace

template <typename Replay, typename Fn>
void ContinuousReplay::for_each_block(Replay& replay, uint64_t first, uint64_t end, Fn fn) {
  const auto o = static_cast<size_t>(replay.obs_size_), a = static_cast<size_t>(replay.action_size_);
  for_each_slot_run(first, end, static_cast<uint64_t>(replay.capacity_), [&](size_t slot, size_t count) {
    fn(replay.obs_.data() + slot * o, count * o);
    fn(replay.actions_.data() + slot * a, count * a);
    fn(replay.rewards_.data() + slot, count);
    fn(replay.next_obs_.data() + slot * o, count * o);
    fn(replay.terminated_.data() + slot, count);
  });
}

void ContinuousReplay::write_rows(uint64_t first, uint64_t end, SegmentWriter& out) const {
  if (first > end || end > inserted_ || first < inserted_ - static_cast<uint64_t>(size_)) {
    throw std::invalid_argument("replay transitions [" + std::to_string(first) + ", " + std::to_string(end) +
                                ") are not all held (it holds [" + std::to_string(inserted_ - size_) + ", " +
                                std::to_string(inserted_) + "))");
  }
  for_each_block(*this, first, end, [&](const float* block, size_t floats) { out.write_floats(block, floats); });
}

void ContinuousReplay::reset_to(uint64_t inserted) {
  inserted_ = inserted;
  next_ = static_cast<int64_t>(inserted % static_cast<uint64_t>(capacity_));
  size_ = static_cast<int64_t>(std::min<uint64_t>(inserted, static_cast<uint64_t>(capacity_)));
}

void ContinuousReplay::read_rows(uint64_t first, uint64_t end, SegmentReader& in) {
  if (first > end || end > inserted_) {
    throw std::invalid_argument("replay transitions [" + std::to_string(first) + ", " + std::to_string(end) +
                                ") lie past the " + std::to_string(inserted_) + " taken in");
  }
  for_each_block(*this, first, end, [&](float* block, size_t floats) { in.read_floats(block, floats); });
}

int64_t ContinuousReplay::add(const SampleBatch& batch) {
  batch.validate();
  if (batch.obs_size != obs_size_ || batch.action_size != action_size_) {
    throw std::invalid_argument("fragment with obs size " + std::to_string(batch.obs_size) + " and action size " +
                                std::to_string(batch.action_size) + " for a replay of " + std::to_string(obs_size_) +
                                " and " + std::to_string(action_size_));
  }
  const int64_t k_envs = batch.num_envs, o = obs_size_;
  std::vector<int32_t> final_slot(static_cast<size_t>(batch.num_transitions()), -1);
  for (size_t d = 0; d < batch.final_obs_index.size(); ++d) final_slot[static_cast<size_t>(batch.final_obs_index[d])] = static_cast<int32_t>(d);
  const std::vector<uint8_t> dropped = batch.dropped_rows();
  for (int64_t t = 0; t < batch.num_steps; ++t) {
    for (int64_t k = 0; k < k_envs; ++k) {
      const int64_t i = t * k_envs + k;
      // A dropped episode's last step is not a transition (the step before it already leads to
      // its observation, the last finite one).
      if (dropped[static_cast<size_t>(i)]) continue;
      const bool ended = batch.terminated[static_cast<size_t>(i)] || batch.truncated[static_cast<size_t>(i)];
      const float* next = nullptr;
      if (ended) {
        const int32_t d = final_slot[static_cast<size_t>(i)];
        if (d < 0) throw std::invalid_argument("fragment step " + std::to_string(i) + " ended an episode without a final observation");
        next = batch.final_obs.data() + d * o;
      } else if (t + 1 < batch.num_steps) {
        next = batch.obs.data() + (i + k_envs) * o;
      } else {
        next = batch.bootstrap_obs.data() + k * o;
      }
      store(batch.obs.data() + i * o, batch.action_values.data() + i * action_size_, batch.rewards[static_cast<size_t>(i)],
            next, batch.terminated[static_cast<size_t>(i)] != 0);
    }
  }
  return batch.num_transitions() - static_cast<int64_t>(batch.dropped_index.size());
}

void ContinuousReplay::sample(int64_t batch_size, Rng& rng, ContinuousSample& out) const {
  if (batch_size < 1) throw std::invalid_argument("batch_size must be >= 1, got " + std::to_string(batch_size));
  if (size_ == 0) throw std::logic_error("sampling an empty replay buffer");
  const auto b = static_cast<size_t>(batch_size), o = static_cast<size_t>(obs_size_), a = static_cast<size_t>(action_size_);
  out.rows = batch_size;
  out.obs.resize(b * o);
  out.next_obs.resize(b * o);
  out.actions.resize(b * a);
  out.rewards.resize(b);
  out.terminated.resize(b);
  for (size_t r = 0; r < b; ++r) {
    const auto slot = static_cast<size_t>(rng.uniform_int(size_));
    std::copy_n(obs_.begin() + static_cast<std::ptrdiff_t>(slot * o), o, out.obs.begin() + static_cast<std::ptrdiff_t>(r * o));
    std::copy_n(next_obs_.begin() + static_cast<std::ptrdiff_t>(slot * o), o, out.next_obs.begin() + static_cast<std::ptrdiff_t>(r * o));
    std::copy_n(actions_.begin() + static_cast<std::ptrdiff_t>(slot * a), a, out.actions.begin() + static_cast<std::ptrdiff_t>(r * a));
    out.rewards[r] = rewards_[slot];
    out.terminated[r] = terminated_[slot];
  }
}

void ContinuousReplay::save(BinaryWriter& out) const {
  out.put<int64_t>(capacity_);
  out.put<int64_t>(obs_size_);
  out.put<int64_t>(action_size_);
  out.put<int64_t>(next_);
  out.put<int64_t>(size_);
  const auto n = static_cast<size_t>(size_), o = static_cast<size_t>(obs_size_), a = static_cast<size_t>(action_size_);
  out.put_vector(std::vector<float>(obs_.begin(), obs_.begin() + static_cast<std::ptrdiff_t>(n * o)));
  out.put_vector(std::vector<float>(next_obs_.begin(), next_obs_.begin() + static_cast<std::ptrdiff_t>(n * o)));
  out.put_vector(std::vector<float>(actions_.begin(), actions_.begin() + static_cast<std::ptrdiff_t>(n * a)));
  out.put_vector(std::vector<float>(rewards_.begin(), rewards_.begin() + static_cast<std::ptrdiff_t>(n)));
  out.put_vector(std::vector<float>(terminated_.begin(), terminated_.begin() + static_cast<std::ptrdiff_t>(n)));
}

void ContinuousReplay::load(BinaryReader& in) {
  const auto capacity = in.get<int64_t>(), obs_size = in.get<int64_t>(), action_size = in.get<int64_t>();
  if (capacity != capacity_ || obs_size != obs_size_ || action_size != action_size_) {
    throw std::invalid_argument("replay of capacity " + std::to_string(capacity) + ", obs size " + std::to_string(obs_size) +
                                ", action size " + std::to_string(action_size) + " for a buffer of " +
                                std::to_string(capacity_) + ", " + std::to_string(obs_size_) + ", " +
                                std::to_string(action_size_));
  }
  const auto next = in.get<int64_t>(), size = in.get<int64_t>();
  if (size < 0 || size > capacity_ || next < 0 || next >= capacity_ || (size < capacity_ && next != size)) {
    throw std::invalid_argument("replay ring position " + std::to_string(next) + " / size " + std::to_string(size) + " is inconsistent");
  }
  const auto n = static_cast<uint64_t>(size), o = static_cast<uint64_t>(obs_size_), a = static_cast<uint64_t>(action_size_);
  auto obs = in.get_vector<float>(n * o), next_obs = in.get_vector<float>(n * o), actions = in.get_vector<float>(n * a);
  auto rewards = in.get_vector<float>(n), terminated = in.get_vector<float>(n);
  if (obs.size() != n * o || next_obs.size() != n * o || actions.size() != n * a || rewards.size() != n || terminated.size() != n) {
    throw std::invalid_argument("replay columns do not hold " + std::to_string(size) + " transitions");
  }
  std::copy(obs.begin(), obs.end(), obs_.begin());
  std::copy(next_obs.begin(), next_obs.end(), next_obs_.begin());
  std::copy(actions.begin(), actions.end(), actions_.begin());
  std::copy(rewards.begin(), rewards.end(), rewards_.begin());
  std::copy(terminated.begin(), terminated.end(), terminated_.begin());
  next_ = next;
  size_ = size;
  inserted_ = static_cast<uint64_t>(size < capacity_ ? size : capacity_ + next);  // any count that fits the ring
}

}  // namespace rlx
