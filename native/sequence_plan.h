// How a recurrent model's PPO update sees its fragments (native/ppo_fragments.h's rows): as
// streams, one per fragment and env, which the learner runs from the state the worker shipped
// (SampleBatch::initial_states) to recompute every step's state, value and log-prob; and as
// sequences, the pieces of the streams it trains on: cut at every episode start and then into
// pieces of at most max_seq_len steps, so a sequence never crosses an episode start. Each
// sequence starts from the shipped state (at a fragment's first step), zeros (at an episode's
// start) or the recomputed state before its first step. Torch-free; the LibTorch learner runs it.
#pragma once

#include <cstdint>
#include <vector>

#include "core/sample_batch.h"

namespace rlx {

struct SequencePlan {
  int64_t state_size = 0;   // S
  int64_t num_samples = 0;  // N: every fragment's T * K sample rows
  int64_t num_extra = 0;    // E: the extra rows (final observations at truncations, bootstrap observations)

  // Streams, in fragment order and env order within one; every stream padded to max_steps.
  int64_t num_streams = 0;
  int64_t max_steps = 0;
  std::vector<int64_t> stream_rows;    // [streams, max_steps] sample row of each step; -1 past the stream's end
  std::vector<float> stream_resets;    // [streams, max_steps] 1 where an episode starts at a step t > 0
  std::vector<float> initial_states;   // [streams, S] the states shipped with the fragments

  // Sequences, in stream order and step order within one.
  std::vector<int64_t> sequence_stream;  // its stream
  std::vector<int64_t> sequence_start;   // its first step in the stream
  std::vector<int64_t> sequence_length;  // its steps, 1 .. max_seq_len
  int64_t num_sequences() const { return static_cast<int64_t>(sequence_stream.size()); }

  // Extra rows in native/ppo_fragments.h's order: the stream step after which its state is taken
  // (stream * max_steps + t), and 0 where that state is zeroed (a bootstrap observation that
  // starts a new episode), else 1.
  std::vector<int64_t> extra_after_step;
  std::vector<float> extra_keep;
};

// The plan of the fragments (each validated, all of one state size S > 0); throws
// std::invalid_argument naming the fragment whose state size differs or max_seq_len < 1.
SequencePlan plan_sequences(const std::vector<SampleBatch>& batches, int64_t max_seq_len);

// Where sequence s starts from: -1 for the shipped state of its stream, -2 for zeros, else the
// stream step (stream * max_steps + t) after which the recomputed state is taken.
int64_t sequence_state_source(const SequencePlan& plan, int64_t s);

// The sample rows of sequences[0 .. count) one after another (sequence lengths in order).
std::vector<int64_t> sequence_sample_rows(const SequencePlan& plan, const int64_t* sequences, int64_t count);

// How many sequences make one minibatch of about minibatch_size samples: the same number of
// minibatches per epoch as a memoryless model's (at least one sequence each).
int64_t sequences_per_minibatch(const SequencePlan& plan, int64_t minibatch_size);
// The same for num_sequences sequences of num_samples samples in all (a data-parallel update's global batch).
int64_t sequences_per_minibatch(int64_t num_samples, int64_t num_sequences, int64_t minibatch_size);

}  // namespace rlx
