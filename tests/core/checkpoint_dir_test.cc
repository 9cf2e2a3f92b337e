#include <catch2/catch.hpp>

#include <fstream>

#include "core/atomic_file.h"
#include "core/checkpoint_dir.h"
#include "core/sha256.h"
#include "tests/core/test_util.h"

using namespace rlx;
using rlx::test::error_of;
using rlx::test::TempDir;
using Catch::Contains;
namespace fs = std::filesystem;

namespace {

const nlohmann::json kManifest = {{"algorithm", "PPO"}, {"iteration", 10}, {"timesteps", 20480},
                                  {"rng", {{"state", {1, 2, 3, 4}}}}};

std::vector<CheckpointFile> some_files() {
  std::string model(5000, '\0');
  for (size_t i = 0; i < model.size(); ++i) model[i] = static_cast<char>(i % 256);
  return {{"model.pt", model}, {"optimizer.pt", "adam state"}, {"empty.bin", ""}};
}

fs::path written_checkpoint(const TempDir& dir) {
  const fs::path path = checkpoint_path(dir.path(), 10);
  write_checkpoint_dir(path, kManifest, some_files());
  return path;
}

std::string refusal(const fs::path& path) {
  return error_of<CheckpointRefused>([&] { read_checkpoint_dir(path); });
}

// Replaces checkpoint.json by `text` with a matching checkpoint.json.sha256, as a deliberate
// edit would: what the manifest says is then checked on its own.
void rewrite_manifest(const fs::path& path, const std::string& text) {
  write_file_atomic(path / kCheckpointManifestName, text);
  write_file_atomic(path / kCheckpointManifestSumName, sha256_hex(text) + "  checkpoint.json\n");
}

}  // namespace

TEST_CASE("Checkpoint directories round-trip manifest and files", "[core][checkpoint]") {
  TempDir dir;
  const fs::path path = written_checkpoint(dir);
  CHECK(path == dir / "checkpoints/checkpoint_000010");
  const Checkpoint checkpoint = read_checkpoint_dir(path);
  CHECK(checkpoint.path == path);
  CHECK(checkpoint.manifest["format_version"] == kCheckpointFormatVersion);
  CHECK(checkpoint.manifest["algorithm"] == "PPO");
  CHECK(checkpoint.manifest["rng"] == kManifest["rng"]);
  CHECK(checkpoint.manifest["created_at"].get<std::string>().size() == 20);
  CHECK(checkpoint.manifest["files"]["optimizer.pt"]["sha256"] == sha256_hex("adam state"));
  CHECK(checkpoint.manifest["files"]["optimizer.pt"]["size"] == 10);
  REQUIRE(checkpoint.files.size() == 3);
  for (const auto& file : some_files()) CHECK(checkpoint.files.at(file.name) == file.bytes);
  CHECK(rlx::test::names_in(dir / "checkpoints") == std::vector<std::string>{"checkpoint_000010"});

  // Re-checkpointing the same iteration replaces it whole.
  write_checkpoint_dir(path, {{"iteration", 10}}, {{"model.pt", "v2"}});
  const Checkpoint again = read_checkpoint_dir(path);
  CHECK(again.files.size() == 1);
  CHECK(again.files.at("model.pt") == "v2");
  CHECK_FALSE(fs::exists(path / "optimizer.pt"));
  CHECK(rlx::test::names_in(dir / "checkpoints") == std::vector<std::string>{"checkpoint_000010"});
}

TEST_CASE("Writing a checkpoint rejects reserved keys and bad names", "[core][checkpoint]") {
  TempDir dir;
  CHECK_THROWS_AS(write_checkpoint_dir(dir / "c", {{"files", 1}}, {}), std::invalid_argument);
  CHECK_THROWS_AS(write_checkpoint_dir(dir / "c", nlohmann::json::array(), {}), std::invalid_argument);
  CHECK_THROWS_AS(write_checkpoint_dir(dir / "c", {}, {{"../x", "a"}}), std::invalid_argument);
  CHECK_THROWS_AS(write_checkpoint_dir(dir / "c", {}, {{"checkpoint.json", "a"}}), std::invalid_argument);
  CHECK_THROWS_AS(write_checkpoint_dir(dir / "c", {}, {{"a", "1"}, {"a", "2"}}), std::invalid_argument);
  CHECK_FALSE(fs::exists(dir / "c"));
}

