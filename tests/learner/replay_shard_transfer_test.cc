// A data-parallel rank's replay shard travelling to rank 0 for checkpoints (only what rank 0 has
// not stored yet) and back for a resume, over a Gloo pair; failures on either side are reported
// across and the pair stays in step.
#include "tests/learner/ppo_test_util.h"

#include <fstream>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/temp_dir.h"
#include "learner/dqn_learner.h"
#include "learner/replay_shard_transfer.h"
#include "tests/learner/data_parallel_test_util.h"
#include "tests/learner/learner_test_configs.h"

namespace {

using rlx_test::model_config_for;
using rlx_test::run_ranks;
using rlx_test::Sampler;

rlx::DqnConfig shard_config() {
  rlx::DqnConfig config = rlx::test::dqn_test_config();
  config.buffer_size = 300;  // the ring wraps between the checkpoints
  config.n_step = 3;
  config.prioritized_replay = true;
  return config;
}

}  // namespace

TEST_CASE("A rank's replay shard goes to rank 0 a segment per checkpoint and comes back byte for byte",
          "[learner][dp][replay][segments]") {
  const rlx::ModelSpec model = model_config_for("CartPole-v1", {16});
  Sampler sampler("CartPole-v1", model, 2, 64, 11);
  const std::vector<rlx::SampleBatch> batches = sampler.collect(4);  // 4 x 128 transitions
  rlx::TempDir replay_dir;
  rlx::DqnLearner shard(model, shard_config(), 4);
  rlx::DqnLearner restored(model, shard_config(), 9);
  rlx::ReplaySegmentLog log;
  std::vector<rlx::ShardCheckpoint> checkpoints;
  std::string refusal, restore_answer;
  std::vector<uint64_t> taken_in;  // the shard's count at each checkpoint
  run_ranks(2, [&](int rank, rlx::Communicator& comm) {
    for (size_t b = 0; b < batches.size(); ++b) {
      if (rank == 1) shard.add(batches[b]);
      if (b != 1 && b != 3) continue;  // checkpoints after about 256 and 512 transitions
      if (rank == 1) {
        taken_in.push_back(static_cast<uint64_t>(shard.buffer().total_added()));
        rlx::send_replay_shard(comm, shard, log.inserted());
      } else {
        checkpoints.push_back(rlx::receive_replay_shard(comm, 1, replay_dir.path(), log));
      }
    }
    // Rank 0 asks for transitions the shard never took in: the rank says so, nothing is stored,
    // and the next exchange still works.
    if (rank == 1) {
      rlx::send_replay_shard(comm, shard, 10000);
    } else {
      try {
        rlx::receive_replay_shard(comm, 1, replay_dir.path(), log);
      } catch (const std::runtime_error& error) {
        refusal = error.what();
      }
    }
    if (rank == 1) {
      rlx::receive_replay_shard_restore(comm, restored);
    } else {
      restore_answer = rlx::send_replay_shard_restore(comm, 1, replay_dir.path(), checkpoints.back()).value_or("");
    }
  });
  REQUIRE(checkpoints.size() == 2);
  REQUIRE(taken_in.size() == 2);
  INFO("taken in at the checkpoints: " << taken_in[0] << ", " << taken_in[1]);
  // The first checkpoint: one segment of all it took in (about 256); the second: a new segment
  // of those since (about 256). The ring of 300 wrapped, but some of the first segment's are still
  // live: it stays listed.
  REQUIRE(taken_in[0] > 200);
  REQUIRE(taken_in[1] - taken_in[0] < 300);
  CHECK(checkpoints[0].listing.inserted == taken_in[0]);
  REQUIRE(checkpoints[0].listing.segments.size() == 1);
  CHECK(checkpoints[1].listing.inserted == taken_in[1]);
  REQUIRE(checkpoints[1].listing.segments.size() == 2);
  CHECK(checkpoints[1].listing.segments[0].file == checkpoints[0].listing.segments[0].file);
  CHECK(checkpoints[1].listing.segments[1].first == taken_in[0]);
  CHECK(checkpoints[1].listing.segments[1].end == taken_in[1]);
  CHECK(checkpoints[1].rest == shard.save_replay_rest());
  CHECK_THAT(refusal, Catch::Contains("learner rank 1 could not write its replay shard") &&
                          Catch::Contains("asked for transitions from 10000 on; the shard has taken in " +
                                                          std::to_string(taken_in[1])));
  CHECK(log.inserted() == taken_in[1]);  // the refused exchange changed nothing
  CHECK(restore_answer.empty());
  CHECK(restored.save_replay() == shard.save_replay());
}

TEST_CASE("A replay segment damaged on rank 0's disk is refused by the rank it is sent to, naming the file",
          "[learner][dp][replay][segments]") {
  const rlx::ModelSpec model = model_config_for("CartPole-v1", {16});
  Sampler sampler("CartPole-v1", model, 2, 64, 12);
  const std::vector<rlx::SampleBatch> batches = sampler.collect(1);
  rlx::TempDir replay_dir;
  rlx::DqnLearner shard(model, shard_config(), 4);
  rlx::DqnLearner restored(model, shard_config(), 9);
  const std::string before = restored.save_replay();
  rlx::ReplaySegmentLog log;
  std::optional<rlx::ShardCheckpoint> checkpoint;
  std::optional<std::string> answer;
  shard.add(batches[0]);
  run_ranks(2, [&](int rank, rlx::Communicator& comm) {
    if (rank == 1) {
      rlx::send_replay_shard(comm, shard, 0);
      rlx::receive_replay_shard_restore(comm, restored);
    } else {
      checkpoint = rlx::receive_replay_shard(comm, 1, replay_dir.path(), log);
      const std::string file = (replay_dir.path() / checkpoint->listing.segments.at(0).file).string();
      std::fstream damage(file, std::ios::in | std::ios::out | std::ios::binary);
      damage.seekg(20);
      const char byte = static_cast<char>(damage.get());
      damage.seekp(20);
      damage.put(static_cast<char>(byte ^ 0x5a));
      damage.close();
      answer = rlx::send_replay_shard_restore(comm, 1, replay_dir.path(), *checkpoint);
    }
  });
  REQUIRE(answer.has_value());
  CHECK_THAT(*answer, Catch::Contains(checkpoint->listing.segments.at(0).file) && Catch::Contains("another SHA-256"));
  CHECK(restored.save_replay() == before);  // the rank keeps its buffer
}
