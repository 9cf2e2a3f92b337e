#include "transport/encode.h"

#include <cmath>
#include <stdexcept>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "transport/frame_builder.h"

namespace rlx {

namespace {

void require(bool ok, const std::string& what) {
  if (!ok) throw std::invalid_argument(what);
}

}  // namespace

std::vector<zmq::message_t> encode_hello(const Hello& hello, uint64_t sequence) {
  require(!hello.env_id.empty() && hello.env_id.size() <= kMaxHelloStringBytes, "Hello env_id must be 1..256 bytes");
  require(hello.hostname.size() <= kMaxHelloStringBytes, "Hello hostname must be at most 256 bytes");
  require(hello.num_envs >= 1, "Hello num_envs must be >= 1");
  require(hello.obs_size >= 0 && hello.action_size >= 0 && hello.pid >= 0, "Hello sizes and pid must be >= 0");
  require(hello.action_size == 0 ? hello.num_actions >= 1 : hello.num_actions == 0,
          "Hello num_actions must be >= 1 for Discrete actions (action_size 0) and 0 for Box actions");
  require(hello.obs_bytes >= 0 && (hello.action_size == 0 ? hello.action_components >= 1 : hello.action_components == 1),
          "Hello obs_bytes must be >= 0 and action_components >= 1 (1 for Box actions)");
  const nlohmann::json info = {{"env_id", hello.env_id},     {"num_envs", hello.num_envs},
                               {"obs_size", hello.obs_size}, {"action_size", hello.action_size},
                               {"num_actions", hello.num_actions}, {"pid", hello.pid},
                               {"hostname", hello.hostname}, {"obs_bytes", hello.obs_bytes},
                               {"action_components", hello.action_components}};
  // Strict UTF-8: invalid bytes in a string are misuse and throw json's type_error (a std::exception).
  const std::string text = info.dump();
  require(text.size() <= kMaxHelloInfoBytes, "Hello info exceeds 4096 bytes");
  FrameBuilder builder(MessageType::kHello, hello.worker_id, sequence, 0);
  builder.add_copied(ColumnId::kHelloInfo, DType::kUInt8, {static_cast<int64_t>(text.size())}, text.data(),
                     text.size());
  return builder.finish();
}

std::vector<zmq::message_t> encode_heartbeat(uint64_t sender_id, uint64_t sequence) {
  return FrameBuilder(MessageType::kHeartbeat, sender_id, sequence, 0).finish();
}

std::vector<zmq::message_t> encode_sample_fragment(std::shared_ptr<const SampleBatch> batch, uint64_t sequence) {
  require(batch != nullptr, "encode_sample_fragment: null batch");
  const SampleBatch& b = *batch;
  b.validate();
  for (const std::vector<uint8_t>* flags : {&b.terminated, &b.truncated}) {
    for (uint8_t flag : *flags) require(flag <= 1, "SampleBatch terminated/truncated must hold 0 or 1");
  }
  for (int64_t action : b.action_indices) require(action >= 0, "SampleBatch action index is negative");
  const std::shared_ptr<const void> owner = batch;
  const int64_t t = b.num_steps, k = b.num_envs, o = b.obs_size, a = b.action_size, bytes = b.obs_byte_size;
  const auto d = static_cast<int64_t>(b.final_obs_index.size());
  FrameBuilder builder(MessageType::kSampleFragment, b.worker_id, sequence, b.policy_version);
  builder.add_shared(ColumnId::kObs, {t, k, o}, b.obs, owner);
  if (bytes > 0) {
    builder.add_shared(ColumnId::kObsU8, {t, k, bytes}, b.obs_u8, owner);
    builder.add_shared(ColumnId::kBootstrapObsU8, {k, bytes}, b.bootstrap_obs_u8, owner);
    builder.add_shared(ColumnId::kFinalObsU8, {d, bytes}, b.final_obs_u8, owner);
  }
  if (b.discrete() && b.action_components == 1) {
    builder.add_shared(ColumnId::kActionIndices, {t, k}, b.action_indices, owner);  // the form before MultiDiscrete
  } else if (b.discrete()) {
    builder.add_shared(ColumnId::kActionIndices, {t, k, b.action_components}, b.action_indices, owner);
  } else {
    builder.add_shared(ColumnId::kActionValues, {t, k, a}, b.action_values, owner);
  }
  builder.add_shared(ColumnId::kRewards, {t, k}, b.rewards, owner);
  builder.add_shared(ColumnId::kTerminated, {t, k}, b.terminated, owner);
  builder.add_shared(ColumnId::kTruncated, {t, k}, b.truncated, owner);
  if (!b.log_probs.empty()) builder.add_shared(ColumnId::kLogProbs, {t, k}, b.log_probs, owner);
  if (!b.values.empty()) builder.add_shared(ColumnId::kValues, {t, k}, b.values, owner);
  builder.add_shared(ColumnId::kBootstrapObs, {k, o}, b.bootstrap_obs, owner);
  builder.add_shared(ColumnId::kFinalObsIndex, {d}, b.final_obs_index, owner);
  builder.add_shared(ColumnId::kFinalObs, {d, o}, b.final_obs, owner);
  if (b.state_size > 0) builder.add_shared(ColumnId::kInitialStates, {k, b.state_size}, b.initial_states, owner);
  if (!b.dropped_index.empty()) {
    builder.add_shared(ColumnId::kDroppedIndex, {static_cast<int64_t>(b.dropped_index.size())}, b.dropped_index, owner);
  }
  if (b.policy_index >= 0 || b.lane >= 0) {
    require(b.policy_index >= 0 && b.lane >= 0 && k == 1, "a multi-agent fragment needs a policy, a lane and K = 1");
    const int64_t policy_lane[2] = {b.policy_index, b.lane};
    builder.add_copied(ColumnId::kPolicyLane, DType::kInt64, {2}, policy_lane, sizeof(policy_lane));
  }
  return builder.finish();
}

std::vector<zmq::message_t> encode_episode_stats(const EpisodeStats& stats, uint64_t sender_id, uint64_t sequence) {
  require(stats.returns.size() == stats.lengths.size(), "EpisodeStats returns and lengths differ in size");
  for (int32_t length : stats.lengths) require(length >= 0, "EpisodeStats length is negative");
  require(stats.dropped >= 0, "EpisodeStats dropped count is negative");
  const auto e = static_cast<int64_t>(stats.returns.size());
  FrameBuilder builder(MessageType::kEpisodeStats, sender_id, sequence, 0);
  builder.add_copied(ColumnId::kEpisodeReturns, {e}, stats.returns);
  builder.add_copied(ColumnId::kEpisodeLengths, {e}, stats.lengths);
  if (stats.dropped > 0) builder.add_copied(ColumnId::kEpisodesDropped, DType::kInt64, {1}, &stats.dropped, sizeof(int64_t));
  if (stats.num_agents > 0) {
    const size_t cells = stats.returns.size() * static_cast<size_t>(stats.num_agents);
    require(stats.agent_returns.size() == cells && stats.agent_policies.size() == cells,
            "EpisodeStats agent_returns and agent_policies must be [E, N]");
    for (int32_t policy : stats.agent_policies) require(policy >= -1, "EpisodeStats agent policy below -1");
    builder.add_copied(ColumnId::kAgentReturns, {e, stats.num_agents}, stats.agent_returns);
    builder.add_copied(ColumnId::kAgentPolicies, {e, stats.num_agents}, stats.agent_policies);
    require(stats.env_steps >= 0, "EpisodeStats env_steps is negative");
    builder.add_copied(ColumnId::kEnvSteps, DType::kInt64, {1}, &stats.env_steps, sizeof(int64_t));
    for (int64_t steps : stats.policy_agent_steps) require(steps >= 0, "EpisodeStats policy_agent_steps is negative");
    if (!stats.policy_agent_steps.empty()) {
      builder.add_copied(ColumnId::kPolicyAgentSteps, {static_cast<int64_t>(stats.policy_agent_steps.size())},
                         stats.policy_agent_steps);
    }
  } else {
    require(stats.agent_returns.empty() && stats.agent_policies.empty() && stats.env_steps == 0 &&
                stats.policy_agent_steps.empty(),
            "EpisodeStats agent columns or env_steps without num_agents");
  }
  return builder.finish();
}

std::vector<zmq::message_t> encode_weights(std::shared_ptr<const Weights> weights, uint64_t sender_id,
                                           uint64_t sequence) {
  require(weights != nullptr, "encode_weights: null weights");
  const Weights& w = *weights;
  require(w.obs_mean.size() == w.obs_var.size(), "Weights obs_mean and obs_var differ in size");
  require(w.obs_mean.empty() || (std::isfinite(w.obs_count) && w.obs_count >= 0),
          "Weights obs_count must be a finite count >= 0");
  const std::shared_ptr<const void> owner = weights;
  FrameBuilder builder(MessageType::kWeights, sender_id, sequence, w.policy_version);
  builder.add_shared(ColumnId::kParams, {static_cast<int64_t>(w.params.size())}, w.params, owner);
  if (!w.obs_mean.empty()) {
    const auto o = static_cast<int64_t>(w.obs_mean.size());
    builder.add_shared(ColumnId::kObsMean, {o}, w.obs_mean, owner);
    builder.add_shared(ColumnId::kObsVar, {o}, w.obs_var, owner);
    builder.add_copied(ColumnId::kObsCount, DType::kFloat64, {1}, &w.obs_count, sizeof(double));
  }
  if (w.epsilon) {
    require(*w.epsilon >= 0 && *w.epsilon <= 1, "Weights epsilon must be in [0, 1]");
    builder.add_copied(ColumnId::kEpsilon, DType::kFloat64, {1}, &*w.epsilon, sizeof(double));
  }
  if (w.policy_index >= 0) {
    const int64_t policy = w.policy_index;
    builder.add_copied(ColumnId::kPolicyIndex, DType::kInt64, {1}, &policy, sizeof(int64_t));
  }
  if (!w.scripted.empty()) {
    require(w.policy_index >= 0 && w.params.empty() && w.obs_mean.empty() && w.scripted.size() <= kMaxHelloStringBytes,
            "Weights of a scripted rule need a policy, no parameters and a rule of at most 256 bytes");
    builder.add_copied(ColumnId::kScriptedRule, DType::kUInt8, {static_cast<int64_t>(w.scripted.size())}, w.scripted.data(),
                       w.scripted.size());
  }
  return builder.finish();
}

std::vector<zmq::message_t> encode_credit_grant(const CreditGrant& grant, uint64_t sender_id, uint64_t sequence) {
  require(grant.credits >= 1 && grant.credits <= kMaxCredits, "CreditGrant credits must be in [1, 2^20]");
  FrameBuilder builder(MessageType::kCreditGrant, sender_id, sequence, 0);
  builder.add_copied(ColumnId::kCredits, DType::kInt64, {1}, &grant.credits, sizeof(int64_t));
  return builder.finish();
}

std::vector<zmq::message_t> encode_stop(uint64_t sender_id, uint64_t sequence) {
  return FrameBuilder(MessageType::kStop, sender_id, sequence, 0).finish();
}

std::vector<zmq::message_t> encode_stop(uint64_t sender_id, uint64_t sequence, const StopReason& reason) {
  const std::string info = stop_info_json(reason);
  FrameBuilder builder(MessageType::kStop, sender_id, sequence, 0);
  builder.add_copied(ColumnId::kStopInfo, DType::kUInt8, {static_cast<int64_t>(info.size())}, info.data(), info.size());
  return builder.finish();
}

std::vector<zmq::message_t> encode_welcome(const Welcome& welcome, uint64_t sender_id, uint64_t sequence) {
  require(welcome.setup_json.size() <= kMaxWelcomeInfoBytes, "Welcome info exceeds 16384 bytes");
  const nlohmann::json parsed = nlohmann::json::parse(welcome.setup_json, nullptr, /*allow_exceptions=*/false);
  require(!parsed.is_discarded() && parsed.is_object(), "Welcome info must be a JSON object");
  FrameBuilder builder(MessageType::kWelcome, sender_id, sequence, 0);
  builder.add_copied(ColumnId::kWelcomeInfo, DType::kUInt8, {static_cast<int64_t>(welcome.setup_json.size())},
                     welcome.setup_json.data(), welcome.setup_json.size());
  return builder.finish();
}

std::vector<zmq::message_t> encode_join(uint64_t sender_id, uint64_t sequence) {
  return FrameBuilder(MessageType::kJoin, sender_id, sequence, 0).finish();
}

}  // namespace rlx
