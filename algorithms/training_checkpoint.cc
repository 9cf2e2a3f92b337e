#include "algorithms/training_checkpoint.h"

#include <cmath>

#include "core/non_finite_error.h"

namespace rlx {

std::optional<std::string> non_finite_weight(const Weights& weights) {
  for (size_t i = 0; i < weights.params.size(); ++i) {
    if (!std::isfinite(weights.params[i])) return "parameter " + std::to_string(i) + " = " + std::to_string(weights.params[i]);
  }
  for (size_t i = 0; i < weights.obs_mean.size(); ++i) {
    if (!std::isfinite(weights.obs_mean[i]) || !std::isfinite(weights.obs_var[i])) {
      return "observation statistic " + std::to_string(i) + " (mean " + std::to_string(weights.obs_mean[i]) + ", var " +
             std::to_string(weights.obs_var[i]) + ")";
    }
  }
  return std::nullopt;
}

void write_training_checkpoint(const std::filesystem::path& dir, const nlohmann::json& manifest,
                               const std::vector<CheckpointFile>& files, const std::optional<std::string>& non_finite,
                               const std::optional<std::filesystem::path>& last_good) {
  if (non_finite) {
    throw NonFiniteLearnerError("the learner's weights are not finite (" + *non_finite + "); " + dir.filename().string() +
                                " was not written; the last good checkpoint is " +
                                (last_good ? last_good->string() : std::string("none")));
  }
  write_checkpoint_dir(dir, manifest, files);
}

}  // namespace rlx
