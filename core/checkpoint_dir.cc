// Checkpoint directories: atomic publication and verified loading.
#include "core/checkpoint_dir.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <ctime>
#include <set>
#include <system_error>

#include "core/atomic_file.h"
#include "core/sha256.h"

namespace rlx {
namespace fs = std::filesystem;
namespace {

constexpr const char* kReserved[] = {"format_version", "created_at", "files"};

// Why `name` cannot be a checkpoint file name; empty when it can.
std::string bad_name_reason(const std::string& name) {
  if (name.empty()) return "an empty name";
  if (name == kCheckpointManifestName || name == kCheckpointManifestSumName) return "the manifest's own name";
  if (name.front() == '.') return "a hidden name";
  if (name.find('/') != std::string::npos || name.find('\\') != std::string::npos) return "a path, not a plain name";
  if (name.find('\0') != std::string::npos) return "a NUL character";
  return "";
}

std::string utc_now() {
  const std::time_t now = std::time(nullptr);
  std::tm parts{};
  gmtime_r(&now, &parts);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &parts);
  return text;
}

// checkpoint.json.sha256's whole content for a manifest's text.
std::string manifest_sum_line(const std::string& manifest_text) {
  return sha256_hex(manifest_text) + "  " + kCheckpointManifestName + "\n";
}

bool is_hex_digest(const std::string& text) {
  return text.size() == 64 && std::all_of(text.begin(), text.end(), [](char c) {
           return std::isdigit(static_cast<unsigned char>(c)) || (c >= 'a' && c <= 'f');
         });
}

}  // namespace

void write_checkpoint_dir(const fs::path& dir, const nlohmann::json& manifest, const std::vector<CheckpointFile>& files) {
  if (!manifest.is_object() && !manifest.is_null()) throw std::invalid_argument("checkpoint manifest must be a JSON object");
  for (const char* key : kReserved) {
    if (manifest.contains(key)) throw std::invalid_argument(std::string("checkpoint manifest may not set '") + key + "'");
  }
  nlohmann::json full = manifest.is_null() ? nlohmann::json::object() : manifest;
  full["format_version"] = kCheckpointFormatVersion;
  full["created_at"] = utc_now();
  nlohmann::json listing = nlohmann::json::object();
  for (const auto& file : files) {
    const std::string reason = bad_name_reason(file.name);
    if (!reason.empty()) throw std::invalid_argument("checkpoint file name '" + file.name + "' is " + reason);
    if (listing.contains(file.name)) throw std::invalid_argument("checkpoint file '" + file.name + "' given twice");
    listing[file.name] = {{"sha256", sha256_hex(file.bytes)}, {"size", file.bytes.size()}};
  }
  full["files"] = listing;
  const std::string manifest_text = full.dump(2) + "\n";
  try {
    write_directory_atomic(dir, [&](const fs::path& temp) {
      for (const auto& file : files) write_file_durable(temp / file.name, file.bytes);
      write_file_durable(temp / kCheckpointManifestName, manifest_text);
      write_file_durable(temp / kCheckpointManifestSumName, manifest_sum_line(manifest_text));
    });
  } catch (const std::system_error& error) {  // also fs::filesystem_error
    throw CheckpointError("checkpoint " + dir.string() + ": cannot write: " + error.what());
  }
}

