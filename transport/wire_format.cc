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

}  // namespace rlx