TEST_CASE("Loading refuses damaged checkpoints with the path and the problem", "[core][checkpoint]") {
  TempDir dir;
  const fs::path path = written_checkpoint(dir);
  SECTION("a missing file") {
    fs::remove(path / "optimizer.pt");
    CHECK_THAT(refusal(path), Contains(path.string()) && Contains("file optimizer.pt missing"));
  }
  SECTION("a flipped byte") {
    std::string bytes = read_file(path / "model.pt");
    bytes[1234] = static_cast<char>(bytes[1234] ^ 0x01);
    write_file_atomic(path / "model.pt", bytes);
    CHECK_THAT(refusal(path), Contains(path.string()) && Contains("file model.pt: SHA-256 mismatch (corrupted or modified)"));
  }
  SECTION("a truncated file") {
    fs::resize_file(path / "model.pt", 4000);
    CHECK_THAT(refusal(path), Contains("file model.pt truncated (4000 of 5000 bytes)"));
  }
  SECTION("a grown file") {
    std::ofstream(path / "optimizer.pt", std::ios::app) << "!";
    CHECK_THAT(refusal(path), Contains("file optimizer.pt has 11 bytes, expected 10"));
  }
  SECTION("checkpoint.json missing") {
    fs::remove(path / "checkpoint.json");
    CHECK_THAT(refusal(path), Contains(path.string()) && Contains("checkpoint.json missing"));
  }
  SECTION("checkpoint.json truncated") {
    fs::resize_file(path / "checkpoint.json", 40);
    CHECK_THAT(refusal(path), Contains(path.string()) && Contains("checkpoint.json does not match its SHA-256 in "
                                                                  "checkpoint.json.sha256"));
    rewrite_manifest(path, read_file(path / "checkpoint.json"));
    CHECK_THAT(refusal(path), Contains("checkpoint.json is not valid JSON"));
  }
  SECTION("checkpoint.json.sha256 missing") {
    fs::remove(path / "checkpoint.json.sha256");
    CHECK_THAT(refusal(path), Contains(path.string()) && Contains("checkpoint.json.sha256 missing"));
  }
  SECTION("a newer format version") {
    auto manifest = nlohmann::json::parse(read_file(path / "checkpoint.json"));
    manifest["format_version"] = 3;
    rewrite_manifest(path, manifest.dump());
    CHECK_THAT(refusal(path), Contains("format version 3 is newer than this rlx supports (2)"));
  }
  SECTION("a listed name escaping the directory") {
    auto manifest = nlohmann::json::parse(read_file(path / "checkpoint.json"));
    manifest["files"]["../../etc/passwd"] = manifest["files"]["model.pt"];
    rewrite_manifest(path, manifest.dump());
    CHECK_THAT(refusal(path), Contains("'../../etc/passwd'"));
  }
  SECTION("no directory") { CHECK_THAT(refusal(dir / "nope"), Contains("no such directory")); }
}

