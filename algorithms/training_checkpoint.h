// The checkpoints a training run writes: never of non-finite weights.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/checkpoint_dir.h"
#include "transport/messages.h"

namespace rlx {

// The first non-finite value of the weights workers get (parameters, then observation
// statistics), e.g. "parameter 17 = nan"; nullopt when all are finite.
std::optional<std::string> non_finite_weight(const Weights& weights);

// Writes checkpoint `dir` (write_checkpoint_dir) unless the weights hold a non-finite value
// (`non_finite`, as Algorithm::non_finite_weights names it): then throws NonFiniteLearnerError
// naming the value and `last_good` (the run's last checkpoint) and writes nothing.
void write_training_checkpoint(const std::filesystem::path& dir, const nlohmann::json& manifest,
                               const std::vector<CheckpointFile>& files, const std::optional<std::string>& non_finite,
                               const std::optional<std::filesystem::path>& last_good);

// Deletes the replay segments in TRIAL/replay/ that no checkpoint in TRIAL/checkpoints/ lists
// (a segment goes with the last checkpoint that needs it); keeps them all when some
// checkpoint.json cannot be read. Returns how many it deleted.
size_t remove_unlisted_replay_segments(const std::filesystem::path& trial_dir);

}  // namespace rlx
