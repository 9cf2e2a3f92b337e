// Checkpoint directories (torch-free): checkpoint.json (format version, time, SHA-256 and size
// of every file, plus the caller's manifest), checkpoint.json.sha256 (the manifest's own
// SHA-256) and opaque files, published atomically and verified on load: a changed byte in any
// of them makes the load refuse.
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

// 2: checkpoint.json.sha256 added. Format 1 checkpoints (no such file) still load.
constexpr int kCheckpointFormatVersion = 2;
constexpr const char* kCheckpointManifestName = "checkpoint.json";
// TRIAL/replay/, beside TRIAL/checkpoints/: the replay segments a manifest's "replay" lists
// (native/replay_segments.h).
constexpr const char* kReplayDirName = "replay";

// The segment files a manifest's "replay" value lists: one buffer's listing, or {"shards": [listing,
// ...]} of data-parallel learners. Entries that are not well-formed are skipped.
std::vector<std::string> listed_segment_files(const nlohmann::json& replay);

// The SHA-256 of checkpoint.json in sha256sum's format ("<64 hex digits>  checkpoint.json\n", so
// `sha256sum -c checkpoint.json.sha256` checks it by hand).
constexpr const char* kCheckpointManifestSumName = "checkpoint.json.sha256";

// A checkpoint that cannot be written or is refused on load; the message names the path and the problem.
class CheckpointError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A checkpoint refused on load (missing, corrupted, modified, of a newer format or another
// learner shape): bad input, for which rlx exits with status 2.
class CheckpointRefused : public CheckpointError {
 public:
  using CheckpointError::CheckpointError;
};

// One file of a checkpoint: a plain name (no '/', not hidden, not checkpoint.json or its
// .sha256) and its bytes.
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
// `files`, checkpoint.json = manifest + {format_version, created_at, files: {name: {sha256, size}}}
// and checkpoint.json.sha256.
// `manifest` must be a JSON object (or null for none) without those three keys (std::invalid_argument otherwise,
// also for a bad or repeated file name); CheckpointError on an I/O failure.
void write_checkpoint_dir(const std::filesystem::path& dir, const nlohmann::json& manifest,
                          const std::vector<CheckpointFile>& files);

// Reads and verifies a checkpoint: checkpoint.json against checkpoint.json.sha256 (before it is
// parsed), its format version, every listed file present with its size and SHA-256.
// CheckpointRefused naming the directory, the file and the problem otherwise.
Checkpoint read_checkpoint_dir(const std::filesystem::path& dir);

// "checkpoint_000010" for iteration 10.
std::string checkpoint_dir_name(int64_t iteration);
// TRIAL_DIR/checkpoints/checkpoint_NNNNNN.
std::filesystem::path checkpoint_path(const std::filesystem::path& trial_dir, int64_t iteration);
// The trial a checkpoint belongs to (TRIAL/checkpoints/CHECKPOINT), written as `checkpoint` is:
// relative stays relative (to the same directory), so that a resumed run's paths read as a fresh
// run's; absolute only where a relative path cannot climb that far ("checkpoint_000004").
std::filesystem::path trial_dir_of_checkpoint(const std::filesystem::path& checkpoint);
// The iteration a checkpoint_NNNNNN directory name stands for; nullopt for any other name.
std::optional<int64_t> checkpoint_iteration(const std::string& dir_name);
// TRIAL_DIR/checkpoints/checkpoint_* directories holding a checkpoint.json, by iteration.
std::vector<std::filesystem::path> list_checkpoints(const std::filesystem::path& trial_dir);
// The highest-iteration checkpoint of a trial; nullopt when it has none.
std::optional<std::filesystem::path> latest_checkpoint(const std::filesystem::path& trial_dir);
// The checkpoint a user's CHECKPOINT argument names: `path` itself unless it is a directory that
// is no checkpoint (no checkpoint.json, no checkpoint_NNNNNN name), else the newest checkpoint in
// it or in its checkpoints/ (a trial directory); CheckpointRefused naming the folder and what was
// looked for when it holds none. Unverified: read_checkpoint_dir verifies what it returns.
std::filesystem::path resolve_checkpoint(const std::filesystem::path& path);

// A checkpoint passed over because it did not verify, and why (CheckpointRefused's message).
struct SkippedCheckpoint {
  std::filesystem::path path;
  std::string reason;
};

// The newest checkpoint of a trial that verifies, trying them newest first (a run killed while
// writing, a damaged disk); each one refused on the way is appended to `skipped`. nullopt when
// none verifies (or the trial has none).
std::optional<Checkpoint> newest_valid_checkpoint(const std::filesystem::path& trial_dir,
                                                  std::vector<SkippedCheckpoint>& skipped);

}  // namespace rlx
