// The learner ranks' typed commands: every command survives encode/decode unchanged, and a
// header that is not a valid command is refused with a message that names the fault, never
// read past its end.
#include <catch2/catch.hpp>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "learner/rank_commands.h"

namespace {

using rlx::DqnStepCommand;
using rlx::PpoUpdateCommand;
using rlx::RankCommand;
using rlx::RankProtocolError;

PpoUpdateCommand ppo_update() { return {12288, 4096, {0, 1024, 2048}, {16, 16, 8}}; }

// The message decode_rank_command refuses `bytes` with ("" when it accepts them).
std::string refusal(const std::string& bytes) {
  try {
    rlx::decode_rank_command(bytes);
  } catch (const RankProtocolError& error) {
    return error.what();
  }
  return "";
}

// `bytes` with the little-endian value of type T written at `offset`.
template <typename T>
std::string patched(std::string bytes, size_t offset, T value) {
  std::memcpy(bytes.data() + offset, &value, sizeof(T));
  return bytes;
}

constexpr size_t kKindOffset = 6;       // after the magic (4) and the version (2)
constexpr size_t kFragmentsOffset = 8;  // after the reserved byte
constexpr size_t kFieldsOffset = 16;

}  // namespace

TEST_CASE("Every rank command survives encode and decode unchanged", "[learner][rank-commands]") {
  const auto stop = rlx::decode_rank_command(rlx::encode_rank_command(rlx::StopRank{}, 0));
  CHECK(std::holds_alternative<rlx::StopRank>(stop.command));
  CHECK(stop.fragments == 0);
  const auto sync = rlx::decode_rank_command(rlx::encode_rank_command(rlx::SyncLearnerState{}, 0));
  CHECK(std::holds_alternative<rlx::SyncLearnerState>(sync.command));

  const auto update = rlx::decode_rank_command(rlx::encode_rank_command(ppo_update(), 3));
  REQUIRE(std::holds_alternative<PpoUpdateCommand>(update.command));
  const auto& u = std::get<PpoUpdateCommand>(update.command);
  CHECK(update.fragments == 3);
  CHECK(u.timesteps_done == 12288);
  CHECK(u.global_samples == 4096);
  CHECK(u.fragment_offsets == std::vector<int64_t>{0, 1024, 2048});
  CHECK(u.fragment_strides == std::vector<int64_t>{16, 16, 8});

  PpoUpdateCommand contiguous = ppo_update();
  contiguous.fragment_strides.clear();  // every fragment contiguous
  const auto c = rlx::decode_rank_command(rlx::encode_rank_command(contiguous, 3));
  CHECK(std::get<PpoUpdateCommand>(c.command).fragment_strides.empty());
  const auto empty_shard = rlx::decode_rank_command(rlx::encode_rank_command(PpoUpdateCommand{0, 0, {}, {}}, 0));
  CHECK(empty_shard.fragments == 0);

  const auto step = rlx::decode_rank_command(rlx::encode_rank_command(DqnStepCommand{4, 50000}, 2));
  REQUIRE(std::holds_alternative<DqnStepCommand>(step.command));
  CHECK(std::get<DqnStepCommand>(step.command).rounds == 4);
  CHECK(std::get<DqnStepCommand>(step.command).timesteps == 50000);
  CHECK(step.fragments == 2);

  CHECK(std::string(rlx::rank_command_name(step.command)) == "dqn_step");

  const auto select = rlx::decode_rank_command(rlx::encode_rank_command(rlx::SelectPolicyCommand{3}, 0));
  REQUIRE(std::holds_alternative<rlx::SelectPolicyCommand>(select.command));
  CHECK(std::get<rlx::SelectPolicyCommand>(select.command).policy == 3);
  CHECK(std::string(rlx::rank_command_name(select.command)) == "select_policy");
  const auto regroup = rlx::decode_rank_command(rlx::encode_rank_command(rlx::RegroupCommand{7}, 0));
  REQUIRE(std::holds_alternative<rlx::RegroupCommand>(regroup.command));
  CHECK(std::get<rlx::RegroupCommand>(regroup.command).generation == 7);
  CHECK(std::string(rlx::rank_command_name(regroup.command)) == "regroup");
  const auto ps = rlx::decode_rank_command(rlx::encode_rank_command(rlx::PsUpdateCommand{4096, 3}, 2));
  REQUIRE(std::holds_alternative<rlx::PsUpdateCommand>(ps.command));
  CHECK(std::get<rlx::PsUpdateCommand>(ps.command).timesteps_done == 4096);
  CHECK(std::get<rlx::PsUpdateCommand>(ps.command).iteration == 3);
  CHECK(ps.fragments == 2);
  const auto replay = rlx::decode_rank_command(rlx::encode_rank_command(rlx::ReplayCheckpointCommand{123456}, 0));
  REQUIRE(std::holds_alternative<rlx::ReplayCheckpointCommand>(replay.command));
  CHECK(std::get<rlx::ReplayCheckpointCommand>(replay.command).from == 123456);
  CHECK(std::string(rlx::rank_command_name(replay.command)) == "replay_checkpoint");
  const auto restore = rlx::decode_rank_command(rlx::encode_rank_command(rlx::ReplayRestoreCommand{}, 0));
  CHECK(std::holds_alternative<rlx::ReplayRestoreCommand>(restore.command));
  CHECK(std::string(rlx::rank_command_name(restore.command)) == "replay_restore");
  CHECK(rlx::rank_command_kind(update.command) == rlx::RankCommandKind::kPpoUpdate);
  CHECK(std::string(rlx::rank_command_name(static_cast<rlx::RankCommandKind>(77))) == "unknown");
}

