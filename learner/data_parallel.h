// Data-parallel seams from communicators: the PPO and DQN learners' hooks (gradient all-reduce,
// advantage moments, host statistics) bound to a Communicator for device tensors (Gloo on CPU,
// NCCL on CUDA) and one for host values (Gloo).
#pragma once

#include <memory>
#include <string>

#include "learner/communicator.h"
#include "learner/dqn_learner.h"
#include "learner/ppo_learner.h"

namespace rlx {

// Seconds spent in gradient all-reduces (for benchmarks), accumulated by the hooks.
struct AllreduceClock {
  double seconds = 0.0;
  int64_t calls = 0;
};

// A straggler for experiments (debug_slow_rank, debug_slow_factor): the rank that holds number
// `rank` waits (factor - 1) times its compute time before each gradient all-reduce, its compute
// time being the time since its previous collective of the update returned.
struct Straggler {
  int rank = -1;  // -1: none
  double factor = 1.0;
};

// Hooks of a PPO learner: gradients and advantage moments summed through device_comm, host
// statistics through host_comm. Both communicators must outlive the learner's updates; clock
// (optional) accumulates the gradient all-reduce time.
PpoDataParallelHooks make_ppo_hooks(Communicator& device_comm, Communicator& host_comm, AllreduceClock* clock = nullptr,
                                    Straggler straggler = {});

// Hooks of a DQN learner (rank and world size from device_comm).
DqnDataParallelHooks make_dqn_hooks(Communicator& device_comm, Communicator& host_comm, AllreduceClock* clock = nullptr);

// Rank 0's parameters, optimizer state and counters/statistics on every rank: broadcasts the
// learner's archive (save/load) and state_json, so every rank continues identically.
void broadcast_learner_state(Communicator& host_comm, PpoLearner& learner);
void broadcast_learner_state(Communicator& host_comm, DqnLearner& learner);

// A learner's whole state (its archive and state_json) taken now, to put back later: the driver
// of an elastic group rolls its learner back when a generation fails in the middle of an update.
class LearnerRollback {
 public:
  explicit LearnerRollback(const PpoLearner& learner);
  // The learner as it was when this was taken.
  void restore(PpoLearner& learner) const;

 private:
  std::string archive_;
  std::string state_;
};

}  // namespace rlx