TEST_CASE("Checkpoint names and the latest checkpoint of a trial", "[core][checkpoint]") {
  CHECK(checkpoint_dir_name(10) == "checkpoint_000010");
  CHECK(checkpoint_dir_name(1234567) == "checkpoint_1234567");
  CHECK(checkpoint_iteration("checkpoint_000010") == 10);
  CHECK_FALSE(checkpoint_iteration("checkpoint_000010.tmp-abcdef"));
  CHECK_FALSE(checkpoint_iteration("checkpoint_12"));
  TempDir dir;
  CHECK_FALSE(latest_checkpoint(dir.path()));
  write_checkpoint_dir(checkpoint_path(dir.path(), 9), {}, {});
  write_checkpoint_dir(checkpoint_path(dir.path(), 100), {}, {});
  write_checkpoint_dir(checkpoint_path(dir.path(), 20), {}, {});
  fs::create_directories(dir / "checkpoints/checkpoint_000200.tmp-abcdef");  // an interrupted write
  fs::create_directories(dir / "checkpoints/checkpoint_000300");            // no checkpoint.json
  CHECK(latest_checkpoint(dir.path()) == dir / "checkpoints/checkpoint_000100");
  const auto all = list_checkpoints(dir.path());
  REQUIRE(all.size() == 3);
  CHECK(all[0].filename() == "checkpoint_000009");
  CHECK(all[1].filename() == "checkpoint_000020");
}

TEST_CASE("A trial directory or its checkpoints/ folder names its newest checkpoint", "[core][checkpoint]") {
  TempDir dir;
  const fs::path trial = dir / "runs/exp/trial";
  write_checkpoint_dir(checkpoint_path(trial, 9), {}, {});
  write_checkpoint_dir(checkpoint_path(trial, 100), {}, {});
  write_checkpoint_dir(checkpoint_path(trial, 20), {}, {});
  fs::create_directories(trial / "checkpoints/checkpoint_000200.tmp-abcdef");  // an interrupted write
  fs::create_directories(trial / "checkpoints/checkpoint_000300");            // no checkpoint.json
  const fs::path newest = trial / "checkpoints/checkpoint_000100";

  CHECK(resolve_checkpoint(trial) == newest);
  CHECK(resolve_checkpoint(trial / "checkpoints") == newest);
  CHECK(resolve_checkpoint(trial.string() + "/checkpoints/") == newest);
  // A checkpoint, or a path that is no folder of checkpoints, is left for read_checkpoint_dir.
  CHECK(resolve_checkpoint(trial / "checkpoints/checkpoint_000020") == trial / "checkpoints/checkpoint_000020");
  CHECK(resolve_checkpoint(trial / "checkpoints/checkpoint_000300") == trial / "checkpoints/checkpoint_000300");
  CHECK(resolve_checkpoint(dir / "nope") == dir / "nope");
  fs::copy(newest, dir / "kept", fs::copy_options::recursive);  // a checkpoint under another name
  CHECK(resolve_checkpoint(dir / "kept") == dir / "kept");

  // A folder without any: refused, naming the folder and what was looked for.
  const fs::path empty_trial = dir / "runs/exp/stopped_early";
  fs::create_directories(empty_trial / "checkpoints");
  const std::string message = error_of<CheckpointRefused>([&] { resolve_checkpoint(empty_trial); });
  CHECK_THAT(message, Contains("no checkpoint in " + empty_trial.string()) && Contains("checkpoint.json") &&
                          Contains("checkpoint_NNNNNN/checkpoint.json") &&
                          Contains((empty_trial / "checkpoints").string()));
  CHECK_THAT(error_of<CheckpointRefused>([&] { resolve_checkpoint(empty_trial / "checkpoints"); }),
             Contains("no checkpoint in " + (empty_trial / "checkpoints").string()));
}

TEST_CASE("A format 1 checkpoint (no checkpoint.json.sha256) still loads", "[core][checkpoint]") {
  TempDir dir;
  const fs::path path = written_checkpoint(dir);
  auto manifest = nlohmann::json::parse(read_file(path / "checkpoint.json"));
  manifest["format_version"] = 1;
  write_file_atomic(path / "checkpoint.json", manifest.dump(2) + "\n");
  fs::remove(path / "checkpoint.json.sha256");
  CHECK(read_checkpoint_dir(path).manifest["algorithm"] == "PPO");
}

