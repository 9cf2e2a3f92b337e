#include "algorithms/policy_export.h"

#include <stdexcept>

#include "algorithms/algorithm.h"
#include "core/version.h"
#include "models/rollout_policy.h"

namespace rlx {

PolicyFile export_policy(const RestoredAlgorithm& restored) {
  const Algorithm& algorithm = *restored.algorithm;
  const std::unique_ptr<RolloutPolicy> policy = algorithm.evaluation_policy(/*deterministic=*/true, 0);
  PolicyFile file;
  file.model = policy->config();
  if (file.model.kind == ModelKind::kQNetwork) {
    // Stochastic acting explores as the algorithm's own sampling evaluation does.
    const std::unique_ptr<RolloutPolicy> sampling = algorithm.evaluation_policy(/*deterministic=*/false, 0);
    file.epsilon = static_cast<const EpsilonGreedyQPolicy&>(*sampling).epsilon();
  }
  file.parameters = policy->weights();
  if (policy->obs_normalizer().active()) {
    file.obs_mean = policy->obs_normalizer().mean();
    file.obs_var = policy->obs_normalizer().var();
    file.obs_count = policy->obs_normalizer().count();
  }
  file.algorithm = algorithm_name(restored.experiment.algorithm);
  file.env_id = restored.experiment.env;
  const nlohmann::json& counters = restored.checkpoint.manifest.at("counters");
  file.source = {{"checkpoint", restored.checkpoint.path.string()},
                 {"experiment", restored.experiment.name},
                 {"iteration", counters.at("training_iteration")},
                 {"timesteps", counters.at("timesteps_total")},
                 {"rlx_version", kRlxVersion}};
  return file;
}

}  // namespace rlx
