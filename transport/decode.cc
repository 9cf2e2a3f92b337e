// decode_message: structural checks (frame_layout.cc), then each type's schema, limits and
// cross-column checks, then the copy into the typed message.
#include "transport/decode.h"

#include <cmath>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>

#include <nlohmann/json.hpp>

namespace rlx {

namespace {

struct Rejection {
  RejectReason reason;
  std::string detail;
};
using Check = std::optional<Rejection>;

Check reject(RejectReason reason, std::string detail) { return Rejection{reason, std::move(detail)}; }

std::string column_name(ColumnId id) {
  return "column " + std::to_string(static_cast<unsigned>(id)) + " (" + column_id_name(id) + ")";
}

// The validated columns of one message, looked up by id.
class Columns {
 public:
  Columns(const FrameLayout& layout, const std::vector<zmq::message_t>& frames) : layout_(layout), frames_(frames) {}

  // Rejects a message carrying any column outside allowed.
  Check allow_only(std::initializer_list<ColumnId> allowed) const {
    for (uint32_t i = 0; i < layout_.num_columns; ++i) {
      bool known = false;
      for (ColumnId id : allowed) known = known || layout_.columns[i].column == static_cast<uint16_t>(id);
      if (!known) return reject(RejectReason::kUnexpectedColumn, "column " + std::to_string(layout_.columns[i].column));
    }
    return std::nullopt;
  }

  // The column's descriptor, or null when absent.
  const ColumnDescriptor* find(ColumnId id) const {
    for (uint32_t i = 0; i < layout_.num_columns; ++i) {
      if (layout_.columns[i].column == static_cast<uint16_t>(id)) return &layout_.columns[i];
    }
    return nullptr;
  }

  // Like find, but checks dtype and rank; a missing column is an error only when required.
  Check get(ColumnId id, DType dtype, uint8_t ndim, bool required, const ColumnDescriptor*& out) const {
    out = find(id);
    if (!out) return required ? reject(RejectReason::kMissingColumn, column_name(id)) : std::nullopt;
    if (out->dtype != static_cast<uint8_t>(dtype)) {
      return reject(RejectReason::kWrongDType, column_name(id) + " is " + dtype_name(out->dtype) + ", expected " +
                                                   dtype_name(static_cast<uint8_t>(dtype)));
    }
    if (out->ndim != ndim) {
      return reject(RejectReason::kWrongRank, column_name(id) + " has " + std::to_string(out->ndim) + " dims, expected " +
                                                  std::to_string(ndim));
    }
    return std::nullopt;
  }

  // Copies a validated column's bytes into out (resized to fit).
  template <typename T>
  void copy(const ColumnDescriptor* d, std::vector<T>& out) const {
    const zmq::message_t& frame = frames_[static_cast<size_t>(d - layout_.columns.data()) + 1];
    if constexpr (std::is_same_v<T, uint8_t>) {
      // Byte columns (pixel observations: 28 KB a step) in one pass, not zero-filled first.
      const auto* bytes = static_cast<const uint8_t*>(frame.data());
      out.assign(bytes, bytes + frame.size());
    } else {
      out.resize(frame.size() / sizeof(T));
      if (frame.size() > 0) std::memcpy(out.data(), frame.data(), frame.size());
    }
  }

  // Reads element 0 of a validated, non-empty column.
  template <typename T>
  T scalar(const ColumnDescriptor* d) const {
    const zmq::message_t& frame = frames_[static_cast<size_t>(d - layout_.columns.data()) + 1];
    T value;
    std::memcpy(&value, frame.data(), sizeof(T));
    return value;
  }

  uint32_t size() const { return layout_.num_columns; }

