// The DQN learner's replay: its buffer as DqnConfig describes it (uniform or prioritized, with
// n-step windows), and the seed of each gradient step's draws, so that the learner's counters
// are the whole of its RNG state.
#pragma once

#include <cstdint>
#include <memory>

#include "core/algorithm_config.h"
#include "learner/replay_buffer.h"

namespace rlx {

// A replay buffer of config.buffer_size transitions of observations of obs_size (floats and bytes): a
// PrioritizedReplayBuffer when config.prioritized_replay, else a uniform ReplayBuffer.
std::unique_ptr<ReplayBuffer> make_dqn_replay_buffer(const DqnConfig& config, StoredObsSize obs_size);

// Seed of gradient step `step`'s replay draws on data-parallel rank `rank` of a learner seeded
// with `seed` (a pure function: the same arguments give the same draws).
uint64_t dqn_draw_seed(uint64_t seed, int rank, int64_t step);

}  // namespace rlx
