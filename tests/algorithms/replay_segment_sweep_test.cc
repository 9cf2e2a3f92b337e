// After each checkpoint `rlx train` deletes the replay segments no checkpoint of the trial lists
// (remove_unlisted_replay_segments), and keeps them all when it cannot read what one lists.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "algorithms/training_checkpoint.h"
#include "core/temp_dir.h"

namespace rlx {
namespace {

namespace fs = std::filesystem;

void touch(const fs::path& path, const std::string& text = "x") {
  fs::create_directories(path.parent_path());
  std::ofstream(path) << text;
}

// A checkpoint.json listing these segment files.
std::string manifest_listing(const std::vector<std::string>& files) {
  nlohmann::json segments = nlohmann::json::array();
  for (const std::string& file : files) segments.push_back({{"file", file}});
  return nlohmann::json{{"replay", {{"inserted", 1}, {"segments", segments}}}}.dump();
}

TEST_CASE("segments that no checkpoint lists are deleted, and an unreadable checkpoint keeps them all",
          "[algorithms][checkpoint][segments]") {
  TempDir tmp;
  const fs::path trial = tmp.path();
  touch(trial / "checkpoints/checkpoint_000001/checkpoint.json", manifest_listing({"replay-0-5-a.seg"}));
  touch(trial / "checkpoints/checkpoint_000002/checkpoint.json", manifest_listing({"replay-0-5-a.seg", "replay-5-9-b.seg"}));
  for (const char* file : {"replay-0-5-a.seg", "replay-5-9-b.seg", "replay-9-12-c.seg", "replay-9-12-d.seg.tmp", "notes.txt"}) {
    touch(trial / "replay" / file);
  }
  CHECK(remove_unlisted_replay_segments(trial) == 2);  // c (listed by none) and a stale temporary file
  CHECK(fs::exists(trial / "replay/replay-0-5-a.seg"));
  CHECK(fs::exists(trial / "replay/replay-5-9-b.seg"));
  CHECK_FALSE(fs::exists(trial / "replay/replay-9-12-c.seg"));
  CHECK_FALSE(fs::exists(trial / "replay/replay-9-12-d.seg.tmp"));
  CHECK(fs::exists(trial / "replay/notes.txt"));  // not a segment: not ours to delete

  // The second checkpoint deleted: b goes with it.
  fs::remove_all(trial / "checkpoints/checkpoint_000002");
  CHECK(remove_unlisted_replay_segments(trial) == 1);
  CHECK_FALSE(fs::exists(trial / "replay/replay-5-9-b.seg"));

  // A torn checkpoint.json: what it lists is unknown, so nothing is deleted.
  touch(trial / "replay/replay-12-20-e.seg");
  touch(trial / "checkpoints/checkpoint_000003/checkpoint.json", "{\"replay\": ");
  CHECK(remove_unlisted_replay_segments(trial) == 0);
  CHECK(fs::exists(trial / "replay/replay-12-20-e.seg"));
}

}  // namespace
}  // namespace rlx
