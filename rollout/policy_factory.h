// The rollout policy a WorkerSetup asks for, and loading shipped Weights into one; shared by
// rollout workers and the learner's in-process sampler.
#pragma once

#include <memory>

#include "models/rollout_policy.h"
#include "rollout/worker_setup.h"
#include "transport/messages.h"

namespace rlx {

// An ActorCriticPolicy or EpsilonGreedyQPolicy for an env with this spec, seeded with the
// setup's worker seed; throws std::invalid_argument on a bad network config.
std::unique_ptr<RolloutPolicy> make_rollout_policy(const WorkerSetup& setup, const EnvSpec& spec);

// Loads the flat weights, the observation normaliser (when shipped) and, for epsilon-greedy
// policies, the exploration rate; throws std::invalid_argument on a size mismatch.
void apply_weights(RolloutPolicy& policy, const Weights& weights);

}  // namespace rlx
