#include "learner/rank_commands.h"

#include <cstring>
#include <initializer_list>
#include <iterator>
#include <type_traits>

namespace rlx {

namespace {

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "rank commands are sent as little-endian fields");

// One row per command: its kind and name (the order of RankCommand's alternatives).
struct CommandInfo {
  RankCommandKind kind;
  const char* name;
  bool carries_fragments;
};
constexpr CommandInfo kCommands[] = {
    {RankCommandKind::kStop, "stop", false},
    {RankCommandKind::kSync, "sync", false},
    {RankCommandKind::kPpoUpdate, "ppo_update", true},
    {RankCommandKind::kDqnStep, "dqn_step", true},
    {RankCommandKind::kSelectPolicy, "select_policy", false},
    {RankCommandKind::kRegroup, "regroup", false},
    {RankCommandKind::kPsUpdate, "ps_update", true},
    {RankCommandKind::kReplayCheckpoint, "replay_checkpoint", false},
    {RankCommandKind::kReplayRestore, "replay_restore", false},
};
static_assert(std::size(kCommands) == std::variant_size_v<RankCommand>);

const CommandInfo* info_of(RankCommandKind kind) {
  for (const CommandInfo& info : kCommands) {
    if (info.kind == kind) return &info;
  }
  return nullptr;
}

std::string known_commands() {
  std::string text;
  for (const CommandInfo& info : kCommands) {
    text += (text.empty() ? "" : ", ") + std::to_string(static_cast<int>(info.kind)) + " " + info.name;
  }
  return text;
}

class Writer {
 public:
  template <typename T>
  void put(T value) {
    static_assert(std::is_trivially_copyable_v<T>);
    bytes_.append(reinterpret_cast<const char*>(&value), sizeof(T));
  }
  void put_vector(const std::vector<int64_t>& values) {
    put<uint64_t>(values.size());
    bytes_.append(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(int64_t));
  }
  std::string take() { return std::move(bytes_); }

 private:
  std::string bytes_;
};

// Where a fault lies: RankProtocolError "rank command NAME: field FIELD: WHAT".
struct Where {
  const char* command = nullptr;  // null until the command is known

  std::string prefix() const { return std::string("rank command") + (command ? std::string(" ") + command : "") + ": "; }
  [[noreturn]] void fail(const char* field, const std::string& what) const {
    throw RankProtocolError(prefix() + "field " + field + ": " + what);
  }
};

// Reads named fields; RankProtocolError naming the field when they run out.
class Reader {
 public:
  explicit Reader(const std::string& bytes) : bytes_(bytes) {}

  void set_command(const char* name) { where_.command = name; }
  const Where& where() const { return where_; }

  template <typename T>
  T get(const char* field) {
    static_assert(std::is_trivially_copyable_v<T>);
    need(sizeof(T), field);
    T value;
    std::memcpy(&value, bytes_.data() + offset_, sizeof(T));
    offset_ += sizeof(T);
    return value;
  }
  // A count, then that many int64 values; the count must be one of `allowed`.
  std::vector<int64_t> get_vector(const char* field, std::initializer_list<uint64_t> allowed, const std::string& expected) {
    const auto count = get<uint64_t>(field);
    bool ok = false;
    for (const uint64_t n : allowed) ok = ok || count == n;
    if (!ok) fail(field, std::to_string(count) + " values, expected " + expected);
    need(count * sizeof(int64_t), field);
    std::vector<int64_t> values(count);
    std::memcpy(values.data(), bytes_.data() + offset_, count * sizeof(int64_t));
    offset_ += count * sizeof(int64_t);
    return values;
  }
  void expect_end() const {
    if (offset_ != bytes_.size()) {
      throw RankProtocolError(where_.prefix() + std::to_string(bytes_.size() - offset_) + " bytes after its last field");
    }
  }
  [[noreturn]] void fail(const char* field, const std::string& what) const { where_.fail(field, what); }