TEST_CASE("A header that is not a rank command is refused, naming the field", "[learner][rank-commands]") {
  const std::string stop = rlx::encode_rank_command(rlx::StopRank{}, 0);
  CHECK(refusal("") == "rank command: field magic: truncated (0 bytes left, 4 needed)");
  CHECK(refusal(R"({"op": "stop", "fragments": 0})") ==
        "rank command: field magic: not a rank command (the bytes of another message?)");
  CHECK_THAT(refusal(patched<uint16_t>(stop, 4, 2)),
             Catch::Contains("field version: 2, expected 1") && Catch::Contains("different rlx builds"));
  CHECK(refusal(patched<uint8_t>(stop, kKindOffset, 10)) ==
        "rank command: field command: unknown command 10 (expected 1 stop, 2 sync, 3 ppo_update, 4 dqn_step, 5 select_policy, "
        "6 regroup, 7 ps_update, 8 replay_checkpoint, 9 replay_restore)");
  CHECK(refusal(patched<uint8_t>(stop, kKindOffset + 1, 1)) == "rank command stop: field reserved: 1, expected 0");
  CHECK(refusal(patched<uint64_t>(stop, kFragmentsOffset, 2)) == "rank command stop: field fragments: 2, expected none");
  CHECK(refusal(stop + "x") == "rank command stop: 1 bytes after its last field");

  const std::string regroup = rlx::encode_rank_command(rlx::RegroupCommand{2}, 0);
  CHECK(refusal(patched<int64_t>(regroup, kFieldsOffset, 0)) == "rank command regroup: field generation: 0, expected >= 1");

  const std::string step = rlx::encode_rank_command(DqnStepCommand{4, 100}, 1);
  CHECK(refusal(patched<int64_t>(step, kFieldsOffset, -1)) == "rank command dqn_step: field rounds: -1, expected >= 0");
  CHECK(refusal(patched<uint64_t>(step, kFragmentsOffset, uint64_t{1} << 40)) ==
        "rank command dqn_step: field fragments: 1099511627776, at most 1048576");

  const std::string replay = rlx::encode_rank_command(rlx::ReplayCheckpointCommand{0}, 0);
  CHECK(refusal(patched<int64_t>(replay, kFieldsOffset, -1)) == "rank command replay_checkpoint: field from: -1, expected >= 0");
  CHECK(refusal(patched<uint64_t>(rlx::encode_rank_command(rlx::ReplayRestoreCommand{}, 0), kFragmentsOffset, 3)) ==
        "rank command replay_restore: field fragments: 3, expected none");

  const std::string select = rlx::encode_rank_command(rlx::SelectPolicyCommand{1}, 0);
  CHECK(refusal(patched<int64_t>(select, kFieldsOffset, -2)) == "rank command select_policy: field policy: -2, expected >= 0");
  CHECK(refusal(patched<uint64_t>(select, kFragmentsOffset, 1)) == "rank command select_policy: field fragments: 1, expected none");

  const std::string update = rlx::encode_rank_command(ppo_update(), 3);
  CHECK(refusal(patched<uint64_t>(update, kFragmentsOffset, 2)) ==
        "rank command ppo_update: field fragment_offsets: 3 values, expected 2 (one per fragment)");
  CHECK(refusal(patched<int64_t>(update, kFieldsOffset + 8 + 8 + 8, 4096)) ==
        "rank command ppo_update: field fragment_offsets: 4096 is outside [0, global_samples = 4096)");
  CHECK(refusal(patched<uint64_t>(update, kFieldsOffset + 16, uint64_t{1} << 62)) ==
        "rank command ppo_update: field fragment_offsets: 4611686018427387904 values, expected 3 (one per fragment)");
}

