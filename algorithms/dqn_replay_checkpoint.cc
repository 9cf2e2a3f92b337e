// DqnAlgorithm's replay in checkpoints: one learner's buffer, or every data-parallel rank's shard,
// which rank 0 gathers over the group (learner/replay_shard_transfer.h) and lists in the
// manifest as {"shards": [listing of rank 0, of rank 1, ...]}. Each shard's transitions are in
// segments under TRIAL/replay/, the rest of its state (n-step windows, priorities) in a checkpoint
// file of its own.
#include <string>

#include "algorithms/dqn_algorithm.h"
#include "core/checkpoint_dir.h"
#include "core/log.h"
#include "learner/replay_shard_transfer.h"

namespace rlx {

namespace {

std::string rest_file_name(int rank) {
  return rank == 0 ? "replay_rest.bin" : "replay_rest_rank" + std::to_string(rank) + ".bin";
}

// How many shards a manifest's "replay" lists: {"shards": [...]} or one buffer's listing.
size_t shards_listed(const nlohmann::json& replay) {
  if (!replay.is_object() || !replay.contains("shards")) return 1;
  if (!replay.at("shards").is_array()) throw std::invalid_argument("its replay's \"shards\" is not a list");
  return replay.at("shards").size();
}

}  // namespace

nlohmann::json DqnAlgorithm::write_replay_segments(const std::filesystem::path& replay_dir) {
  replay_rests_.clear();
  if (!checkpoint_replay_buffer_) return nullptr;
  nlohmann::json own = learner_->checkpoint_replay(replay_dir).to_json();
  replay_rests_.push_back({rest_file_name(0), learner_->save_replay_rest()});
  if (!link_->active()) return own;
  const int world = link_->world();
  nlohmann::json shards = nlohmann::json::array({std::move(own)});
  shard_logs_.resize(static_cast<size_t>(world));
  link_->guarded([&] {
    for (int rank = 1; rank < world; ++rank) {
      ReplaySegmentLog& log = shard_logs_[static_cast<size_t>(rank)];
      link_->send(rank, ReplayCheckpointCommand{static_cast<int64_t>(log.inserted())});
      ShardCheckpoint shard = receive_replay_shard(link_->member().host(), rank, replay_dir, log);
      shards.push_back(shard.listing.to_json());
      replay_rests_.push_back({rest_file_name(rank), std::move(shard.rest)});
    }
  });
  return {{"shards", std::move(shards)}};
}

void DqnAlgorithm::restore_replay(const Checkpoint& checkpoint) {
  const auto replay = checkpoint.manifest.find("replay");
  if (replay == checkpoint.manifest.end()) {  // a checkpoint from before replay segments: one buffer in one file
    if (!link_->active()) restore_replay_file(checkpoint, kReplayFileName, [this](const std::string& bytes) { learner_->load_replay(bytes); });
    return;
  }
  const std::string where = checkpoint.path.string();
  const std::filesystem::path replay_dir = trial_dir_of_checkpoint(checkpoint.path) / kReplayDirName;
  const int world = link_->world();
  std::vector<ShardCheckpoint> shards(static_cast<size_t>(world));
  try {
    const size_t listed = shards_listed(*replay);
    if (listed != shards.size()) {
      logger().warn("{}: its replay is in {} shard{} of {} learner{}; this run has {}: the replay starts empty (resume "
                    "with --learners {} to keep it)", where, listed, listed == 1 ? "" : "s", listed, listed == 1 ? "" : "s",
                    world, listed);
      return;
    }
    for (int rank = 0; rank < world; ++rank) {
      ShardCheckpoint& shard = shards[static_cast<size_t>(rank)];
      shard.listing = ReplayListing::from_json(replay->contains("shards") ? replay->at("shards").at(rank) : *replay);
      const auto rest = checkpoint.files.find(rest_file_name(rank));
      if (rest == checkpoint.files.end()) throw std::invalid_argument("its file " + rest_file_name(rank) + " is missing");
      shard.rest = rest->second;
    }
    learner_->restore_replay(replay_dir, shards[0].listing, shards[0].rest);
    shard_logs_.assign(shards.size(), ReplaySegmentLog());
    for (int rank = 1; rank < world; ++rank) {
      shard_logs_[static_cast<size_t>(rank)].adopt(shards[static_cast<size_t>(rank)].listing,
                                                   static_cast<uint64_t>(learner_->buffer().capacity()));
    }
  } catch (const std::exception& error) {
    throw CheckpointRefused(where + ": cannot restore the replay buffer: " + error.what());
  }
  std::optional<std::string> refused;
  link_->guarded([&] {
    for (int rank = 1; rank < world; ++rank) {
      link_->send(rank, ReplayRestoreCommand{});
      std::optional<std::string> answer =
          send_replay_shard_restore(link_->member().host(), rank, replay_dir, shards[static_cast<size_t>(rank)]);
      if (answer && !refused) refused = "learner rank " + std::to_string(rank) + ": " + *answer;
    }
  });
  if (refused) throw CheckpointRefused(where + ": cannot restore the replay buffer: " + *refused);
}

}  // namespace rlx