 private:
  void need(uint64_t size, const char* field) const {
    if (size > bytes_.size() - offset_) {
      fail(field, "truncated (" + std::to_string(bytes_.size() - offset_) + " bytes left, " + std::to_string(size) +
                      " needed)");
    }
  }

  const std::string& bytes_;
  size_t offset_ = 0;
  Where where_;
};

// The rules every command obeys, for the encoder and the decoder alike.
void check_fields(const RankCommand& command, uint64_t fragments, const Where& at) {
  const auto at_least = [&](int64_t value, int64_t low, const char* field) {
    if (value < low) at.fail(field, std::to_string(value) + ", expected >= " + std::to_string(low));
  };
  if (const auto* update = std::get_if<PpoUpdateCommand>(&command)) {
    at_least(update->timesteps_done, 0, "timesteps_done");
    at_least(update->global_samples, 0, "global_samples");
    if (update->fragment_offsets.size() != fragments) {
      at.fail("fragment_offsets", std::to_string(update->fragment_offsets.size()) + " values for " +
                                      std::to_string(fragments) + " fragments");
    }
    if (!update->fragment_strides.empty() && update->fragment_strides.size() != fragments) {
      at.fail("fragment_strides", std::to_string(update->fragment_strides.size()) + " values for " +
                                      std::to_string(fragments) + " fragments (or none)");
    }
    for (const int64_t offset : update->fragment_offsets) {
      if (offset < 0 || offset >= update->global_samples) {
        at.fail("fragment_offsets", std::to_string(offset) + " is outside [0, global_samples = " +
                                        std::to_string(update->global_samples) + ")");
      }
    }
    for (const int64_t stride : update->fragment_strides) at_least(stride, 1, "fragment_strides");
  } else if (const auto* step = std::get_if<DqnStepCommand>(&command)) {
    at_least(step->rounds, 0, "rounds");
    at_least(step->timesteps, 0, "timesteps");
  } else if (const auto* select = std::get_if<SelectPolicyCommand>(&command)) {
    at_least(select->policy, 0, "policy");
  } else if (const auto* regroup = std::get_if<RegroupCommand>(&command)) {
    at_least(regroup->generation, 1, "generation");
  } else if (const auto* ps = std::get_if<PsUpdateCommand>(&command)) {
    at_least(ps->timesteps_done, 0, "timesteps_done");
    at_least(ps->iteration, 1, "iteration");
  } else if (const auto* replay = std::get_if<ReplayCheckpointCommand>(&command)) {
    at_least(replay->from, 0, "from");
  }
}

}  // namespace

RankCommandKind rank_command_kind(const RankCommand& command) { return kCommands[command.index()].kind; }

const char* rank_command_name(RankCommandKind kind) {
  const CommandInfo* info = info_of(kind);
  return info ? info->name : "unknown";
}

const char* rank_command_name(const RankCommand& command) { return kCommands[command.index()].name; }

std::string encode_rank_command(const RankCommand& command, size_t fragments) {
  const Where checks{rank_command_name(command)};
  const CommandInfo& info = kCommands[command.index()];
  if (!info.carries_fragments && fragments != 0) checks.fail("fragments", std::to_string(fragments) + ", expected none");
  if (fragments > kMaxRankFragments) checks.fail("fragments", std::to_string(fragments) + ", at most " + std::to_string(kMaxRankFragments));
  check_fields(command, fragments, checks);
  Writer out;
  out.put<uint32_t>(kRankCommandMagic);
  out.put<uint16_t>(kRankProtocolVersion);
  out.put<uint8_t>(static_cast<uint8_t>(info.kind));
  out.put<uint8_t>(0);  // reserved
  out.put<uint64_t>(fragments);
  if (const auto* update = std::get_if<PpoUpdateCommand>(&command)) {
    out.put<int64_t>(update->timesteps_done);
    out.put<int64_t>(update->global_samples);
    out.put_vector(update->fragment_offsets);
    out.put_vector(update->fragment_strides);
  } else if (const auto* step = std::get_if<DqnStepCommand>(&command)) {
    out.put<int64_t>(step->rounds);
    out.put<int64_t>(step->timesteps);
  } else if (const auto* select = std::get_if<SelectPolicyCommand>(&command)) {
    out.put<int64_t>(select->policy);
  } else if (const auto* regroup = std::get_if<RegroupCommand>(&command)) {
    out.put<int64_t>(regroup->generation);
  } else if (const auto* ps = std::get_if<PsUpdateCommand>(&command)) {
    out.put<int64_t>(ps->timesteps_done);
    out.put<int64_t>(ps->iteration);
  } else if (const auto* replay = std::get_if<ReplayCheckpointCommand>(&command)) {
    out.put<int64_t>(replay->from);
  }
  return out.take();
}

