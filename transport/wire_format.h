// The rlx wire format: frame 0 is a fixed little-endian header followed by column
// descriptors; frames 1..n carry the raw bytes of one column each, in descriptor order.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace rlx {

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "the rlx wire format sends raw little-endian columns; big-endian hosts are not supported");

constexpr uint32_t kWireMagic = 0x31584C52;  // the bytes "RLX1"
constexpr uint16_t kProtocolVersion = 1;
constexpr uint32_t kMaxColumnDims = 4;
constexpr size_t kMaxHelloInfoBytes = 4096;    // hello JSON text, the default decode bound
constexpr size_t kMaxHelloStringBytes = 256;   // env_id and hostname
constexpr size_t kMaxWelcomeInfoBytes = 16384; // welcome JSON text (a worker setup)
constexpr int64_t kMaxCredits = int64_t{1} << 20;  // of one credit grant, the default decode bound

enum class MessageType : uint16_t {
  kHello = 1,
  kHeartbeat = 2,
  kSampleFragment = 3,
  kEpisodeStats = 4,
  kWeights = 5,
  kCreditGrant = 6,
  kStop = 7,
  kWelcome = 8,
  kJoin = 9,
};

enum class DType : uint8_t { kUInt8 = 1, kInt32 = 2, kInt64 = 3, kFloat32 = 4, kFloat64 = 5 };

// Column ids are unique within a message; which ones a type carries is fixed by its codec.
enum class ColumnId : uint16_t {
  kObs = 1,
  kActionIndices = 2,
  kActionValues = 3,
  kRewards = 4,
  kTerminated = 5,
  kTruncated = 6,
  kLogProbs = 7,
  kValues = 8,
  kBootstrapObs = 9,
  kFinalObsIndex = 10,
  kFinalObs = 11,
  kObsU8 = 12,           // [T, K, B] the observations' bytes (uint8 leaves, action mask), when B > 0
  kBootstrapObsU8 = 13,  // [K, B]
  kFinalObsU8 = 14,      // [D, B]
  kInitialStates = 15,   // [K, S] float32: a recurrent policy's state before step 0, when S > 0
  kPolicyLane = 16,      // [2] int64: a multi-agent fragment's policy (index in the run's map) and lane
  kDroppedIndex = 17,    // [D'] int32: steps ending an episode dropped for a non-finite env output, when any
  kHelloInfo = 20,
  kWelcomeInfo = 21,
  kStopInfo = 22,        // [n] uint8: a worker's stop_info JSON (transport/stop_reason.h), in its goodbye
  kEpisodeReturns = 30,
  kEpisodeLengths = 31,
  kEpisodesDropped = 32,
  kAgentReturns = 33,    // [E, N] float64: a multi-agent worker's episodes, each agent's return
  kAgentPolicies = 34,   // [E, N] int32: the policy that drove each agent in each episode (-1: never entered)
  kEnvSteps = 35,        // [1] int64: a multi-agent worker's env steps since its last report
  kPolicyAgentSteps = 36,  // [P] int64: its agent steps since then, per policy (absent: none counted)
  kParams = 40,
  kObsMean = 41,
  kObsVar = 42,
  kObsCount = 43,
  kEpsilon = 44,
  kPolicyIndex = 45,     // [1] int64: the multi-agent policy these weights are for
  kScriptedRule = 46,    // [n] uint8: instead of weights, the scripted rule a frozen policy plays from now on
  kCredits = 50,
};

// Frame 0 begins with this; every field little-endian, no padding.
struct WireHeader {
  uint32_t magic;
  uint16_t protocol_version;
  uint16_t type;
  uint64_t sender_id;
  uint64_t sequence;
  uint64_t policy_version;
  uint32_t num_columns;
  uint32_t flags;          // reserved, must be 0
  uint64_t payload_bytes;  // sum of the column descriptors' bytes
};
static_assert(sizeof(WireHeader) == 48, "WireHeader layout is part of the protocol");
static_assert(std::is_trivially_copyable_v<WireHeader>);

// Follows the header in frame 0, one per column frame.
struct ColumnDescriptor {
  uint16_t column;
  uint8_t dtype;
  uint8_t ndim;
  uint32_t reserved;  // must be 0
  int64_t dims[kMaxColumnDims];  // dims[i] for i >= ndim must be 0
  uint64_t bytes;     // product(dims[0..ndim)) * dtype_size(dtype)
};
static_assert(sizeof(ColumnDescriptor) == 48, "ColumnDescriptor layout is part of the protocol");
static_assert(std::is_trivially_copyable_v<ColumnDescriptor>);

// Bytes of one element of dtype; 0 for a value that names no dtype.
constexpr size_t dtype_size(uint8_t dtype) {
  switch (static_cast<DType>(dtype)) {
    case DType::kUInt8: return 1;
    case DType::kInt32: return 4;
    case DType::kInt64: return 8;
    case DType::kFloat32: return 4;
    case DType::kFloat64: return 8;
  }
  return 0;
}

// Short lowercase name of a message type ("sample_fragment"), "unknown" otherwise.
const char* message_type_name(MessageType type);

// Name of a dtype ("float32"), "unknown" for a value that names none.
const char* dtype_name(uint8_t dtype);

// snake_case name of a column ("initial_states"), "unknown" for a value that names none.
const char* column_id_name(ColumnId id);

}  // namespace rlx
