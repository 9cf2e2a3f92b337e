// Replay shard transfer: a data-parallel DQN rank's replay shard travels to rank 0 for a
// checkpoint and back for a resume, over the group's host communicator, so ranks on hosts without
// the trial's directory keep their shards in its checkpoints too. Only what rank 0 has not stored
// yet travels: the rank writes the transitions from the number rank 0 names onwards as one
// segment (native/replay_segments.h) in a temporary directory of its own, and streams the file
// in chunks; rank 0 checks its size and digest as it stores it under TRIAL/replay/. Every message
// of an exchange is sent and received even when one side fails, so the group stays in step; the
// failure then throws on rank 0 with the rank's reason.
//   checkpoint: rank -> 0: header JSON {inserted, held, segment | null, error?}, the segment file
//               in chunks, the buffer's rest (n-step windows, priorities)
//   restore:    0 -> rank: header JSON {listing}, each listed segment file in chunks, the rest;
//               rank -> 0: "" when restored, else the reason
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include "learner/communicator.h"
#include "learner/dqn_learner.h"
#include "native/replay_segments.h"

namespace rlx {

// What rank 0 keeps of a rank's shard for one checkpoint.
struct ShardCheckpoint {
  ReplayListing listing;
  std::string rest;  // DqnLearner::save_replay_rest's bytes
};

// Rank >= 1, on a ReplayCheckpointCommand: sends rank 0 the shard's transitions from number
// `from` on (those still held), and its rest. Failures to write the segment are reported to rank
// 0, not thrown.
void send_replay_shard(Communicator& host, const DqnLearner& learner, uint64_t from);

// Rank 0: receives what send_replay_shard sent from `rank` (after a ReplayCheckpointCommand
// naming log.inserted()), stores its segment in replay_dir, and returns the shard's listing.
// Throws std::runtime_error naming the rank when it reported a failure or sent something else
// than expected (log is then unchanged).
ShardCheckpoint receive_replay_shard(Communicator& host, int rank, const std::filesystem::path& replay_dir,
                                     ReplaySegmentLog& log);

// Rank 0: sends `rank` (after a ReplayRestoreCommand) the shard a checkpoint lists, reading the
// segments from replay_dir, and waits for its answer: nullopt when it restored the shard, else
// its reason.
std::optional<std::string> send_replay_shard_restore(Communicator& host, int rank, const std::filesystem::path& replay_dir,
                               const ShardCheckpoint& shard);

// Rank >= 1, on a ReplayRestoreCommand: receives the shard into a temporary directory, restores
// the learner's buffer from it, and answers rank 0. A failure to restore is reported, not thrown
// (the learner keeps its buffer).
void receive_replay_shard_restore(Communicator& host, DqnLearner& learner);

}  // namespace rlx
