// ReplayBuffer's checkpoint in segments: its slots as rows of transitions, and the rest of its state.
#include <algorithm>
#include <stdexcept>
#include <string>

#include "learner/prioritized_replay.h"
#include "learner/replay_buffer.h"

namespace rlx {

template <typename Buffer, typename FloatsFn, typename BytesFn>
void ReplayBuffer::for_each_block(Buffer& buffer, uint64_t first, uint64_t end, FloatsFn floats, BytesFn bytes) {
  const auto capacity = static_cast<uint64_t>(buffer.capacity_);
  const auto o = static_cast<size_t>(buffer.obs_.floats), b = static_cast<size_t>(buffer.obs_.bytes);
  while (first < end) {
    const auto slot = static_cast<size_t>(first % capacity);
    const auto count = static_cast<size_t>(std::min<uint64_t>(end - first, capacity - slot));
    floats(buffer.obs_floats_.data() + slot * o, count * o);
    floats(buffer.next_obs_floats_.data() + slot * o, count * o);
    bytes(buffer.actions_.data() + slot, count * sizeof(int64_t));
    floats(buffer.rewards_.data() + slot, count);
    floats(buffer.terminated_.data() + slot, count);
    floats(buffer.discounts_.data() + slot, count);
    if (b > 0) {
      bytes(buffer.obs_u8_.data() + slot * b, count * b);
      bytes(buffer.next_obs_u8_.data() + slot * b, count * b);
    }
    first += count;
  }
}

void ReplayBuffer::write_rows(uint64_t first, uint64_t end, SegmentWriter& out) const {
  const auto added = static_cast<uint64_t>(total_added_);
  if (first > end || end > added || first < added - static_cast<uint64_t>(size_)) {
    throw std::invalid_argument("replay transitions [" + std::to_string(first) + ", " + std::to_string(end) +
                                ") are not all held (it holds [" + std::to_string(added - static_cast<uint64_t>(size_)) +
                                ", " + std::to_string(added) + "))");
  }
  for_each_block(
      *this, first, end, [&](const float* block, size_t count) { out.write_floats(block, count); },
      [&](const void* block, size_t size) { out.write(block, size); });
}

void ReplayBuffer::reset_to(uint64_t total_added) {
  total_added_ = static_cast<int64_t>(total_added);
  next_ = static_cast<int64_t>(total_added % static_cast<uint64_t>(capacity_));
  size_ = static_cast<int64_t>(std::min<uint64_t>(total_added, static_cast<uint64_t>(capacity_)));
}

void ReplayBuffer::read_rows(uint64_t first, uint64_t end, SegmentReader& in) {
  if (first > end || end > static_cast<uint64_t>(total_added_)) {
    throw std::invalid_argument("replay transitions [" + std::to_string(first) + ", " + std::to_string(end) +
                                ") lie past the " + std::to_string(total_added_) + " stored");
  }
  for_each_block(
      *this, first, end, [&](float* block, size_t count) { in.read_floats(block, count); },
      [&](void* block, size_t size) { in.read(block, size); });
}

void ReplayBuffer::save_rest(BinaryWriter& out) const { n_step_.save(out); }

void ReplayBuffer::load_rest(BinaryReader& in) {
  NStepAccumulator n_step(obs_, n_step_.config());
  n_step.load(in);
  n_step_ = std::move(n_step);
}

}  // namespace rlx
