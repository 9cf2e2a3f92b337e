#include "algorithms/make_algorithm.h"

#include "algorithms/appo_algorithm.h"
#include "algorithms/data_parallel_link.h"
#include "algorithms/dqn_algorithm.h"
#include "algorithms/multi_agent_algorithm.h"
#include "algorithms/native_algorithms.h"
#include "algorithms/ppo_algorithm.h"
#include "core/error_text.h"
#include "core/log.h"
#include "envs/experiment_envs.h"
#include "learner/policy_networks.h"

namespace rlx {

std::unique_ptr<Algorithm> make_algorithm(const Experiment& experiment, const DataParallelOptions& options) {
  if (is_multi_agent_experiment(experiment)) {
    if (uses_native_learner(experiment)) return make_native_algorithm(experiment, options);
    DataParallelOptions shared = options;
    if (options.member == nullptr && experiment.config.common().num_learners > 1) {
      shared.shared_link = std::make_shared<DataParallelLink>(experiment, options);  // one group for every policy
    }
    return std::make_unique<MultiAgentAlgorithm>(experiment, shared, make_algorithm);
  }
  if (uses_native_learner(experiment)) return make_native_algorithm(experiment, options);
  // Small networks: LibTorch's intra-op threads only add overhead (and nondeterminism).
  set_inference_threads(1);
  switch (experiment.algorithm) {
    case AlgorithmKind::kPPO: return std::make_unique<PpoAlgorithm>(experiment, options);
    case AlgorithmKind::kAPPO: return std::make_unique<AppoAlgorithm>(experiment, options);
    case AlgorithmKind::kDQN: return std::make_unique<DqnAlgorithm>(experiment, options);
    case AlgorithmKind::kSAC: break;  // native only: uses_native_learner is always true for it
  }
  throw std::logic_error("make_algorithm: an algorithm kind without an algorithm");
}

void run_learner_rank(LearnerGroupMember& member) {
  const Experiment experiment = experiment_from_json(nlohmann::json::parse(member.payload()), "the learner group's payload");
  set_inference_threads(1);
  load_experiment_envs(experiment);
  DataParallelOptions options;
  options.member = &member;
  std::unique_ptr<Algorithm> algorithm = make_algorithm(experiment, options);
  DataParallelLink link(experiment, options);
  logger().info("following the driver's commands ({} of {} on {})", algorithm_name(experiment.algorithm),
                experiment.env, link.device().str());
  for (;;) {
    try {
      LearnerCommand command = link.receive();
      logger().debug("{} command with {} fragments", rank_command_name(command.command), command.fragments.size());
      if (std::holds_alternative<StopRank>(command.command)) {
        logger().info("the driver said stop");
        return;
      }
      if (const auto* regroup = std::get_if<RegroupCommand>(&command.command)) {
        if (!member.follow_regroup(regroup->generation)) return;
        continue;
      }
      algorithm->follow(command);
    } catch (const CommunicatorError& e) {
      if (!member.elastic()) throw;
      // The generation failed (a rank was lost, or rank 0 re-forms the group): wait for the next.
      logger().warn("learner group generation {} failed here: {}; waiting for the next", member.generation(), error_text(e));
      if (!join_until_formed(member)) {
        logger().info("the run finished while this rank waited to rejoin");
        return;
      }
    }
  }
}

}  // namespace rlx
