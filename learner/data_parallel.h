// Data-parallel seams from communicators: the PPO and DQN learners' hooks (gradient all-reduce,
// advantage moments, host statistics) bound to a Communicator for device tensors (Gloo on CPU,
// NCCL on CUDA) and one for host values (Gloo).
#pragma once

#include <memory>

#include "learner/communicator.h"
#include "learner/dqn_learner.h"
#include "learner/ppo_learner.h"

namespace rlx {

// Seconds spent in gradient all-reduces (for benchmarks), accumulated by the hooks.
struct AllreduceClock {
  double seconds = 0.0;
  int64_t calls = 0;
};

// Hooks of a PPO learner: gradients and advantage moments summed through device_comm, host
// statistics through host_comm. Both communicators must outlive the learner's updates; clock
// (optional) accumulates the gradient all-reduce time.
PpoDataParallelHooks make_ppo_hooks(Communicator& device_comm, Communicator& host_comm, AllreduceClock* clock = nullptr);

// Hooks of a DQN learner (rank and world size from device_comm).
DqnDataParallelHooks make_dqn_hooks(Communicator& device_comm, Communicator& host_comm, AllreduceClock* clock = nullptr);

// Rank 0's parameters, optimizer state and counters/statistics on every rank: broadcasts the
// learner's archive (save/load) and state_json, so every rank continues identically.
void broadcast_learner_state(Communicator& host_comm, PpoLearner& learner);
void broadcast_learner_state(Communicator& host_comm, DqnLearner& learner);

}  // namespace rlx
