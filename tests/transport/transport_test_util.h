// Helpers shared by the transport tests: sample messages, deep frame copies, header patching.
#pragma once

#include <cstring>
#include <memory>
#include <vector>

#include <catch2/catch.hpp>
#include <zmq.hpp>

#include "transport/messages.h"
#include "transport/wire_format.h"

namespace rlx::test {

// A T x K fragment with recognisable values; discrete or Box (A = 2) actions.
inline std::shared_ptr<SampleBatch> make_batch(int32_t steps, int32_t envs, int64_t obs_size, bool discrete,
                                               bool with_policy_outputs = true) {
  auto batch = std::make_shared<SampleBatch>();
  batch->worker_id = 17;
  batch->policy_version = 42;
  batch->resize(steps, envs, obs_size, discrete ? 0 : 2, with_policy_outputs);
  for (size_t i = 0; i < batch->obs.size(); ++i) batch->obs[i] = 0.25f * static_cast<float>(i);
  for (size_t i = 0; i < batch->action_indices.size(); ++i) batch->action_indices[i] = static_cast<int64_t>(i % 3);
  for (size_t i = 0; i < batch->action_values.size(); ++i) batch->action_values[i] = -1.5f + static_cast<float>(i);
  for (size_t i = 0; i < batch->rewards.size(); ++i) batch->rewards[i] = static_cast<float>(i) * 0.5f;
  for (size_t i = 0; i < batch->log_probs.size(); ++i) batch->log_probs[i] = -0.1f * static_cast<float>(i);
  for (size_t i = 0; i < batch->values.size(); ++i) batch->values[i] = 2.0f * static_cast<float>(i);
  for (size_t i = 0; i < batch->bootstrap_obs.size(); ++i) batch->bootstrap_obs[i] = 100.f + static_cast<float>(i);
  const int32_t n = steps * envs;
  if (n > 1) {
    batch->terminated[1] = 1;
    batch->truncated[static_cast<size_t>(n - 1)] = 1;
    batch->final_obs_index = {1, n - 1};
    batch->final_obs.resize(2 * static_cast<size_t>(obs_size));
    for (size_t i = 0; i < batch->final_obs.size(); ++i) batch->final_obs[i] = -7.f - static_cast<float>(i);
  }
  return batch;
}

inline void require_same_batch(const SampleBatch& a, const SampleBatch& b) {
  REQUIRE(a.worker_id == b.worker_id);
  REQUIRE(a.policy_version == b.policy_version);
  REQUIRE(a.num_steps == b.num_steps);
  REQUIRE(a.num_envs == b.num_envs);
  REQUIRE(a.obs_size == b.obs_size);
  REQUIRE(a.action_size == b.action_size);
  REQUIRE(a.obs == b.obs);
  REQUIRE(a.action_indices == b.action_indices);
  REQUIRE(a.action_values == b.action_values);
  REQUIRE(a.rewards == b.rewards);
  REQUIRE(a.terminated == b.terminated);
  REQUIRE(a.truncated == b.truncated);
  REQUIRE(a.log_probs == b.log_probs);
  REQUIRE(a.values == b.values);
  REQUIRE(a.bootstrap_obs == b.bootstrap_obs);
  REQUIRE(a.final_obs_index == b.final_obs_index);
  REQUIRE(a.dropped_index == b.dropped_index);
  REQUIRE(a.final_obs == b.final_obs);
}

// Copies every frame's bytes (zmq::message_t::copy would share zero-copy content).
inline std::vector<zmq::message_t> deep_copy(const std::vector<zmq::message_t>& frames) {
  std::vector<zmq::message_t> out;
  for (const zmq::message_t& frame : frames) out.emplace_back(frame.data(), frame.size());
  return out;
}

// Applies edit to the header in frame 0 of a deep copy.
template <typename Edit>
std::vector<zmq::message_t> with_header(const std::vector<zmq::message_t>& frames, Edit edit) {
  std::vector<zmq::message_t> out = deep_copy(frames);
  WireHeader header;
  std::memcpy(&header, out[0].data(), sizeof header);
  edit(header);
  std::memcpy(out[0].data(), &header, sizeof header);
  return out;
}

// Applies edit to column descriptor `index` in frame 0 of a deep copy.
template <typename Edit>
std::vector<zmq::message_t> with_descriptor(const std::vector<zmq::message_t>& frames, size_t index, Edit edit) {
  std::vector<zmq::message_t> out = deep_copy(frames);
  auto* at = static_cast<unsigned char*>(out[0].data()) + sizeof(WireHeader) + index * sizeof(ColumnDescriptor);
  ColumnDescriptor d;
  std::memcpy(&d, at, sizeof d);
  edit(d);
  std::memcpy(at, &d, sizeof d);
  return out;
}

// Index of the descriptor of column id in an encoded message's header frame.
inline size_t descriptor_index(const std::vector<zmq::message_t>& frames, ColumnId id) {
  const size_t n = (frames[0].size() - sizeof(WireHeader)) / sizeof(ColumnDescriptor);
  for (size_t i = 0; i < n; ++i) {
    ColumnDescriptor d;
    std::memcpy(&d, static_cast<const unsigned char*>(frames[0].data()) + sizeof(WireHeader) + i * sizeof d, sizeof d);
    if (d.column == static_cast<uint16_t>(id)) return i;
  }
  FAIL("column not in message");
  return 0;
}

}  // namespace rlx::test
