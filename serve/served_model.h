// One loaded version of a served policy, and where a served policy's versions come from: a
// `.rlxp` file, a checkpoint directory, or a trial directory (its newest checkpoint that verifies).
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/observation_layout.h"
#include "models/policy.h"
#include "models/policy_file.h"

namespace rlx {

// Turns a verified checkpoint directory into the policy file `rlx export` would write (the CLI's
// restore-and-export; serve/ itself needs no learner): of a multi-agent checkpoint, the policy
// named (`rlx export --policy`), else "". Throws on a checkpoint it refuses.
using CheckpointExporter = std::function<PolicyFile(const std::filesystem::path& checkpoint, const std::string& policy)>;

// What a MODEL argument of `rlx serve` names.
enum class ModelSourceKind { kPolicyFile, kCheckpoint, kTrial };

struct ModelSource {
  std::filesystem::path path;  // as given
  ModelSourceKind kind = ModelSourceKind::kPolicyFile;
  std::string policy;          // a multi-agent checkpoint's policy ("PATH#POLICY"); "" otherwise
};

// The kind of `path`: a regular file is a policy file, a directory with checkpoint.json a
// checkpoint, any other directory a trial (or its checkpoints/ folder). Throws
// std::invalid_argument naming the path when it does not exist.
ModelSource classify_model_source(const std::filesystem::path& path);

// The policy's name when the argument gives none: a file's stem, a trial's directory name, a
// checkpoint's trial's name (runs/x/TRIAL/checkpoints/checkpoint_000010 -> TRIAL).
std::string default_model_name(const ModelSource& source);

// The spaces and sizes a client needs; two versions may swap only when these are equal.
struct ServedSpaces {
  std::string observation_space, action_space;
  int64_t float_size = 0, byte_size = 0, mask_size = 0, action_size = 0, state_size = 0;
  bool discrete_actions = false, indexed_actions = false;

  bool operator==(const ServedSpaces& other) const;
  bool operator!=(const ServedSpaces& other) const { return !(*this == other); }
  // "observation space Box(...) vs Box(...)": the first difference, for a refused reload.
  std::string difference(const ServedSpaces& other) const;
};

// One version of a served policy, immutable once loaded; one rlx::Policy per inference thread.
class ServedModel {
 public:
  // Builds `threads` policies from the decoded file. `origin` is what was loaded (the file or
  // the checkpoint directory), `fingerprint` its identity (a checkpoint's name, a file's SHA-256).
  ServedModel(const PolicyFile& file, std::filesystem::path origin, std::string fingerprint, uint64_t version, int threads,
              uint64_t seed);

  // The policy inference thread `thread` acts with (only that thread may use it).
  Policy& policy(int thread) const { return *policies_.at(static_cast<size_t>(thread)); }
  const ServedSpaces& spaces() const { return spaces_; }
  // The observation space as the env gives observations, and the action space.
  const Space& observation_space() const { return observation_space_; }
  const Space& action_space() const { return action_space_; }
  // Where each leaf of an observation is stored (core/observation_layout.h), without the mask.
  const ObservationLayout& layout() const { return layout_; }
  uint64_t version() const { return version_; }
  const std::filesystem::path& origin() const { return origin_; }
  const std::string& fingerprint() const { return fingerprint_; }
  // The file's source (algorithm, env, checkpoint, iteration, timesteps).
  const nlohmann::json& source() const { return source_; }
  // Microseconds one observation's act() took when the version was loaded (the median of 9).
  double act_micros() const { return act_micros_; }

 private:
  std::vector<std::unique_ptr<Policy>> policies_;
  ServedSpaces spaces_;
  Space observation_space_, action_space_;
  ObservationLayout layout_;
  uint64_t version_;
  std::filesystem::path origin_;
  std::string fingerprint_;
  nlohmann::json source_;
  double act_micros_ = 0;
};

// What a source's newest loadable version is: the policy file itself, the checkpoint itself, or
// a trial's newest checkpoint that verifies (nullopt when the trial has none yet).
std::optional<std::filesystem::path> newest_model_origin(const ModelSource& source);

// Loads and verifies one origin (a policy file's magic and CRC, a checkpoint's checksums through
// `exporter`) as version `version`; throws PolicyFileError, CheckpointRefused or std::exception
// with the reason when it cannot serve.
std::shared_ptr<const ServedModel> load_served_model(const std::filesystem::path& origin, ModelSourceKind kind,
                                                     const std::string& policy, const CheckpointExporter& exporter,
                                                     uint64_t version, int threads, uint64_t seed);

}  // namespace rlx