TEST_CASE("Every cut of a valid rank command is refused, and random bytes never crash the decoder",
          "[learner][rank-commands]") {
  for (const std::string& whole : {rlx::encode_rank_command(ppo_update(), 3), rlx::encode_rank_command(DqnStepCommand{1, 2}, 0),
                                   rlx::encode_rank_command(rlx::SyncLearnerState{}, 0)}) {
    for (size_t size = 0; size < whole.size(); ++size) {
      INFO("cut at " << size << " of " << whole.size());
      CHECK_THAT(refusal(whole.substr(0, size)), Catch::Contains("truncated"));
    }
  }
  std::mt19937_64 rng(12);
  const std::string valid = rlx::encode_rank_command(ppo_update(), 3);
  int accepted = 0;
  for (int i = 0; i < 20000; ++i) {
    std::string bytes = valid;
    // Flip a few bytes, sometimes past the fixed header, and sometimes cut the end.
    for (int flips = 1 + static_cast<int>(rng() % 3); flips > 0; --flips) bytes[rng() % bytes.size()] = static_cast<char>(rng());
    if (rng() % 4 == 0) bytes.resize(rng() % bytes.size());
    try {
      rlx::decode_rank_command(bytes);
      ++accepted;  // a flip inside a value that stays in range
    } catch (const RankProtocolError& error) {
      CHECK_THAT(error.what(), Catch::StartsWith("rank command"));
    }
  }
  CHECK(accepted < 20000);
}

TEST_CASE("A command that breaks the rules is refused before it is sent", "[learner][rank-commands]") {
  CHECK_THROWS_WITH(rlx::encode_rank_command(rlx::SyncLearnerState{}, 1),
                    "rank command sync: field fragments: 1, expected none");
  CHECK_THROWS_WITH(rlx::encode_rank_command(ppo_update(), 2),
                    "rank command ppo_update: field fragment_offsets: 3 values for 2 fragments");
  PpoUpdateCommand strides = ppo_update();
  strides.fragment_strides = {16};
  CHECK_THROWS_WITH(rlx::encode_rank_command(strides, 3),
                    "rank command ppo_update: field fragment_strides: 1 values for 3 fragments (or none)");
  CHECK_THROWS_AS(rlx::encode_rank_command(DqnStepCommand{0, -5}, 0), RankProtocolError);
}