Checkpoint read_checkpoint_dir(const fs::path& dir) {
  const std::string label = "checkpoint " + dir.string() + ": ";
  auto fail = [&label](const std::string& what) { return CheckpointRefused(label + what); };
  std::error_code error;
  if (!fs::is_directory(dir, error)) throw fail("no such directory");
  const fs::path manifest_path = dir / kCheckpointManifestName;
  if (!fs::is_regular_file(manifest_path, error)) {
    throw fail(std::string(kCheckpointManifestName) + " missing (not a checkpoint directory)");
  }
  Checkpoint checkpoint;
  checkpoint.path = dir;
  const fs::path sum_path = dir / kCheckpointManifestSumName;
  const bool summed = fs::exists(sum_path, error);
  try {
    const std::string manifest_text = read_file(manifest_path);
    if (summed && read_file(sum_path) != manifest_sum_line(manifest_text)) {
      throw fail(std::string(kCheckpointManifestName) + " does not match its SHA-256 in " + kCheckpointManifestSumName +
                 " (one of the two is corrupted or was modified)");
    }
    checkpoint.manifest = nlohmann::json::parse(manifest_text);
  } catch (const nlohmann::json::parse_error& parse_error) {
    throw fail(std::string(kCheckpointManifestName) + " is not valid JSON (truncated or corrupted): " + parse_error.what());
  } catch (const std::system_error& io_error) {
    throw fail(io_error.what());
  }
  const nlohmann::json& manifest = checkpoint.manifest;
  if (!manifest.is_object()) throw fail(std::string(kCheckpointManifestName) + " is not a JSON object");
  const auto version = manifest.find("format_version");
  if (version == manifest.end() || !version->is_number_integer()) {
    throw fail(std::string(kCheckpointManifestName) + " has no integer format_version");
  }
  const int64_t format = version->get<int64_t>();
  if (format > kCheckpointFormatVersion) {
    throw fail("format version " + std::to_string(format) + " is newer than this rlx supports (" +
               std::to_string(kCheckpointFormatVersion) + ")");
  }
  if (format < 1) throw fail("format version " + std::to_string(format) + " is not valid");
  if (format >= 2 && !summed) {
    throw fail(std::string(kCheckpointManifestSumName) + " missing (a format " + std::to_string(format) +
               " checkpoint keeps the SHA-256 of " + kCheckpointManifestName + " in it)");
  }
  const auto listing = manifest.find("files");
  if (listing == manifest.end() || !listing->is_object()) {
    throw fail(std::string(kCheckpointManifestName) + " has no 'files' object");
  }
  for (const auto& [name, entry] : listing->items()) {
    const std::string reason = bad_name_reason(name);
    if (!reason.empty()) throw fail("listed file name '" + name + "' is " + reason);
    if (!entry.is_object() || !entry.contains("sha256") || !entry["sha256"].is_string() ||
        !is_hex_digest(entry["sha256"].get<std::string>()) || !entry.contains("size") ||
        !entry["size"].is_number_unsigned()) {
      throw fail("the entry for file " + name + " needs a sha256 (64 hex digits) and a size");
    }
    const fs::path path = dir / name;
    if (!fs::is_regular_file(path, error)) throw fail("file " + name + " missing");
    std::string bytes;
    try {
      bytes = read_file(path);
    } catch (const std::system_error& io_error) {
      throw fail("file " + name + ": " + io_error.what());
    }
    const auto expected_size = entry["size"].get<uint64_t>();
    if (bytes.size() < expected_size) {
      throw fail("file " + name + " truncated (" + std::to_string(bytes.size()) + " of " + std::to_string(expected_size) +
                 " bytes)");
    }
    if (bytes.size() > expected_size) {
      throw fail("file " + name + " has " + std::to_string(bytes.size()) + " bytes, expected " +
                 std::to_string(expected_size) + " (modified)");
    }
    if (sha256_hex(bytes) != entry["sha256"].get<std::string>()) {
      throw fail("file " + name + ": SHA-256 mismatch (corrupted or modified)");
    }
    checkpoint.files.emplace(name, std::move(bytes));
  }
  return checkpoint;
}

std::string checkpoint_dir_name(int64_t iteration) {
  if (iteration < 0) throw std::invalid_argument("checkpoint iteration " + std::to_string(iteration) + " is negative");
  char text[40];
  std::snprintf(text, sizeof text, "checkpoint_%06lld", static_cast<long long>(iteration));
  return text;
}

fs::path checkpoint_path(const fs::path& trial_dir, int64_t iteration) {
  return trial_dir / "checkpoints" / checkpoint_dir_name(iteration);
}

