// How a data-parallel driver shares fragments among learner ranks, and how fragments travel
// between ranks (the ZeroMQ wire format's frames, packed into one byte string, so a received
// fragment is validated exactly like one from a worker).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/sample_batch.h"

namespace rlx {

// Splits a fragment's K envs into `parts` fragments of consecutive env columns (sizes differ by
// at most one); each is a valid fragment of the same T, with every column (observation bytes and
// action masks, all D indices of an action) carried. Throws std::invalid_argument unless
// 1 <= parts <= K.
std::vector<SampleBatch> split_fragment_by_envs(const SampleBatch& batch, int parts);

// A batch as at least `world` fragments, each with where its samples lie in the original
// batch's order (fragments concatenated, t-major): sample (t, k) of fragment i is at
// offsets[i] + t * strides[i] + k.
struct ShardedBatch {
  std::vector<SampleBatch> fragments;
  std::vector<int64_t> offsets;
  std::vector<int64_t> strides;
  int64_t total = 0;
};

// Splits the widest fragments by envs until there are at least `world`, keeping the order.
// Throws std::invalid_argument when the fragments hold fewer env columns than ranks.
ShardedBatch shard_batch(std::vector<SampleBatch> batches, int world);

// Rank of each fragment: consecutive runs with about equal transitions per rank, every rank
// at least one fragment (needs batches.size() >= world).
std::vector<int> assign_fragments(const std::vector<SampleBatch>& batches, int world);

// The fragment as bytes (wire frames); throws std::invalid_argument on an invalid fragment.
std::string pack_fragment(const SampleBatch& batch);
// The fragment back; throws std::runtime_error naming the decoder's reason on bad bytes.
SampleBatch unpack_fragment(const std::string& bytes);

}  // namespace rlx
