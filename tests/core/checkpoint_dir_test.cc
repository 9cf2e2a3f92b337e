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
  return error_of<CheckpointError>([&] { read_checkpoint_dir(path); });
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
    CHECK_THAT(refusal(path), Contains("checkpoint.json is not valid JSON"));
  }
  SECTION("a newer format version") {
    auto manifest = nlohmann::json::parse(read_file(path / "checkpoint.json"));
    manifest["format_version"] = 2;
    write_file_atomic(path / "checkpoint.json", manifest.dump());
    CHECK_THAT(refusal(path), Contains("format version 2 is newer than this rlx supports (1)"));
  }
  SECTION("a listed name escaping the directory") {
    auto manifest = nlohmann::json::parse(read_file(path / "checkpoint.json"));
    manifest["files"]["../../etc/passwd"] = manifest["files"]["model.pt"];
    write_file_atomic(path / "checkpoint.json", manifest.dump());
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
