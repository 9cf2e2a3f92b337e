// A recurrent model's data-parallel PPO update: which sequences the whole (global) batch holds.
// Each rank plans only its own fragments (whole env columns, so no sequence spans two ranks);
// from one all-reduce of a layout term every rank then lists the global batch's sequences alike,
// in the order plan_sequences gives the whole batch (fragment, env column, step), so every rank
// draws the permutation a single learner draws and trains on its own members of each minibatch.
#pragma once

#include <cstdint>
#include <vector>

#include "core/sample_batch.h"
#include "learner/ppo_learner.h"
#include "native/sequence_plan.h"

namespace rlx {

// The sequences of an update's global batch, and which this rank holds.
struct GlobalSequences {
  int64_t num_samples = 0;       // N over all ranks
  std::vector<int64_t> length;   // [G] steps of each sequence
  std::vector<int64_t> local;    // [G] its index in this rank's plan; -1 where another rank holds it
  int64_t num_sequences() const { return static_cast<int64_t>(length.size()); }
};

// A single learner's sequences: its plan's, every one local.
GlobalSequences single_rank_sequences(const SequencePlan& plan);

// This rank's term of the layout sum, [3, N] doubles (N = shard.global_samples): at each local
// fragment's first global row its whole fragment's T * stride, and its stride; at each local
// sequence's first global row its length. `plan` is plan_sequences of `batches`, and the shard
// places them (shard_local_rows has checked it).
std::vector<double> sequence_layout_term(const SequencePlan& plan, const std::vector<SampleBatch>& batches,
                                         const PpoShard& shard);

// The global sequences from the layout terms summed over ranks (the same on every rank); throws
// std::invalid_argument when the shards' fragments do not tile the global batch.
GlobalSequences global_sequences(const std::vector<double>& summed, const SequencePlan& plan,
                                 const std::vector<SampleBatch>& batches, const PpoShard& shard);

}  // namespace rlx