TEST_CASE("Every single-byte change of checkpoint.json or its .sha256 is refused, naming checkpoint.json",
          "[core][checkpoint]") {
  // A manifest shaped like a training run's: the values a flip could silently change.
  const nlohmann::json manifest = {
      {"algorithm", "PPO"},
      {"env_spec", {{"id", "CartPole-v1"}, {"max_episode_steps", 500}}},
      {"experiment", {{"env", "CartPole-v1"}, {"config", {{"lr", 0.0003}, {"gamma", 0.99}, {"seed", 7}}}}},
      {"counters", {{"training_iteration", 12}, {"timesteps_total", 24576}, {"time_total_s", 3.25}}},
      {"algorithm_state", {{"learner", {{"obs_mean", {0.01, -0.2, 0.03, 0.4}}, {"obs_var", {1.5, 0.9, 0.02, 1.1}}}}}}};
  TempDir dir;
  const fs::path path = checkpoint_path(dir.path(), 12);
  write_checkpoint_dir(path, manifest, {{"model_and_optimizer.pt", "weights"}});
  int flips = 0, refused = 0;
  for (const char* name : {kCheckpointManifestName, kCheckpointManifestSumName}) {
    const std::string original = read_file(path / name);
    for (size_t i = 0; i < original.size(); ++i) {
      for (const unsigned char mask : {0x01, 0x02, 0x10, 0x20, 0x80}) {
        std::string flipped = original;
        flipped[i] = static_cast<char>(static_cast<unsigned char>(flipped[i]) ^ mask);
        write_file_durable(path / name, flipped);
        ++flips;
        const std::string why = refusal(path);
        if (why.find(path.string()) != std::string::npos && why.find("checkpoint.json") != std::string::npos) {
          ++refused;
        } else {
          FAIL_CHECK(name << " byte " << i << " ^ " << int(mask) << " was " << (why.empty() ? "accepted" : why));
        }
      }
    }
    write_file_durable(path / name, original);
  }
  INFO(refused << " of " << flips << " flips refused");
  CHECK(refused == flips);
  CHECK(flips > 4000);  // 5 flips of each of the manifest's ~760 bytes and its sum's 82
  CHECK(read_checkpoint_dir(path).files.at("model_and_optimizer.pt") == "weights");
}

TEST_CASE("The newest valid checkpoint of a trial is its newest one that verifies", "[core][checkpoint]") {
  TempDir dir;
  std::vector<SkippedCheckpoint> skipped;
  CHECK_FALSE(newest_valid_checkpoint(dir.path(), skipped));  // no checkpoints/ at all
  CHECK(skipped.empty());
  for (const int64_t iteration : {1, 2, 3}) {
    write_checkpoint_dir(checkpoint_path(dir.path(), iteration), {{"iteration", iteration}},
                         {{"model.pt", "weights " + std::to_string(iteration)}});
  }
  fs::create_directories(dir / "checkpoints/checkpoint_000004.tmp-abcdef");  // an interrupted write
  const std::optional<Checkpoint> newest = newest_valid_checkpoint(dir.path(), skipped);
  REQUIRE(newest);
  CHECK(newest->path == checkpoint_path(dir.path(), 3));
  CHECK(newest->manifest["iteration"] == 3);
  CHECK(newest->files.at("model.pt") == "weights 3");
  CHECK(skipped.empty());
}

