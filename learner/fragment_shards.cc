#include "learner/fragment_shards.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <stdexcept>

#include "transport/decode.h"
#include "transport/encode.h"

namespace rlx {

std::vector<SampleBatch> split_fragment_by_envs(const SampleBatch& batch, int parts) {
  batch.validate();
  const int k = batch.num_envs;
  if (parts < 1 || parts > k) {
    throw std::invalid_argument("cannot split a fragment of " + std::to_string(k) + " envs into " + std::to_string(parts) + " parts");
  }
  const auto o = static_cast<size_t>(batch.obs_size);
  const auto a = static_cast<size_t>(batch.action_size);
  const auto bytes = static_cast<size_t>(batch.obs_byte_size);  // uint8 leaves and the action mask
  const auto d = static_cast<size_t>(batch.action_components);
  const int t = batch.num_steps;
  std::vector<SampleBatch> out;
  int first = 0;
  for (int p = 0; p < parts; ++p) {
    const int width = k / parts + (p < k % parts ? 1 : 0);
    SampleBatch part;
    part.worker_id = batch.worker_id;
    part.policy_version = batch.policy_version;
    part.state_size = batch.state_size;
    part.resize(t, width, batch.obs_size, batch.action_size, !batch.log_probs.empty(), batch.obs_byte_size,
                batch.action_components);
    if (batch.values.empty()) part.values.clear();
    if (batch.log_probs.empty()) part.values.resize(batch.values.empty() ? 0 : part.rewards.size());
    for (int step = 0; step < t; ++step) {
      for (int e = 0; e < width; ++e) {
        const size_t src = static_cast<size_t>(step) * k + first + e;
        const size_t dst = static_cast<size_t>(step) * width + e;
        std::memcpy(part.obs.data() + dst * o, batch.obs.data() + src * o, o * sizeof(float));
        std::memcpy(part.obs_u8.data() + dst * bytes, batch.obs_u8.data() + src * bytes, bytes);
        if (batch.discrete()) {
          std::memcpy(&part.action_indices[dst * d], &batch.action_indices[src * d], d * sizeof(int64_t));
        } else {
          std::memcpy(&part.action_values[dst * a], &batch.action_values[src * a], a * sizeof(float));
        }
        part.rewards[dst] = batch.rewards[src];
        part.terminated[dst] = batch.terminated[src];
        part.truncated[dst] = batch.truncated[src];
        if (!batch.log_probs.empty()) part.log_probs[dst] = batch.log_probs[src];
        if (!batch.values.empty()) part.values[dst] = batch.values[src];
      }
    }
    std::memcpy(part.bootstrap_obs.data(), batch.bootstrap_obs.data() + static_cast<size_t>(first) * o, static_cast<size_t>(width) * o * sizeof(float));
    const auto state = static_cast<size_t>(batch.state_size);
    std::copy_n(batch.initial_states.begin() + static_cast<std::ptrdiff_t>(static_cast<size_t>(first) * state),
                static_cast<size_t>(width) * state, part.initial_states.begin());
    std::memcpy(part.bootstrap_obs_u8.data(), batch.bootstrap_obs_u8.data() + static_cast<size_t>(first) * bytes,
                static_cast<size_t>(width) * bytes);
    for (size_t j = 0; j < batch.final_obs_index.size(); ++j) {
      const int32_t index = batch.final_obs_index[j];
      const int env = index % k;
      if (env < first || env >= first + width) continue;
      part.final_obs_index.push_back((index / k) * width + (env - first));
      part.final_obs.insert(part.final_obs.end(), batch.final_obs.begin() + static_cast<std::ptrdiff_t>(j * o),
                            batch.final_obs.begin() + static_cast<std::ptrdiff_t>((j + 1) * o));
      part.final_obs_u8.insert(part.final_obs_u8.end(), batch.final_obs_u8.begin() + static_cast<std::ptrdiff_t>(j * bytes),
                               batch.final_obs_u8.begin() + static_cast<std::ptrdiff_t>((j + 1) * bytes));
    }
    for (const int32_t index : batch.dropped_index) {
      const int env = index % k;
      if (env >= first && env < first + width) part.dropped_index.push_back((index / k) * width + (env - first));
    }
    part.validate();
    out.push_back(std::move(part));
    first += width;
  }
  return out;
}

ShardedBatch shard_batch(std::vector<SampleBatch> batches, int world) {
  int64_t columns = 0;
  for (const SampleBatch& b : batches) columns += b.num_envs;
  if (columns < world) {
    throw std::invalid_argument("the train batch's fragments hold " + std::to_string(columns) + " env columns, fewer than the " +
                                std::to_string(world) + " learners (raise num_envs_per_worker or train_batch_size)");
  }
  ShardedBatch out;
  for (const SampleBatch& b : batches) {
    out.offsets.push_back(out.total);
    out.strides.push_back(b.num_envs);
    out.total += b.num_transitions();
  }
  out.fragments = std::move(batches);
  while (static_cast<int>(out.fragments.size()) < world) {
    size_t widest = 0;
    for (size_t i = 1; i < out.fragments.size(); ++i) {
      if (out.fragments[i].num_envs > out.fragments[widest].num_envs) widest = i;
    }
    const int parts = std::min<int>(out.fragments[widest].num_envs, world - static_cast<int>(out.fragments.size()) + 1);
    std::vector<SampleBatch> split = split_fragment_by_envs(out.fragments[widest], parts);
    std::vector<int64_t> offsets, strides;
    int64_t first = 0;
    for (const SampleBatch& part : split) {
      offsets.push_back(out.offsets[widest] + first);
      strides.push_back(out.strides[widest]);
      first += part.num_envs;
    }
    const auto at = static_cast<std::ptrdiff_t>(widest);
    out.fragments.erase(out.fragments.begin() + at);
    out.fragments.insert(out.fragments.begin() + at, std::make_move_iterator(split.begin()), std::make_move_iterator(split.end()));
    out.offsets.erase(out.offsets.begin() + at);
    out.offsets.insert(out.offsets.begin() + at, offsets.begin(), offsets.end());
    out.strides.erase(out.strides.begin() + at);
    out.strides.insert(out.strides.begin() + at, strides.begin(), strides.end());
  }
  return out;
}

std::vector<int> assign_fragments(const std::vector<SampleBatch>& batches, int world) {
  const auto f = static_cast<int>(batches.size());
  if (world < 1 || f < world) throw std::invalid_argument("assign_fragments needs at least one fragment per rank");
  int64_t total = 0;
  for (const SampleBatch& b : batches) total += b.num_transitions();
  std::vector<int> owner(static_cast<size_t>(f));
  int64_t before = 0;
  int prev = 0;
  for (int i = 0; i < f; ++i) {
    int r = static_cast<int>(std::min<int64_t>(before * world / std::max<int64_t>(total, 1), world - 1));
    r = std::max(r, world - (f - i));       // the rest must still reach every later rank
    r = std::min(r, i == 0 ? 0 : prev + 1);  // no rank skipped
    r = std::max(r, prev);
    owner[static_cast<size_t>(i)] = prev = r;
    before += batches[static_cast<size_t>(i)].num_transitions();
  }
  return owner;
}

std::string pack_fragment(const SampleBatch& batch) {
  const std::vector<zmq::message_t> frames = encode_sample_fragment(std::make_shared<const SampleBatch>(batch), 0);
  std::string out;
  const uint64_t count = frames.size();
  out.append(reinterpret_cast<const char*>(&count), sizeof(count));
  for (const zmq::message_t& frame : frames) {
    const uint64_t size = frame.size();
    out.append(reinterpret_cast<const char*>(&size), sizeof(size));
    out.append(static_cast<const char*>(frame.data()), frame.size());
  }
  return out;
}

SampleBatch unpack_fragment(const std::string& bytes) {
  size_t pos = 0;
  auto read_u64 = [&](uint64_t& value) {
    if (bytes.size() - pos < sizeof(value)) throw std::runtime_error("packed fragment is truncated");
    std::memcpy(&value, bytes.data() + pos, sizeof(value));
    pos += sizeof(value);
  };
  uint64_t count = 0;
  read_u64(count);
  if (count > kMaxColumns + 1) throw std::runtime_error("packed fragment has too many frames");
  std::vector<zmq::message_t> frames;
  for (uint64_t i = 0; i < count; ++i) {
    uint64_t size = 0;
    read_u64(size);
    if (bytes.size() - pos < size) throw std::runtime_error("packed fragment is truncated");
    frames.emplace_back(bytes.data() + pos, size);
    pos += size;
  }
  DecodeResult result = decode_message(frames);
  if (!result.ok()) throw std::runtime_error("packed fragment rejected: " + result.detail);
  SampleBatch* batch = std::get_if<SampleBatch>(&*result.message);
  if (batch == nullptr) throw std::runtime_error("packed bytes hold another message than a fragment");
  return std::move(*batch);
}

}  // namespace rlx
