#include "algorithms/training_checkpoint.h"

#include <cmath>

#include <fstream>
#include <set>

#include "core/non_finite_error.h"
#include "native/replay_segments.h"

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

size_t remove_unlisted_replay_segments(const std::filesystem::path& trial_dir) {
  std::set<std::string> listed;
  const std::filesystem::path checkpoints = trial_dir / "checkpoints";
  std::error_code error;
  if (std::filesystem::is_directory(checkpoints, error)) {
    for (const auto& entry : std::filesystem::directory_iterator(checkpoints)) {
      const std::filesystem::path manifest_path = entry.path() / kCheckpointManifestName;
      if (!std::filesystem::is_regular_file(manifest_path, error)) continue;
      std::ifstream in(manifest_path);
      const nlohmann::json manifest = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
      if (manifest.is_discarded()) return 0;  // cannot tell what it needs: keep every segment
      const auto replay = manifest.find("replay");
      if (replay == manifest.end()) continue;
      for (std::string& file : listed_segment_files(*replay)) listed.insert(std::move(file));
    }
  }
  return remove_unreferenced_segments(trial_dir / kReplayDirName, listed);
}

}  // namespace rlx