TEST_CASE("Damaged newer checkpoints are skipped and listed with the reason", "[core][checkpoint]") {
  TempDir dir;
  for (const int64_t iteration : {1, 2, 3}) {
    write_checkpoint_dir(checkpoint_path(dir.path(), iteration), {{"iteration", iteration}},
                         {{"model.pt", "weights " + std::to_string(iteration)}});
  }
  const fs::path second = checkpoint_path(dir.path(), 2), third = checkpoint_path(dir.path(), 3);
  std::string model = read_file(third / "model.pt");
  model[0] = static_cast<char>(model[0] ^ 0x01);  // a changed byte of a file
  write_file_atomic(third / "model.pt", model);
  std::string manifest = read_file(second / kCheckpointManifestName);
  manifest[manifest.size() / 2] = static_cast<char>(manifest[manifest.size() / 2] ^ 0x01);  // and of checkpoint.json
  write_file_atomic(second / kCheckpointManifestName, manifest);

  std::vector<SkippedCheckpoint> skipped;
  const std::optional<Checkpoint> newest = newest_valid_checkpoint(dir.path(), skipped);
  REQUIRE(newest);
  CHECK(newest->path == checkpoint_path(dir.path(), 1));
  CHECK(newest->files.at("model.pt") == "weights 1");
  REQUIRE(skipped.size() == 2);  // newest first
  CHECK(skipped[0].path == third);
  CHECK_THAT(skipped[0].reason, Contains(third.string()) && Contains("file model.pt: SHA-256 mismatch"));
  CHECK(skipped[1].path == second);
  CHECK_THAT(skipped[1].reason, Contains(second.string()) && Contains("checkpoint.json does not match its SHA-256"));
}

TEST_CASE("A trial whose checkpoints are all damaged has no newest valid checkpoint", "[core][checkpoint]") {
  TempDir dir;
  for (const int64_t iteration : {5, 10}) write_checkpoint_dir(checkpoint_path(dir.path(), iteration), {}, {{"model.pt", "w"}});
  fs::remove(checkpoint_path(dir.path(), 5) / "model.pt");
  fs::resize_file(checkpoint_path(dir.path(), 10) / "model.pt", 0);
  std::vector<SkippedCheckpoint> skipped = {{"/earlier", "appended to, not replaced"}};
  CHECK_FALSE(newest_valid_checkpoint(dir.path(), skipped));
  REQUIRE(skipped.size() == 3);
  CHECK(skipped[0].path == "/earlier");
  CHECK_THAT(skipped[1].reason, Contains("checkpoint_000010") && Contains("file model.pt truncated (0 of 1 bytes)"));
  CHECK_THAT(skipped[2].reason, Contains("checkpoint_000005") && Contains("file model.pt missing"));
}

TEST_CASE("A checkpoint's trial directory is written as the checkpoint's path is", "[core][checkpoint]") {
  CHECK(trial_dir_of_checkpoint("runs/cartpole-ppo/t/checkpoints/checkpoint_000004") == "runs/cartpole-ppo/t");
  CHECK(trial_dir_of_checkpoint("runs/cartpole-ppo/t/checkpoints/checkpoint_000004/") == "runs/cartpole-ppo/t");
  CHECK(trial_dir_of_checkpoint("./runs/x/t/checkpoints/./checkpoint_000004") == "runs/x/t");
  CHECK(trial_dir_of_checkpoint("/shared/runs/x/t/checkpoints/checkpoint_000004") == "/shared/runs/x/t");
  // Too short to climb: from the current directory.
  const std::filesystem::path here = std::filesystem::current_path();
  CHECK(trial_dir_of_checkpoint("checkpoints/checkpoint_000004") == here);
  CHECK(trial_dir_of_checkpoint("../checkpoints/checkpoint_000004") == here.parent_path());
}

TEST_CASE("A manifest's replay lists its segment files, one buffer's or every data-parallel shard's", "[core][checkpoint]") {
  const nlohmann::json one = {{"inserted", 9}, {"segments", {{{"file", "a.seg"}}, {{"file", "b.seg"}}}}};
  CHECK(rlx::listed_segment_files(one) == std::vector<std::string>{"a.seg", "b.seg"});
  const nlohmann::json shards = {{"shards", {one, {{"inserted", 3}, {"segments", {{{"file", "c.seg"}}}}}}}};
  CHECK(rlx::listed_segment_files(shards) == std::vector<std::string>{"a.seg", "b.seg", "c.seg"});
  // What is not a listing lists nothing.
  CHECK(rlx::listed_segment_files(nlohmann::json("x")).empty());
  CHECK(rlx::listed_segment_files({{"shards", 4}, {"segments", {{{"file", 7}}}}}).empty());
}
