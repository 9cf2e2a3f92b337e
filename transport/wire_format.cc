#include "transport/wire_format.h"

namespace rlx {

const char* message_type_name(MessageType type) {
  switch (type) {
    case MessageType::kHello: return "hello";
    case MessageType::kHeartbeat: return "heartbeat";
    case MessageType::kSampleFragment: return "sample_fragment";
    case MessageType::kEpisodeStats: return "episode_stats";
    case MessageType::kWeights: return "weights";
    case MessageType::kCreditGrant: return "credit_grant";
    case MessageType::kStop: return "stop";
    case MessageType::kWelcome: return "welcome";
    case MessageType::kJoin: return "join";
  }
  return "unknown";
}

const char* dtype_name(uint8_t dtype) {
  switch (static_cast<DType>(dtype)) {
    case DType::kUInt8: return "uint8";
    case DType::kInt32: return "int32";
    case DType::kInt64: return "int64";
    case DType::kFloat32: return "float32";
    case DType::kFloat64: return "float64";
  }
  return "unknown";
}

const char* column_id_name(ColumnId id) {
  switch (id) {
    case ColumnId::kObs: return "obs";
    case ColumnId::kActionIndices: return "action_indices";
    case ColumnId::kActionValues: return "action_values";
    case ColumnId::kRewards: return "rewards";
    case ColumnId::kTerminated: return "terminated";
    case ColumnId::kTruncated: return "truncated";
    case ColumnId::kLogProbs: return "log_probs";
    case ColumnId::kValues: return "values";
    case ColumnId::kBootstrapObs: return "bootstrap_obs";
    case ColumnId::kFinalObsIndex: return "final_obs_index";
    case ColumnId::kFinalObs: return "final_obs";
    case ColumnId::kObsU8: return "obs_u8";
    case ColumnId::kBootstrapObsU8: return "bootstrap_obs_u8";
    case ColumnId::kFinalObsU8: return "final_obs_u8";
    case ColumnId::kInitialStates: return "initial_states";
    case ColumnId::kPolicyLane: return "policy_lane";
    case ColumnId::kDroppedIndex: return "dropped_index";
    case ColumnId::kAgentReturns: return "agent_returns";
    case ColumnId::kAgentPolicies: return "agent_policies";
    case ColumnId::kEnvSteps: return "env_steps";
    case ColumnId::kPolicyAgentSteps: return "policy_agent_steps";
    case ColumnId::kPolicyIndex: return "policy_index";
    case ColumnId::kScriptedRule: return "scripted_rule";
    case ColumnId::kHelloInfo: return "hello_info";
    case ColumnId::kWelcomeInfo: return "welcome_info";
    case ColumnId::kStopInfo: return "stop_info";
    case ColumnId::kEpisodeReturns: return "episode_returns";
    case ColumnId::kEpisodeLengths: return "episode_lengths";
    case ColumnId::kEpisodesDropped: return "episodes_dropped";
    case ColumnId::kParams: return "params";
    case ColumnId::kObsMean: return "obs_mean";
    case ColumnId::kObsVar: return "obs_var";
    case ColumnId::kObsCount: return "obs_count";
    case ColumnId::kEpsilon: return "epsilon";
    case ColumnId::kCredits: return "credits";
  }
  return "unknown";
}

}  // namespace rlx
