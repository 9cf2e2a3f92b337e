// Checkpoint directories (torch-free): checkpoint.json (format version, time, SHA-256 and size
// of every file, plus the caller's manifest) and opaque files, published atomically and
// verified on load.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace rlx {

constexpr int kCheckpointFormatVersion = 1;
constexpr const char* kCheckpointManifestName = "checkpoint.json";

// A checkpoint that cannot be written or is refused on load; the message names the path and the problem.
class CheckpointError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// One file of a checkpoint: a plain name (no '/', not hidden, not checkpoint.json) and its bytes.
struct CheckpointFile {
  std::string name;
  std::string bytes;
};

// A verified checkpoint: the whole checkpoint.json and every listed file's bytes by name.
struct Checkpoint {
  std::filesystem::path path;
  nlohmann::json manifest;
  std::map<std::string, std::string> files;
};

// Writes `dir` atomically (built beside it, then renamed; an existing `dir` is replaced) with
// `files` and checkpoint.json = manifest + {format_version, created_at, files: {name: {sha256, size}}}.
// `manifest` must be a JSON object (or null for none) without those three keys (std::invalid_argument otherwise,
// also for a bad or repeated file name); CheckpointError on an I/O failure.
void write_checkpoint_dir(const std::filesystem::path& dir, const nlohmann::json& manifest,
                          const std::vector<CheckpointFile>& files);

// Reads and verifies a checkpoint: format version, every listed file present with its size
// and SHA-256. CheckpointError naming the path and the problem otherwise.
Checkpoint read_checkpoint_dir(const std::filesystem::path& dir);

// "checkpoint_000010" for iteration 10.
std::string checkpoint_dir_name(int64_t iteration);
// TRIAL_DIR/checkpoints/checkpoint_NNNNNN.
std::filesystem::path checkpoint_path(const std::filesystem::path& trial_dir, int64_t iteration);
// The iteration a checkpoint_NNNNNN directory name stands for; nullopt for any other name.
std::optional<int64_t> checkpoint_iteration(const std::string& dir_name);
// TRIAL_DIR/checkpoints/checkpoint_* directories holding a checkpoint.json, by iteration.
std::vector<std::filesystem::path> list_checkpoints(const std::filesystem::path& trial_dir);
// The highest-iteration checkpoint of a trial; nullopt when it has none.
std::optional<std::filesystem::path> latest_checkpoint(const std::filesystem::path& trial_dir);

}  // namespace rlx