fs::path trial_dir_of_checkpoint(const fs::path& checkpoint) {
  fs::path normal = checkpoint.lexically_normal();
  if (!normal.has_filename()) normal = normal.parent_path();  // a trailing separator
  const fs::path trial = normal.parent_path().parent_path();
  if (trial.empty() || trial.filename() == "..") return fs::absolute(normal).lexically_normal().parent_path().parent_path();
  return trial;
}

std::optional<int64_t> checkpoint_iteration(const std::string& dir_name) {
  const std::string prefix = "checkpoint_";
  if (dir_name.rfind(prefix, 0) != 0) return std::nullopt;
  const std::string digits = dir_name.substr(prefix.size());
  if (digits.size() < 6 || digits.size() > 18) return std::nullopt;
  if (!std::all_of(digits.begin(), digits.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); })) {
    return std::nullopt;
  }
  return std::stoll(digits);
}

namespace {

// The checkpoint_NNNNNN directories in `folder` that hold a checkpoint.json, by iteration.
std::vector<fs::path> checkpoints_in(const fs::path& folder) {
  std::vector<std::pair<int64_t, fs::path>> found;
  std::error_code error;
  if (!fs::is_directory(folder, error)) return {};
  for (const auto& entry : fs::directory_iterator(folder)) {
    const auto iteration = checkpoint_iteration(entry.path().filename().string());
    if (iteration && fs::is_regular_file(entry.path() / kCheckpointManifestName, error)) {
      found.emplace_back(*iteration, entry.path());
    }
  }
  std::sort(found.begin(), found.end());
  std::vector<fs::path> paths;
  for (auto& [iteration, path] : found) paths.push_back(std::move(path));
  return paths;
}

}  // namespace

std::vector<fs::path> list_checkpoints(const fs::path& trial_dir) { return checkpoints_in(trial_dir / "checkpoints"); }

std::optional<fs::path> latest_checkpoint(const fs::path& trial_dir) {
  auto all = list_checkpoints(trial_dir);
  if (all.empty()) return std::nullopt;
  return all.back();
}

fs::path resolve_checkpoint(const fs::path& path) {
  const fs::path dir = path.has_filename() ? path : path.parent_path();  // "TRIAL/checkpoints/" too
  std::error_code error;
  if (!fs::is_directory(dir, error) || fs::exists(dir / kCheckpointManifestName, error) ||
      checkpoint_iteration(dir.filename().string())) {
    return path;  // a checkpoint, or what read_checkpoint_dir refuses with its reason
  }
  for (const fs::path& folder : {dir, dir / "checkpoints"}) {
    const std::vector<fs::path> found = checkpoints_in(folder);
    if (!found.empty()) return found.back();
  }
  throw CheckpointRefused("no checkpoint in " + dir.string() + ": looked for " + kCheckpointManifestName +
                          " in it, and for checkpoint_NNNNNN/" + kCheckpointManifestName + " in it and in " +
                          (dir / "checkpoints").string() + " (a trial has none before its first checkpoint)");
}

std::optional<Checkpoint> newest_valid_checkpoint(const fs::path& trial_dir, std::vector<SkippedCheckpoint>& skipped) {
  const std::vector<fs::path> all = list_checkpoints(trial_dir);
  for (auto it = all.rbegin(); it != all.rend(); ++it) {
    try {
      return read_checkpoint_dir(*it);
    } catch (const CheckpointRefused& refused) {
      skipped.push_back({*it, refused.what()});
    }
  }
  return std::nullopt;
}

std::vector<std::string> listed_segment_files(const nlohmann::json& replay) {
  std::vector<std::string> files;
  const auto add_listing = [&](const nlohmann::json& listing) {
    if (!listing.is_object() || !listing.contains("segments") || !listing.at("segments").is_array()) return;
    for (const nlohmann::json& segment : listing.at("segments")) {
      if (segment.is_object() && segment.contains("file") && segment.at("file").is_string()) {
        files.push_back(segment.at("file").get<std::string>());
      }
    }
  };
  add_listing(replay);
  if (replay.is_object() && replay.contains("shards") && replay.at("shards").is_array()) {
    for (const nlohmann::json& shard : replay.at("shards")) add_listing(shard);
  }
  return files;
}

}  // namespace rlx
