// Rank commands: what the driver (learner rank 0) tells the other data-parallel learner ranks,
// as typed messages, like the worker protocol's (transport/messages.h). A command travels as
// one header (encode_rank_command) followed by `fragments` packed SampleBatches
// (learner/fragment_shards.h). The header is fixed little-endian fields: magic "RLXC", protocol
// version, command kind, fragment count, then the command's own fields; decode_rank_command
// checks every one of them before anything acts on it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <variant>
#include <vector>

namespace rlx {

constexpr uint32_t kRankCommandMagic = 0x43584C52;  // the bytes "RLXC"
constexpr uint16_t kRankProtocolVersion = 1;
constexpr uint64_t kMaxRankFragments = uint64_t{1} << 20;  // fragments one command may carry

enum class RankCommandKind : uint8_t {
  kStop = 1,
  kSync = 2,
  kPpoUpdate = 3,
  kDqnStep = 4,
  kSelectPolicy = 5,
  kRegroup = 6,
  kPsUpdate = 7,
  kReplayCheckpoint = 8,
  kReplayRestore = 9,
};

// Leave the group: the rank returns from run_learner_rank. No fragments.
struct StopRank {};

// Take rank 0's learner state: a broadcast of it follows the command. No fragments.
struct SyncLearnerState {};

// One data-parallel PPO update over this rank's shard of the batch (the fragments that follow).
struct PpoUpdateCommand {
  int64_t timesteps_done = 0;             // env steps before this iteration (the schedules' clock), >= 0
  int64_t global_samples = 0;             // N: samples over all ranks, >= 0
  std::vector<int64_t> fragment_offsets;  // [F]: global index of each fragment's first sample, in [0, N)
  std::vector<int64_t> fragment_strides;  // [F] or empty (contiguous): global stride of a step, > 0
};

// DQN: add the fragments that follow to this rank's replay shard, then train `rounds` rounds.
struct DqnStepCommand {
  int64_t rounds = 0;     // >= 0
  int64_t timesteps = 0;  // env steps received so far (the schedules' clock), >= 0
};

// A multi-agent run: the next command is for this policy (its index in the run's policy map). No
// fragments. The driver sends one before each command of a policy's learner.
struct SelectPolicyCommand {
  int64_t policy = 0;  // >= 0
};

// An elastic group (learner/elastic_membership.h) takes ranks in: leave this generation's
// communicators and join `generation`, whose plan rank 0 has published in the store. No fragments.
struct RegroupCommand {
  int64_t generation = 0;  // > 0
};

// learner_sync: parameter_server: compute the gradients of the tasks the parameter server hands
// out for this iteration's update of the whole batch (the fragments that follow).
struct PsUpdateCommand {
  int64_t timesteps_done = 0;  // the schedules' clock, >= 0
  int64_t iteration = 0;       // the server's iteration, > 0
};

// A checkpoint: send rank 0 this rank's replay shard's transitions from number `from` on (those
// rank 0 has not stored yet), as a segment, with the rest of its state (learner/replay_shard_transfer.h).
// No fragments.
struct ReplayCheckpointCommand {
  int64_t from = 0;  // >= 0
};

// A resume: take the replay shard rank 0 sends next (learner/replay_shard_transfer.h). No fragments.
struct ReplayRestoreCommand {};

using RankCommand = std::variant<StopRank, SyncLearnerState, PpoUpdateCommand, DqnStepCommand, SelectPolicyCommand,
                                 RegroupCommand, PsUpdateCommand, ReplayCheckpointCommand, ReplayRestoreCommand>;

// A header that is not a valid rank command: its message names the field and what was expected.
class RankProtocolError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// The command's kind.
RankCommandKind rank_command_kind(const RankCommand& command);
// "stop", "sync", "ppo_update", "dqn_step", "select_policy", "regroup", "ps_update", "replay_checkpoint" or
// "replay_restore"; "unknown" for a value outside the enum.
const char* rank_command_name(RankCommandKind kind);
const char* rank_command_name(const RankCommand& command);

// The header of `command` followed by `fragments` fragments. RankProtocolError when the command
// breaks the rules decode_rank_command checks (a field out of range, offsets that do not match
// `fragments`): what is sent can always be decoded.
std::string encode_rank_command(const RankCommand& command, size_t fragments);

struct DecodedRankCommand {
  RankCommand command;
  size_t fragments = 0;  // packed SampleBatches that follow
};

// The command a header holds; RankProtocolError naming the fault (bad magic or version, an
// unknown command, a missing, extra or out-of-range field) otherwise. Never reads past `bytes`.
DecodedRankCommand decode_rank_command(const std::string& bytes);

}  // namespace rlx
