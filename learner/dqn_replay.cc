#include "learner/dqn_replay.h"

#include "learner/prioritized_replay.h"

namespace rlx {

namespace {

uint64_t mix64(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ULL;
  return x ^ (x >> 33);
}

}  // namespace

std::unique_ptr<ReplayBuffer> make_dqn_replay_buffer(const DqnConfig& config, StoredObsSize obs_size) {
  NStepConfig n_step{static_cast<int>(config.n_step), config.gamma, config.n_step_carry};
  if (!config.prioritized_replay) return std::make_unique<ReplayBuffer>(config.buffer_size, obs_size, n_step);
  return std::make_unique<PrioritizedReplayBuffer>(config.buffer_size, obs_size, n_step,
                                                   PrioritizedReplayConfig{config.prioritized_replay_alpha, config.per_eps});
}

uint64_t dqn_draw_seed(uint64_t seed, int rank, int64_t step) {
  // Rank 0 keeps the learner's seed, so one learner draws as rank 0 of a group of one.
  const uint64_t rank_seed = rank == 0 ? seed : mix64(seed ^ mix64(static_cast<uint64_t>(rank)));
  return mix64(rank_seed ^ mix64(static_cast<uint64_t>(step) + 0x9e3779b97f4a7c15ULL));
}

}  // namespace rlx
