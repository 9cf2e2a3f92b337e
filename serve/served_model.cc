#include "serve/served_model.h"

#include <algorithm>
#include <chrono>
#include <stdexcept>
#include <system_error>

#include "core/checkpoint_dir.h"
#include "core/file_read.h"
#include "core/sha256.h"

namespace fs = std::filesystem;

namespace rlx {

namespace {

ServedSpaces spaces_of(const Policy& policy) {
  ServedSpaces spaces;
  spaces.observation_space = policy.observation_space();
  spaces.action_space = policy.action_space();
  spaces.float_size = policy.float_size();
  spaces.byte_size = policy.byte_size();
  spaces.mask_size = policy.mask_size();
  spaces.action_size = policy.action_size();
  spaces.state_size = policy.state_size();
  spaces.discrete_actions = policy.discrete_actions();
  spaces.indexed_actions = policy.indexed_actions();
  return spaces;
}

// The median microseconds of 9 act() calls on an all-zero observation (every action legal).
double time_one_act(Policy& policy, const ServedSpaces& spaces) {
  const std::vector<float> floats(static_cast<size_t>(spaces.float_size), 0.0f);
  const std::vector<uint8_t> bytes(static_cast<size_t>(spaces.byte_size), 0);
  const std::vector<float> state(static_cast<size_t>(spaces.state_size), 0.0f);
  PolicyObservation row;
  row.floats = floats.data();
  row.float_count = floats.size();
  row.bytes = bytes.data();
  row.byte_count = bytes.size();
  std::vector<const std::vector<float>*> states;
  if (spaces.state_size > 0) states.push_back(&state);
  std::vector<double> micros;
  for (int i = 0; i < 9; ++i) {
    const auto start = std::chrono::steady_clock::now();
    policy.act_batch({row}, states, true);
    micros.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count());
  }
  std::nth_element(micros.begin(), micros.begin() + 4, micros.end());
  return micros[4];
}

}  // namespace

ModelSource classify_model_source(const fs::path& path) {
  std::error_code error;
  const fs::file_status status = fs::status(path, error);
  if (error || !fs::exists(status)) throw std::invalid_argument(path.string() + ": no such file or directory");
  if (fs::is_regular_file(status)) return {path, ModelSourceKind::kPolicyFile, ""};
  if (!fs::is_directory(status)) throw std::invalid_argument(path.string() + ": neither a policy file nor a directory");
  if (fs::exists(path / "checkpoint.json")) return {path, ModelSourceKind::kCheckpoint, ""};
  return {path, ModelSourceKind::kTrial, ""};
}

std::string default_model_name(const ModelSource& source) {
  const fs::path path = source.path.lexically_normal();
  const fs::path last = path.filename().empty() ? path.parent_path() : path;
  switch (source.kind) {
    case ModelSourceKind::kPolicyFile:
      return last.stem().string();
    case ModelSourceKind::kTrial:
      return last.filename() == "checkpoints" ? last.parent_path().filename().string() : last.filename().string();
    case ModelSourceKind::kCheckpoint: {
      const fs::path folder = last.parent_path();
      if (folder.filename() == "checkpoints" && !folder.parent_path().filename().empty()) {
        return folder.parent_path().filename().string();
      }
      return last.filename().string();
    }
  }
  return last.filename().string();
}

bool ServedSpaces::operator==(const ServedSpaces& other) const { return difference(other).empty(); }

std::string ServedSpaces::difference(const ServedSpaces& other) const {
  if (observation_space != other.observation_space) {
    return "observation space " + other.observation_space + " where the served version has " + observation_space;
  }
  if (action_space != other.action_space) return "action space " + other.action_space + " where the served version has " + action_space;
  if (mask_size != other.mask_size) return "an action mask of " + std::to_string(other.mask_size) + " bytes, not " + std::to_string(mask_size);
  if (state_size != other.state_size) {
    return "a recurrent state of " + std::to_string(other.state_size) + " floats where the served version has " +
           std::to_string(state_size);
  }
  return "";
}

ServedModel::ServedModel(const PolicyFile& file, fs::path origin, std::string fingerprint, uint64_t version, int threads,
                         uint64_t seed)
    : observation_space_(file.model.input_space()),
      action_space_(file.model.action_space),
      layout_(observation_layout(observation_space_)),
      version_(version),
      origin_(std::move(origin)),
      fingerprint_(std::move(fingerprint)),
      source_(file.source) {
  if (threads < 1) throw std::invalid_argument("ServedModel needs at least one inference thread");
  for (int t = 0; t < threads; ++t) {
    policies_.push_back(std::make_unique<Policy>(file, origin_.string(), seed + static_cast<uint64_t>(t)));
  }
  spaces_ = spaces_of(*policies_.front());
  act_micros_ = time_one_act(*policies_.front(), spaces_);
}

std::optional<fs::path> newest_model_origin(const ModelSource& source) {
  if (source.kind != ModelSourceKind::kTrial) return source.path;
  std::vector<SkippedCheckpoint> skipped;
  const std::optional<Checkpoint> newest = newest_valid_checkpoint(source.path, skipped);
  if (!newest) return std::nullopt;
  return newest->path;
}

std::shared_ptr<const ServedModel> load_served_model(const fs::path& origin, ModelSourceKind kind, const std::string& policy,
                                                     const CheckpointExporter& exporter, uint64_t version, int threads,
                                                     uint64_t seed) {
  if (kind == ModelSourceKind::kPolicyFile) {
    std::string bytes;
    try {
      bytes = read_file(origin);
    } catch (const std::system_error& error) {
      throw PolicyFileError(origin.string() + ": cannot read the policy file: " + file_error_reason(error));
    }
    const PolicyFile file = decode_policy_file(bytes, origin.string());
    return std::make_shared<const ServedModel>(file, origin, "sha256:" + sha256_hex(bytes).substr(0, 16), version, threads, seed);
  }
  if (!exporter) throw std::logic_error("load_served_model: a checkpoint needs an exporter");
  const PolicyFile file = exporter(origin, policy);
  return std::make_shared<const ServedModel>(file, origin, origin.filename().string(), version, threads, seed);
}

}  // namespace rlx