DecodedRankCommand decode_rank_command(const std::string& bytes) {
  Reader in(bytes);
  const auto magic = in.get<uint32_t>("magic");
  if (magic != kRankCommandMagic) in.fail("magic", "not a rank command (the bytes of another message?)");
  const auto version = in.get<uint16_t>("version");
  if (version != kRankProtocolVersion) {
    in.fail("version", std::to_string(version) + ", expected " + std::to_string(kRankProtocolVersion) +
                           " (the driver and this rank run different rlx builds?)");
  }
  const auto kind = in.get<uint8_t>("command");
  const CommandInfo* info = info_of(static_cast<RankCommandKind>(kind));
  if (info == nullptr) in.fail("command", "unknown command " + std::to_string(kind) + " (expected " + known_commands() + ")");
  in.set_command(info->name);
  if (const auto reserved = in.get<uint8_t>("reserved"); reserved != 0) in.fail("reserved", std::to_string(reserved) + ", expected 0");
  DecodedRankCommand decoded;
  const auto fragments = in.get<uint64_t>("fragments");
  if (fragments > kMaxRankFragments) in.fail("fragments", std::to_string(fragments) + ", at most " + std::to_string(kMaxRankFragments));
  if (!info->carries_fragments && fragments != 0) in.fail("fragments", std::to_string(fragments) + ", expected none");
  decoded.fragments = static_cast<size_t>(fragments);
  switch (info->kind) {
    case RankCommandKind::kStop: decoded.command = StopRank{}; break;
    case RankCommandKind::kSync: decoded.command = SyncLearnerState{}; break;
    case RankCommandKind::kPpoUpdate: {
      PpoUpdateCommand update;
      update.timesteps_done = in.get<int64_t>("timesteps_done");
      update.global_samples = in.get<int64_t>("global_samples");
      const std::string per_fragment = std::to_string(fragments) + " (one per fragment)";
      update.fragment_offsets = in.get_vector("fragment_offsets", {fragments}, per_fragment);
      update.fragment_strides = in.get_vector("fragment_strides", {0, fragments}, per_fragment + " or 0");
      decoded.command = std::move(update);
      break;
    }
    case RankCommandKind::kDqnStep: {
      DqnStepCommand step;
      step.rounds = in.get<int64_t>("rounds");
      step.timesteps = in.get<int64_t>("timesteps");
      decoded.command = step;
      break;
    }
    case RankCommandKind::kSelectPolicy: decoded.command = SelectPolicyCommand{in.get<int64_t>("policy")}; break;
    case RankCommandKind::kRegroup: decoded.command = RegroupCommand{in.get<int64_t>("generation")}; break;
    case RankCommandKind::kPsUpdate: {
      PsUpdateCommand ps;
      ps.timesteps_done = in.get<int64_t>("timesteps_done");
      ps.iteration = in.get<int64_t>("iteration");
      decoded.command = ps;
      break;
    }
    case RankCommandKind::kReplayCheckpoint: decoded.command = ReplayCheckpointCommand{in.get<int64_t>("from")}; break;
    case RankCommandKind::kReplayRestore: decoded.command = ReplayRestoreCommand{}; break;
  }
  in.expect_end();
  check_fields(decoded.command, fragments, in.where());
  return decoded;
}

}  // namespace rlx
