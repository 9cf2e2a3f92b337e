// Evaluation of a multi-agent checkpoint: N episodes of its env, every agent acting with the
// policy the checkpoint's mapping gives it, with the returns per agent and per policy.
#pragma once

#include "algorithms/evaluation.h"
#include "algorithms/multi_agent_algorithm.h"

namespace rlx {

// Runs options.episodes episodes of the restored run's env (one env, seeded with options.seed,
// the mapping's draws too) with each policy's evaluation policy; the result's returns are summed
// over the agents. Throws ConfigError for what only single-agent checkpoints take (--env,
// --record, --trace).
EvaluationResult evaluate_multi_agent(const RestoredAlgorithm& restored, const MultiAgentAlgorithm& algorithm,
                                      const EvaluationOptions& options);

}  // namespace rlx
