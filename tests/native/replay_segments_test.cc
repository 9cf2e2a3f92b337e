// Replay segments: a ring buffer written a checkpoint at a time (only what came in since the
// last), read back bit for bit across the ring's wrap, with segments shared while their
// transitions live and refused when a file is missing, altered or leaves a gap.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include "core/binary_io.h"
#include "core/temp_dir.h"
#include "native/continuous_replay.h"
#include "native/replay_segments.h"

namespace rlx {
namespace {

namespace fs = std::filesystem;

// `steps` steps of one env (O = 2, A = 1): step s has obs (s, -s), reward s, every 7th terminates.
SampleBatch steps_from(int first, int steps) {
  SampleBatch batch;
  batch.resize(steps, 1, 2, 1, false);
  for (int t = 0; t < steps; ++t) {
    const auto s = static_cast<float>(first + t);
    batch.obs[2 * t] = s;
    batch.obs[2 * t + 1] = -s;
    batch.action_values[t] = 0.5f * static_cast<float>((first + t) % 5);
    batch.rewards[t] = s;
    if ((first + t) % 7 == 6) {
      batch.terminated[t] = 1;
      batch.final_obs_index.push_back(t);
      batch.final_obs.insert(batch.final_obs.end(), {s + 0.5f, -s - 0.5f});
    }
  }
  batch.bootstrap_obs = {static_cast<float>(first + steps), -static_cast<float>(first + steps)};
  return batch;
}

ContinuousReplay make_replay(int64_t capacity) { return ContinuousReplay(capacity, 2, Space::box({1}, 0.0f, 2.0f)); }

std::string bytes_of(const ContinuousReplay& replay) {
  BinaryWriter writer;
  replay.save(writer);
  return writer.take();
}

ReplayListing checkpoint(ReplaySegmentLog& log, const fs::path& dir, const ContinuousReplay& replay) {
  return log.checkpoint(dir, replay.inserted(), static_cast<uint64_t>(replay.size()),
                        [&](uint64_t first, uint64_t end, SegmentWriter& out) { replay.write_rows(first, end, out); });
}

ContinuousReplay restored(const fs::path& dir, const ReplayListing& listing, int64_t capacity) {
  ContinuousReplay replay = make_replay(capacity);
  ReplaySegmentLog log;
  replay.reset_to(listing.inserted);
  log.restore(dir, listing, static_cast<uint64_t>(capacity),
              [&](const ReplaySegment& segment, SegmentReader& in) { replay.read_rows(segment.first, segment.end, in); });
  return replay;
}

TEST_CASE("each checkpoint writes only the new transitions, and segments restore the ring bit for bit",
          "[native][replay][segments]") {
  TempDir tmp;
  const fs::path dir = tmp.path() / "replay";
  ContinuousReplay replay = make_replay(50);
  ReplaySegmentLog log;
  replay.add(steps_from(0, 30));
  const ReplayListing first = checkpoint(log, dir, replay);
  REQUIRE(first.segments.size() == 1);
  CHECK(first.segments[0].first == 0);
  CHECK(first.segments[0].end == 30);
  CHECK(bytes_of(restored(dir, first, 50)) == bytes_of(replay));

  replay.add(steps_from(30, 15));
  const ReplayListing second = checkpoint(log, dir, replay);
  REQUIRE(second.segments.size() == 2);  // the first is shared
  CHECK(second.segments[0].file == first.segments[0].file);
  CHECK(second.segments[1].first == 30);
  CHECK(second.segments[1].end == 45);
  CHECK(bytes_of(restored(dir, second, 50)) == bytes_of(replay));

  // Past the capacity: the ring wraps, and the first segment's transitions are all overwritten.
  replay.add(steps_from(45, 40));
  const ReplayListing third = checkpoint(log, dir, replay);
  CHECK(third.inserted == 85);
  REQUIRE(third.segments.size() == 2);
  CHECK(third.segments[0].file == second.segments[1].file);  // [30, 45): still partly live
  CHECK(third.segments[1].first == 45);
  CHECK(bytes_of(restored(dir, third, 50)) == bytes_of(replay));

  // An earlier checkpoint still restores from its own segments.
  CHECK(bytes_of(restored(dir, second, 50)) != bytes_of(replay));
  CHECK(restored(dir, second, 50).inserted() == 45);

  // Only the third's segments are kept when no other checkpoint lists the first.
  CHECK(remove_unreferenced_segments(dir, {third.segments[0].file, third.segments[1].file}) == 1);
  CHECK_FALSE(fs::exists(dir / first.segments[0].file));
  CHECK(bytes_of(restored(dir, third, 50)) == bytes_of(replay));
}

TEST_CASE("a checkpoint after more than a whole buffer writes only the live transitions", "[native][replay][segments]") {
  TempDir tmp;
  ContinuousReplay replay = make_replay(20);
  ReplaySegmentLog log;
  replay.add(steps_from(0, 5));
  checkpoint(log, tmp.path(), replay);
  replay.add(steps_from(5, 60));
  const ReplayListing listing = checkpoint(log, tmp.path(), replay);
  REQUIRE(listing.segments.size() == 1);
  CHECK(listing.segments[0].first == 45);
  CHECK(listing.segments[0].end == 65);
  CHECK(bytes_of(restored(tmp.path(), listing, 20)) == bytes_of(replay));
}

TEST_CASE("a segment that is missing, altered or leaves a gap is refused by name", "[native][replay][segments]") {
  TempDir tmp;
  const fs::path dir = tmp.path();
  ContinuousReplay replay = make_replay(100);
  ReplaySegmentLog log;
  replay.add(steps_from(0, 10));
  checkpoint(log, dir, replay);
  replay.add(steps_from(10, 10));
  const ReplayListing listing = checkpoint(log, dir, replay);
  REQUIRE(listing.segments.size() == 2);
  const fs::path second = dir / listing.segments[1].file;

  ReplayListing gap = listing;
  gap.segments.erase(gap.segments.begin());
  CHECK_THROWS_WITH(restored(dir, gap, 100), Catch::Contains("segments start at transition 10, after the first live one, 0"));
  ReplayListing short_of = listing;
  short_of.inserted = 25;
  CHECK_THROWS_WITH(restored(dir, short_of, 100), Catch::Contains("end at transition 20, not 25"));

  {
    std::fstream file(second, std::ios::in | std::ios::out | std::ios::binary);
    file.seekp(5);
    file.put('\x7f');
  }
  CHECK_THROWS_WITH(restored(dir, listing, 100),
                    Catch::Contains(second.string()) && Catch::Contains("does not match its SHA-256"));
  fs::remove(second);
  CHECK_THROWS_WITH(restored(dir, listing, 100), Catch::Contains(second.string()) && Catch::Contains("is missing"));
}

TEST_CASE("a listing round-trips through JSON and a malformed one is refused", "[native][replay][segments]") {
  ReplayListing listing;
  listing.inserted = 7;
  listing.segments.push_back({"replay-0-7-00ff.seg", 0, 7, std::string(64, 'a'), 99});
  const ReplayListing back = ReplayListing::from_json(listing.to_json());
  CHECK(back.to_json() == listing.to_json());
  nlohmann::json bad = listing.to_json();
  bad["segments"][0]["file"] = "../escape.seg";
  CHECK_THROWS_WITH(ReplayListing::from_json(bad), Catch::Contains("is malformed"));
  CHECK_THROWS_WITH(ReplayListing::from_json(nlohmann::json{{"inserted", -1}}), Catch::Contains("needs \"inserted\""));
}

}  // namespace
}  // namespace rlx
