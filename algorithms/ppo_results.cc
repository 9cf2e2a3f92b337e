#include "algorithms/ppo_results.h"

namespace rlx {

nlohmann::json ppo_learner_columns(const PpoUpdateMetrics& m, uint64_t policy_version) {
  nlohmann::json columns = {{"policy_loss", m.policy_loss},
                             {"vf_loss", m.vf_loss},
                             {"entropy", m.entropy},
                             {"approx_kl", m.approx_kl},
                             {"clip_fraction", m.clip_fraction},
                             {"explained_variance", m.explained_variance},
                             {"lr", m.lr},
                             {"clip_param", m.clip_param},
                             {"grad_norm", m.grad_norm},
                             {"num_minibatch_steps", m.num_minibatch_steps},
                             {"policy_version", policy_version}};
  if (m.loss_scale > 0.0) {  // precision fp16 only
    columns["loss_scale"] = m.loss_scale;
    columns["skipped_steps"] = m.skipped_steps;
  }
  return columns;
}

}  // namespace rlx