 private:
  const FrameLayout& layout_;
  const std::vector<zmq::message_t>& frames_;
};

bool dims_are(const ColumnDescriptor* d, int64_t a, int64_t b) { return d->dims[0] == a && d->dims[1] == b; }

Check decode_no_columns(const Columns& columns) {
  if (columns.size() != 0) return reject(RejectReason::kUnexpectedColumn, "this message type carries no columns");
  return std::nullopt;
}

// An integer field of the hello JSON within [lo, hi].
std::optional<int64_t> json_int(const nlohmann::json& info, const char* key, int64_t lo, int64_t hi) {
  auto it = info.find(key);
  if (it == info.end()) return std::nullopt;
  int64_t value = 0;
  if (it->is_number_unsigned()) {
    const auto u = it->get<uint64_t>();
    if (u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return std::nullopt;
    value = static_cast<int64_t>(u);
  } else if (it->is_number_integer()) {
    value = it->get<int64_t>();
  } else {
    return std::nullopt;
  }
  if (value < lo || value > hi) return std::nullopt;
  return value;
}

// A string field of the hello JSON of at most kMaxHelloStringBytes bytes.
std::optional<std::string> json_string(const nlohmann::json& info, const char* key) {
  auto it = info.find(key);
  if (it == info.end() || !it->is_string()) return std::nullopt;
  const std::string& value = it->get_ref<const std::string&>();
  if (value.size() > kMaxHelloStringBytes) return std::nullopt;
  return value;
}

Check decode_hello(const Columns& columns, const MessageInfo& info, const DecodeLimits& limits,
                   std::optional<Message>& out) {
  if (auto bad = columns.allow_only({ColumnId::kHelloInfo})) return bad;
  const ColumnDescriptor* text_column = nullptr;
  if (auto bad = columns.get(ColumnId::kHelloInfo, DType::kUInt8, 1, true, text_column)) return bad;
  if (text_column->bytes > limits.max_hello_bytes) return reject(RejectReason::kLimitExceeded, "hello info too long");
  std::vector<uint8_t> text;
  columns.copy(text_column, text);
  const nlohmann::json parsed = nlohmann::json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded() || !parsed.is_object()) return reject(RejectReason::kBadHelloInfo, "hello info is not a JSON object");
  const auto bad_field = [](const char* key) { return reject(RejectReason::kBadHelloInfo, std::string("hello field ") + key); };
  Hello hello;
  hello.worker_id = info.sender_id;
  hello.protocol_version = kProtocolVersion;
  auto env_id = json_string(parsed, "env_id");
  if (!env_id || env_id->empty()) return bad_field("env_id");
  auto hostname = json_string(parsed, "hostname");
  if (!hostname) return bad_field("hostname");
  auto num_envs = json_int(parsed, "num_envs", 1, limits.max_envs);
  if (!num_envs) return bad_field("num_envs");
  auto obs_size = json_int(parsed, "obs_size", 0, limits.max_obs_size);
  if (!obs_size) return bad_field("obs_size");
  auto action_size = json_int(parsed, "action_size", 0, limits.max_action_size);
  if (!action_size) return bad_field("action_size");
  auto num_actions = *action_size == 0 ? json_int(parsed, "num_actions", 1, limits.max_num_actions)
                                       : json_int(parsed, "num_actions", 0, 0);
  if (!num_actions) return bad_field("num_actions");
  auto pid = json_int(parsed, "pid", 0, std::numeric_limits<int64_t>::max());
  if (!pid) return bad_field("pid");
  const std::optional<int64_t> obs_bytes =
      parsed.contains("obs_bytes") ? json_int(parsed, "obs_bytes", 0, limits.max_obs_size) : std::optional<int64_t>(0);
  if (!obs_bytes) return bad_field("obs_bytes");
  const std::optional<int64_t> components =
      parsed.contains("action_components")
          ? json_int(parsed, "action_components", 1, *action_size == 0 ? limits.max_action_size : 1)
          : std::optional<int64_t>(1);
  if (!components) return bad_field("action_components");
  hello.env_id = std::move(*env_id);
  hello.hostname = std::move(*hostname);
  hello.num_envs = *num_envs;
  hello.obs_size = *obs_size;
  hello.action_size = *action_size;
  hello.num_actions = *num_actions;
  hello.obs_bytes = *obs_bytes;
  hello.action_components = *components;
  hello.pid = *pid;
  out = std::move(hello);
  return std::nullopt;
}

// Shapes of a fragment's columns: present columns checked for dtype and rank.
struct FragmentColumns {
  const ColumnDescriptor *obs, *action_indices, *action_values, *rewards, *terminated, *truncated, *log_probs, *values,
      *bootstrap_obs, *final_obs_index, *final_obs, *obs_u8, *bootstrap_obs_u8, *final_obs_u8, *initial_states, *policy_lane,
      *dropped_index;
};

Check check_fragment_schema(const Columns& c, FragmentColumns& f) {
  if (auto bad = c.allow_only({ColumnId::kObs, ColumnId::kActionIndices, ColumnId::kActionValues, ColumnId::kRewards,
                               ColumnId::kTerminated, ColumnId::kTruncated, ColumnId::kLogProbs, ColumnId::kValues,
                               ColumnId::kBootstrapObs, ColumnId::kFinalObsIndex, ColumnId::kFinalObs, ColumnId::kObsU8,
                               ColumnId::kBootstrapObsU8, ColumnId::kFinalObsU8, ColumnId::kInitialStates,
                               ColumnId::kPolicyLane, ColumnId::kDroppedIndex})) {
    return bad;
  }
  Check bad;
  // Action indices are [T, K] (one per action) or [T, K, D] (MultiDiscrete, MultiBinary).
  const ColumnDescriptor* indices = c.find(ColumnId::kActionIndices);
  const uint8_t index_rank = indices != nullptr && indices->ndim == 3 ? 3 : 2;
  if ((bad = c.get(ColumnId::kObs, DType::kFloat32, 3, true, f.obs)) ||
      (bad = c.get(ColumnId::kActionIndices, DType::kInt64, index_rank, false, f.action_indices)) ||
      (bad = c.get(ColumnId::kActionValues, DType::kFloat32, 3, false, f.action_values)) ||
      (bad = c.get(ColumnId::kRewards, DType::kFloat32, 2, true, f.rewards)) ||
      (bad = c.get(ColumnId::kTerminated, DType::kUInt8, 2, true, f.terminated)) ||
      (bad = c.get(ColumnId::kTruncated, DType::kUInt8, 2, true, f.truncated)) ||
      (bad = c.get(ColumnId::kLogProbs, DType::kFloat32, 2, false, f.log_probs)) ||
      (bad = c.get(ColumnId::kValues, DType::kFloat32, 2, false, f.values)) ||
      (bad = c.get(ColumnId::kBootstrapObs, DType::kFloat32, 2, true, f.bootstrap_obs)) ||
      (bad = c.get(ColumnId::kFinalObsIndex, DType::kInt32, 1, true, f.final_obs_index)) ||
      (bad = c.get(ColumnId::kFinalObs, DType::kFloat32, 2, true, f.final_obs)) ||
      (bad = c.get(ColumnId::kObsU8, DType::kUInt8, 3, false, f.obs_u8)) ||
      (bad = c.get(ColumnId::kBootstrapObsU8, DType::kUInt8, 2, false, f.bootstrap_obs_u8)) ||
      (bad = c.get(ColumnId::kFinalObsU8, DType::kUInt8, 2, false, f.final_obs_u8)) ||
      (bad = c.get(ColumnId::kInitialStates, DType::kFloat32, 2, false, f.initial_states)) ||
      (bad = c.get(ColumnId::kPolicyLane, DType::kInt64, 1, false, f.policy_lane)) ||
      (bad = c.get(ColumnId::kDroppedIndex, DType::kInt32, 1, false, f.dropped_index))) {
    return bad;
  }
  const bool any_bytes = f.obs_u8 || f.bootstrap_obs_u8 || f.final_obs_u8;
  if (any_bytes && !(f.obs_u8 && f.bootstrap_obs_u8 && f.final_obs_u8)) {
    return reject(RejectReason::kMissingColumn, "fragment has some of its byte columns but not all");
  }
  if (!f.action_indices && !f.action_values) return reject(RejectReason::kMissingColumn, "fragment has no actions");
  if (f.action_indices && f.action_values) return reject(RejectReason::kUnexpectedColumn, "fragment has both action kinds");
  return std::nullopt;
}

Check check_fragment_dims(const FragmentColumns& f, const DecodeLimits& limits) {
  const int64_t t = f.obs->dims[0], k = f.obs->dims[1], o = f.obs->dims[2];
  constexpr int64_t kInt32Max = std::numeric_limits<int32_t>::max();
  if (t > kInt32Max || k > kInt32Max || k > limits.max_envs) return reject(RejectReason::kLimitExceeded, "fragment T or K");
  if (o > limits.max_obs_size) return reject(RejectReason::kLimitExceeded, "fragment obs size");
  const int64_t n = t * k;  // both below 2^31: no overflow
  if (n > limits.max_transitions) return reject(RejectReason::kLimitExceeded, "fragment T * K");
  for (const ColumnDescriptor* d : {f.rewards, f.terminated, f.truncated, f.log_probs, f.values, f.action_indices}) {
    if (d && !dims_are(d, t, k)) return reject(RejectReason::kInconsistentDims, "column " + std::to_string(d->column) + " is not [T, K]");
  }
  if (f.action_values) {
    if (!dims_are(f.action_values, t, k)) return reject(RejectReason::kInconsistentDims, "action_values is not [T, K, A]");
    const int64_t a = f.action_values->dims[2];
    if (a < 1) return reject(RejectReason::kInconsistentDims, "action_values with A = 0");
    if (a > limits.max_action_size) return reject(RejectReason::kLimitExceeded, "fragment action size");
  }
  if (!dims_are(f.bootstrap_obs, k, o)) return reject(RejectReason::kInconsistentDims, "bootstrap_obs is not [K, O]");
  const int64_t d = f.final_obs_index->dims[0];
  if (d > n) return reject(RejectReason::kLimitExceeded, "more final observations than steps");
  if (!dims_are(f.final_obs, d, o)) return reject(RejectReason::kInconsistentDims, "final_obs is not [D, O]");
  if (f.dropped_index && (f.dropped_index->dims[0] < 1 || f.dropped_index->dims[0] > d)) {
    return reject(RejectReason::kInconsistentDims, "dropped_index is not [D'] with 1 <= D' <= D");  // sent only when any
  }
  if (f.action_indices && f.action_indices->ndim == 3) {
    const int64_t components = f.action_indices->dims[2];
    if (components < 1) return reject(RejectReason::kInconsistentDims, "action_indices with D = 0");
    if (components > limits.max_action_size) return reject(RejectReason::kLimitExceeded, "fragment action components");
  }
  if (f.obs_u8) {
    const int64_t b = f.obs_u8->dims[2];
    if (b < 1 || !dims_are(f.obs_u8, t, k)) return reject(RejectReason::kInconsistentDims, "obs_u8 is not [T, K, B]");
    if (b > limits.max_obs_size) return reject(RejectReason::kLimitExceeded, "fragment obs bytes");
    if (!dims_are(f.bootstrap_obs_u8, k, b)) return reject(RejectReason::kInconsistentDims, "bootstrap_obs_u8 is not [K, B]");
    if (!dims_are(f.final_obs_u8, d, b)) return reject(RejectReason::kInconsistentDims, "final_obs_u8 is not [D, B]");
  }
  if (f.initial_states) {
    // Sent only for a recurrent policy (S > 0): an empty [K, 0] column would be a second way to say "none".
    const int64_t s = f.initial_states->dims[1];
    if (f.initial_states->dims[0] != k || s < 1) {
      return reject(RejectReason::kInconsistentDims, "initial_states is [" + std::to_string(f.initial_states->dims[0]) +
                                                         ", " + std::to_string(s) + "], expected [K = " +
                                                         std::to_string(k) + ", S >= 1]");
    }
    if (s > limits.max_state_size) {
      return reject(RejectReason::kLimitExceeded, "initial_states S = " + std::to_string(s) + " over " +
                                                      std::to_string(limits.max_state_size));
    }
  }
  if (f.policy_lane && (f.policy_lane->dims[0] != 2 || k != 1)) {
    return reject(RejectReason::kInconsistentDims, "policy_lane is not [2] of a fragment with K = 1");
  }
  return std::nullopt;
}

Check check_fragment_values(const SampleBatch& b, const DecodeLimits& limits) {
  for (const std::vector<uint8_t>* flags : {&b.terminated, &b.truncated}) {
    for (uint8_t flag : *flags) {
      if (flag > 1) return reject(RejectReason::kValueOutOfRange, "terminated/truncated not 0 or 1");
    }
  }
  const int64_t n = b.num_transitions();
  for (int32_t index : b.final_obs_index) {
    if (index < 0 || index >= n) return reject(RejectReason::kValueOutOfRange, "final_obs_index out of range");
  }
  for (size_t j = 0; j < b.dropped_index.size(); ++j) {
    const int32_t index = b.dropped_index[j];
    if (index < 0 || index >= n || (j > 0 && index <= b.dropped_index[j - 1]) || !b.truncated[static_cast<size_t>(index)]) {
      return reject(RejectReason::kValueOutOfRange, "dropped_index is not increasing indices of truncated steps");
    }
  }
  const int64_t num_actions = limits.num_actions > 0 ? limits.num_actions : std::numeric_limits<int64_t>::max();
  for (int64_t action : b.action_indices) {
    if (action < 0 || action >= num_actions) return reject(RejectReason::kValueOutOfRange, "action index out of range");
  }
  return std::nullopt;
}

Check decode_fragment(const Columns& columns, const MessageInfo& info, const DecodeLimits& limits,
                      std::optional<Message>& out) {
  FragmentColumns f{};
  if (auto bad = check_fragment_schema(columns, f)) return bad;
  if (auto bad = check_fragment_dims(f, limits)) return bad;
  SampleBatch b;
  b.worker_id = info.sender_id;
  b.policy_version = info.policy_version;
  b.num_steps = static_cast<int32_t>(f.obs->dims[0]);
  b.num_envs = static_cast<int32_t>(f.obs->dims[1]);
  b.obs_size = f.obs->dims[2];
  b.action_size = f.action_values ? f.action_values->dims[2] : 0;
  b.action_components = f.action_indices && f.action_indices->ndim == 3 ? f.action_indices->dims[2] : 1;
  b.obs_byte_size = f.obs_u8 ? f.obs_u8->dims[2] : 0;
  b.state_size = f.initial_states ? f.initial_states->dims[1] : 0;
  columns.copy(f.obs, b.obs);
  if (f.obs_u8) {
    columns.copy(f.obs_u8, b.obs_u8);
    columns.copy(f.bootstrap_obs_u8, b.bootstrap_obs_u8);
    columns.copy(f.final_obs_u8, b.final_obs_u8);
  }
  if (f.action_indices) columns.copy(f.action_indices, b.action_indices);
  if (f.action_values) columns.copy(f.action_values, b.action_values);
  columns.copy(f.rewards, b.rewards);
  columns.copy(f.terminated, b.terminated);
  columns.copy(f.truncated, b.truncated);
  if (f.log_probs) columns.copy(f.log_probs, b.log_probs);
  if (f.values) columns.copy(f.values, b.values);
  columns.copy(f.bootstrap_obs, b.bootstrap_obs);
  columns.copy(f.final_obs_index, b.final_obs_index);
  columns.copy(f.final_obs, b.final_obs);
  if (f.initial_states) columns.copy(f.initial_states, b.initial_states);
  if (f.dropped_index) columns.copy(f.dropped_index, b.dropped_index);
  if (f.policy_lane) {
    std::vector<int64_t> policy_lane;
    columns.copy(f.policy_lane, policy_lane);
    constexpr int64_t kInt32Max = std::numeric_limits<int32_t>::max();
    if (policy_lane[0] < 0 || policy_lane[0] > kInt32Max || policy_lane[1] < 0 || policy_lane[1] > kInt32Max) {
      return reject(RejectReason::kValueOutOfRange, "policy_lane outside [0, 2^31)");
    }
    b.policy_index = static_cast<int32_t>(policy_lane[0]);
    b.lane = static_cast<int32_t>(policy_lane[1]);
  }
  if (auto bad = check_fragment_values(b, limits)) return bad;
  out = std::move(b);
  return std::nullopt;
}

Check decode_episode_stats(const Columns& columns, const DecodeLimits& limits, std::optional<Message>& out) {
  if (auto bad = columns.allow_only({ColumnId::kEpisodeReturns, ColumnId::kEpisodeLengths, ColumnId::kEpisodesDropped,
                                     ColumnId::kAgentReturns, ColumnId::kAgentPolicies, ColumnId::kEnvSteps,
                                     ColumnId::kPolicyAgentSteps})) {
    return bad;
  }
  const ColumnDescriptor *returns = nullptr, *lengths = nullptr, *dropped = nullptr, *agent_returns = nullptr,
                         *agent_policies = nullptr, *env_steps = nullptr, *agent_steps = nullptr;
  Check bad;
  if ((bad = columns.get(ColumnId::kEpisodeReturns, DType::kFloat64, 1, true, returns)) ||
      (bad = columns.get(ColumnId::kEpisodeLengths, DType::kInt32, 1, true, lengths)) ||
      (bad = columns.get(ColumnId::kEpisodesDropped, DType::kInt64, 1, false, dropped)) ||
      (bad = columns.get(ColumnId::kAgentReturns, DType::kFloat64, 2, false, agent_returns)) ||
      (bad = columns.get(ColumnId::kAgentPolicies, DType::kInt32, 2, false, agent_policies)) ||
      (bad = columns.get(ColumnId::kEnvSteps, DType::kInt64, 1, false, env_steps)) ||
      (bad = columns.get(ColumnId::kPolicyAgentSteps, DType::kInt64, 1, false, agent_steps))) {
    return bad;
  }
  if (returns->dims[0] != lengths->dims[0]) return reject(RejectReason::kInconsistentDims, "returns and lengths differ in E");
  if (returns->dims[0] > limits.max_episodes) return reject(RejectReason::kLimitExceeded, "too many episodes");
  EpisodeStats stats;
  columns.copy(returns, stats.returns);
  columns.copy(lengths, stats.lengths);
  for (int32_t length : stats.lengths) {
    if (length < 0) return reject(RejectReason::kValueOutOfRange, "negative episode length");
  }
  if (dropped) {
    if (dropped->dims[0] != 1) return reject(RejectReason::kInconsistentDims, "the dropped count is not one value");
    std::vector<int64_t> count;
    columns.copy(dropped, count);
    if (count[0] < 0 || count[0] > limits.max_episodes) {
      return reject(RejectReason::kValueOutOfRange, "dropped episode count out of range");
    }
    stats.dropped = count[0];
  }
  if (agent_steps && !env_steps) return reject(RejectReason::kMissingColumn, "policy_agent_steps without env_steps");
  if (agent_steps) {
    if (agent_steps->dims[0] > limits.max_envs) return reject(RejectReason::kLimitExceeded, "too many policies");
    columns.copy(agent_steps, stats.policy_agent_steps);
    for (int64_t steps : stats.policy_agent_steps) {
      if (steps < 0 || steps > limits.max_transitions) return reject(RejectReason::kValueOutOfRange, "policy agent steps out of range");
    }
  }
  if (agent_returns || agent_policies || env_steps) {
    if (!agent_returns || !agent_policies || !env_steps) {
      return reject(RejectReason::kMissingColumn, "agent_returns, agent_policies and env_steps go together");
    }
    if (env_steps->dims[0] != 1) return reject(RejectReason::kInconsistentDims, "env_steps is not [1]");
    stats.env_steps = columns.scalar<int64_t>(env_steps);
    if (stats.env_steps < 0 || stats.env_steps > limits.max_transitions) {
      return reject(RejectReason::kValueOutOfRange, "env_steps out of range");
    }
    const int64_t agents = agent_returns->dims[1];
    if (agent_returns->dims[0] != returns->dims[0] || agent_policies->dims[0] != returns->dims[0] ||
        agent_policies->dims[1] != agents || agents < 1) {
      return reject(RejectReason::kInconsistentDims, "agent_returns and agent_policies are not both [E, N >= 1]");
    }
    if (agents > limits.max_envs) return reject(RejectReason::kLimitExceeded, "too many agents");
    stats.num_agents = static_cast<int32_t>(agents);
    columns.copy(agent_returns, stats.agent_returns);
    columns.copy(agent_policies, stats.agent_policies);
    for (int32_t policy : stats.agent_policies) {
      if (policy < -1) return reject(RejectReason::kValueOutOfRange, "agent policy below -1");
    }
  }
  out = std::move(stats);
  return std::nullopt;
}

Check decode_weights(const Columns& columns, const MessageInfo& info, const DecodeLimits& limits,
                     std::optional<Message>& out) {
  if (auto bad = columns.allow_only({ColumnId::kParams, ColumnId::kObsMean, ColumnId::kObsVar, ColumnId::kObsCount,
                                     ColumnId::kEpsilon, ColumnId::kPolicyIndex, ColumnId::kScriptedRule})) {
    return bad;
  }
  const ColumnDescriptor *params = nullptr, *mean = nullptr, *var = nullptr, *count = nullptr, *epsilon = nullptr,
                         *policy = nullptr, *rule = nullptr;
  Check bad;
  if ((bad = columns.get(ColumnId::kParams, DType::kFloat32, 1, true, params)) ||
      (bad = columns.get(ColumnId::kObsMean, DType::kFloat64, 1, false, mean)) ||
      (bad = columns.get(ColumnId::kObsVar, DType::kFloat64, 1, false, var)) ||
      (bad = columns.get(ColumnId::kObsCount, DType::kFloat64, 1, false, count)) ||
      (bad = columns.get(ColumnId::kEpsilon, DType::kFloat64, 1, false, epsilon)) ||
      (bad = columns.get(ColumnId::kPolicyIndex, DType::kInt64, 1, false, policy)) ||
      (bad = columns.get(ColumnId::kScriptedRule, DType::kUInt8, 1, false, rule))) {
    return bad;
  }
  if (params->dims[0] > limits.max_params) return reject(RejectReason::kLimitExceeded, "too many params");
  const bool any_normalizer = mean || var || count;
  if (any_normalizer && !(mean && var && count)) {
    return reject(RejectReason::kMissingColumn, "obs normalizer needs mean, var and count together");
  }
  Weights weights;
  weights.policy_version = info.policy_version;
  if (any_normalizer) {
    if (mean->dims[0] != var->dims[0]) return reject(RejectReason::kInconsistentDims, "obs mean and var differ in O");
    if (mean->dims[0] > limits.max_obs_size) return reject(RejectReason::kLimitExceeded, "obs normalizer size");
    if (count->dims[0] != 1) return reject(RejectReason::kInconsistentDims, "obs count is not [1]");
    weights.obs_count = columns.scalar<double>(count);
    if (!std::isfinite(weights.obs_count) || weights.obs_count < 0) {
      return reject(RejectReason::kValueOutOfRange, "obs count not a finite count");
    }
    columns.copy(mean, weights.obs_mean);
    columns.copy(var, weights.obs_var);
  }
  if (epsilon) {
    if (epsilon->dims[0] != 1) return reject(RejectReason::kInconsistentDims, "epsilon is not [1]");
    const double value = columns.scalar<double>(epsilon);
    if (!(value >= 0 && value <= 1)) return reject(RejectReason::kValueOutOfRange, "epsilon outside [0, 1]");
    weights.epsilon = value;
  }
  if (policy) {
    if (policy->dims[0] != 1) return reject(RejectReason::kInconsistentDims, "policy_index is not [1]");
    const auto index = columns.scalar<int64_t>(policy);
    if (index < 0 || index > std::numeric_limits<int32_t>::max()) {
      return reject(RejectReason::kValueOutOfRange, "policy_index outside [0, 2^31)");
    }
    weights.policy_index = static_cast<int32_t>(index);
  }
  if (rule) {
    if (!policy || params->dims[0] != 0 || any_normalizer || rule->dims[0] < 1 ||
        rule->bytes > kMaxHelloStringBytes) {
      return reject(RejectReason::kInconsistentDims, "scripted_rule needs a policy, no params and 1 to 256 bytes");
    }
    std::vector<uint8_t> text;
    columns.copy(rule, text);
    weights.scripted.assign(text.begin(), text.end());
  }
  columns.copy(params, weights.params);
  out = std::move(weights);
  return std::nullopt;
}

Check decode_credit_grant(const Columns& columns, const DecodeLimits& limits, std::optional<Message>& out) {
  if (auto bad = columns.allow_only({ColumnId::kCredits})) return bad;
  const ColumnDescriptor* credits = nullptr;
  if (auto bad = columns.get(ColumnId::kCredits, DType::kInt64, 1, true, credits)) return bad;
  if (credits->dims[0] != 1) return reject(RejectReason::kInconsistentDims, "credits is not [1]");
  const auto value = columns.scalar<int64_t>(credits);
  if (value < 1 || value > limits.max_credits) return reject(RejectReason::kValueOutOfRange, "credits out of range");
  out = CreditGrant{value};
  return std::nullopt;
}

Check decode_welcome(const Columns& columns, const DecodeLimits& limits, std::optional<Message>& out) {
  if (auto bad = columns.allow_only({ColumnId::kWelcomeInfo})) return bad;
  const ColumnDescriptor* text_column = nullptr;
  if (auto bad = columns.get(ColumnId::kWelcomeInfo, DType::kUInt8, 1, true, text_column)) return bad;
  if (text_column->bytes > limits.max_welcome_bytes) return reject(RejectReason::kLimitExceeded, "welcome info too long");
  std::vector<uint8_t> text;
  columns.copy(text_column, text);
  const nlohmann::json parsed = nlohmann::json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded() || !parsed.is_object()) {
    return reject(RejectReason::kBadHelloInfo, "welcome info is not a JSON object");
  }
  out = Welcome{std::string(text.begin(), text.end())};
  return std::nullopt;
}

// A Stop, with the reason of a worker's goodbye when it carries stop_info.
Check decode_stop(const Columns& columns, std::optional<Message>& out) {
  if (auto bad = columns.allow_only({ColumnId::kStopInfo})) return bad;
  const ColumnDescriptor* text_column = nullptr;
  if (auto bad = columns.get(ColumnId::kStopInfo, DType::kUInt8, 1, false, text_column)) return bad;
  Stop stop;
  if (text_column) {
    if (text_column->bytes > kMaxStopInfoBytes) return reject(RejectReason::kLimitExceeded, "stop info too long");
    std::vector<uint8_t> text;
    columns.copy(text_column, text);
    stop.reason = parse_stop_info(std::string_view(reinterpret_cast<const char*>(text.data()), text.size()));
    if (!stop.reason) return reject(RejectReason::kBadHelloInfo, "stop info is not a valid stop reason");
  }
  out = std::move(stop);
  return std::nullopt;
}

Check decode_body(const Columns& columns, const MessageInfo& info, const DecodeLimits& limits,
                  std::optional<Message>& out) {
  switch (info.type) {
    case MessageType::kHello: return decode_hello(columns, info, limits, out);
    case MessageType::kHeartbeat:
      if (auto bad = decode_no_columns(columns)) return bad;
      out = Heartbeat{};
      return std::nullopt;
    case MessageType::kSampleFragment: return decode_fragment(columns, info, limits, out);
    case MessageType::kEpisodeStats: return decode_episode_stats(columns, limits, out);
    case MessageType::kWeights: return decode_weights(columns, info, limits, out);
    case MessageType::kCreditGrant: return decode_credit_grant(columns, limits, out);
    case MessageType::kStop: return decode_stop(columns, out);
    case MessageType::kWelcome: return decode_welcome(columns, limits, out);
    case MessageType::kJoin:
      if (auto bad = decode_no_columns(columns)) return bad;
      out = Join{};
      return std::nullopt;
  }
  return reject(RejectReason::kUnknownType, "type");
}

}  // namespace

DecodeResult decode_message(const std::vector<zmq::message_t>& frames, const DecodeLimits& limits,
                            RejectCounters* counters) {
  DecodeResult result;
  FrameLayout layout;
  Check bad;
  std::string detail;
  if (auto reason = inspect_frames(frames, limits, layout, &detail)) {
    bad = Rejection{*reason, std::move(detail)};
  } else {
    bad = decode_body(Columns(layout, frames), layout.info, limits, result.message);
  }
  result.info = layout.info;
  if (bad) {
    result.message.reset();
    result.reject = bad->reason;
    result.detail = std::move(bad->detail);
    if (counters) counters->record(bad->reason);
  }
  return result;
}

}  // namespace rlx
