// Typed wire messages. A sample fragment is a SampleBatch; a sender's id, the sequence
// number and the policy version travel in the header and are reported in MessageInfo.
#pragma once

#include <optional>

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "core/sample_batch.h"
#include "models/weights.h"
#include "transport/stop_reason.h"
#include "transport/wire_format.h"

namespace rlx {

// Worker -> learner, first message of a worker: who it is and what it steps.
struct Hello {
  uint64_t worker_id = 0;                       // header sender_id
  uint16_t protocol_version = kProtocolVersion; // header protocol_version
  std::string env_id;
  int64_t num_envs = 0;      // K
  int64_t obs_size = 0;      // O: floats per observation
  int64_t action_size = 0;   // A for Box actions; 0 for indexed ones
  int64_t num_actions = 0;   // indexed actions: the sum of their categories (n for Discrete); 0 for Box
  int64_t obs_bytes = 0;     // B: bytes per observation (absent in an older worker's hello: 0)
  int64_t action_components = 1;  // D: indices per action (absent in an older worker's hello: 1)
  int64_t pid = 0;
  std::string hostname;
};

// Either direction: "I am alive"; carries only the header.
struct Heartbeat {};

// Worker -> learner: episodes that ended since the last report.
struct EpisodeStats {
  std::vector<double> returns;   // [E]
  std::vector<int32_t> lengths;  // [E]
  int64_t dropped = 0;           // episodes ended by a non-finite step (drop_nonfinite_episodes), not in returns
  // A multi-agent worker's episodes: N agents each (0: a single-agent worker, both empty).
  int32_t num_agents = 0;
  std::vector<double> agent_returns;    // [E, N] each agent's return
  std::vector<int32_t> agent_policies;  // [E, N] the policy that drove each agent; -1: it never entered
  int64_t env_steps = 0;                // multi-agent: env steps since the worker's last report
  std::vector<int64_t> policy_agent_steps;  // multi-agent: [P] agent steps since then, per policy (may be empty)
};

// Learner -> worker: the worker may send this many more fragments.
struct CreditGrant {
  int64_t credits = 0;
};

// Either direction: stop and disconnect. A worker's goodbye may say why it stops (a signal, or
// the failure it is about to exit with); a learner's Stop carries no reason.
struct Stop {
  std::optional<StopReason> reason;
};

// Learner -> worker, the answer to a heartbeat from a worker it does not know: how to set up
// (a JSON object; rollout/worker_setup.h gives its keys and checks them).
struct Welcome {
  std::string setup_json;
};

// Worker -> learner: "set me up" (answered with a Welcome); sent by a new or restarted worker
// and by one whose learner went quiet. Carries only the header.
struct Join {};

using Message = std::variant<Hello, Heartbeat, SampleBatch, EpisodeStats, Weights, CreditGrant, Stop, Welcome, Join>;

// The header fields of a decoded message.
struct MessageInfo {
  MessageType type = MessageType::kHeartbeat;
  uint64_t sender_id = 0;
  uint64_t sequence = 0;
  uint64_t policy_version = 0;
  uint64_t payload_bytes = 0;
};

}  // namespace rlx
