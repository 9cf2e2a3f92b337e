// DQN's replay in checkpoint segments: a prioritized n-step buffer with observation bytes, its
// slots written a checkpoint at a time across the ring's wrap and read back, with its carried
// windows and priorities, into a buffer that equals the original byte for byte (save()).
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "core/binary_io.h"
#include "core/temp_dir.h"
#include "learner/prioritized_replay.h"
#include "tests/learner/replay_test_util.h"

namespace rlx {
namespace {

using rlx_test::EnvColumn;

// `steps` steps of two envs from step `first` on: obs = 100 k + s, env 0 terminates every 9th step.
SampleBatch steps_from(int first, int steps) {
  std::vector<EnvColumn> envs(2);
  for (int k = 0; k < 2; ++k) {
    for (int t = 0; t < steps; ++t) {
      const int s = first + t;
      envs[k].obs.push_back(static_cast<float>(100 * k + s));
      envs[k].rewards.push_back(static_cast<float>(s % 3));
      if (k == 0 && s % 9 == 8) {
        envs[k].terminated_at.push_back(t);
        envs[k].final_obs.push_back(-static_cast<float>(s));
      }
    }
    envs[k].bootstrap_obs = static_cast<float>(100 * k + first + steps);
  }
  return rlx_test::with_bytes(rlx_test::make_fragment(envs));
}

std::string saved(const ReplayBuffer& buffer) {
  BinaryWriter out;
  buffer.save(out);
  return out.take();
}

PrioritizedReplayBuffer make_buffer() {
  return PrioritizedReplayBuffer(40, {1, rlx_test::kObsBytes}, {3, 0.9, true}, {0.6, 1e-6});
}

TEST_CASE("a prioritized n-step buffer restores from its segments and the rest of its state, byte for byte",
          "[learner][dqn][replay][segments]") {
  TempDir tmp;
  PrioritizedReplayBuffer buffer = make_buffer();
  ReplaySegmentLog log;
  ReplayListing listing;
  const auto checkpoint = [&] {
    listing = log.checkpoint(tmp.path(), static_cast<uint64_t>(buffer.total_added()), static_cast<uint64_t>(buffer.size()),
                             [&](uint64_t first, uint64_t end, SegmentWriter& out) { buffer.write_rows(first, end, out); });
  };
  const auto restored = [&] {
    PrioritizedReplayBuffer copy = make_buffer();
    copy.reset_to(listing.inserted);
    ReplaySegmentLog copy_log;
    copy_log.restore(tmp.path(), listing, 40, [&](const ReplaySegment& s, SegmentReader& in) { copy.read_rows(s.first, s.end, in); });
    BinaryWriter rest;
    buffer.save_rest(rest);
    const std::string rest_bytes = rest.take();  // the reader reads it in place
    BinaryReader in(rest_bytes, "rest");
    copy.load_rest(in);
    in.expect_end();
    return saved(copy);
  };
  int step = 0;
  for (const int steps : {7, 11, 16, 5}) {  // 39 steps of 2 envs: the 40-slot ring wraps
    buffer.add(steps_from(step, steps));
    step += steps;
    const std::vector<int64_t> slots = {0, 3, buffer.size() - 1};
    const std::vector<float> td = {0.5f * static_cast<float>(step), 2.0f, 0.25f};
    buffer.update_priorities(slots.data(), td.data(), 3);
    checkpoint();
    INFO("after step " << step << ": " << listing.segments.size() << " segments, " << buffer.total_added() << " stored");
    CHECK(buffer.num_pending() > 0);  // windows carried across the fragment end travel too
    CHECK(restored() == saved(buffer));
  }
  CHECK(buffer.total_added() > 40);
}

}  // namespace
}  // namespace rlx
