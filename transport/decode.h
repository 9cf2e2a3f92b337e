// Decoder: multipart frames -> a typed message, or a counted rejection. Every size, dtype,
// shape and count is checked against the header and DecodeLimits before any column data is
// read; bad input never throws, never reads outside the frames, never crashes.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <zmq.hpp>

#include "transport/messages.h"
#include "transport/reject.h"
#include "transport/wire_format.h"

namespace rlx {

// Hard cap on columns in one message, whatever DecodeLimits says.
constexpr uint32_t kMaxColumns = 32;

// What a receiver accepts; anything beyond is rejected as limit_exceeded or similar.
struct DecodeLimits {
  uint64_t max_message_bytes = uint64_t{256} << 20;  // all frames together
  uint32_t max_columns = 16;                         // capped at kMaxColumns
  uint32_t max_dims = kMaxColumnDims;                // per column, capped at kMaxColumnDims
  int64_t max_obs_size = int64_t{1} << 20;           // O
  int64_t max_action_size = int64_t{1} << 16;        // A
  int64_t max_envs = int64_t{1} << 16;               // K
  int64_t max_state_size = int64_t{1} << 20;         // S: recurrent state floats per env
  int64_t max_transitions = int64_t{1} << 24;        // T * K of one fragment
  int64_t max_num_actions = int64_t{1} << 20;        // Discrete n announced in a hello
  int64_t max_episodes = int64_t{1} << 20;           // E of one episode-stats message
  int64_t max_params = int64_t{1} << 28;             // P of one weights message
  int64_t max_credits = kMaxCredits;                 // of one credit grant
  size_t max_hello_bytes = kMaxHelloInfoBytes;       // hello JSON text
  size_t max_welcome_bytes = kMaxWelcomeInfoBytes;   // welcome JSON text
  int64_t num_actions = 0;  // when > 0, fragment action indices must lie in [0, num_actions)
};

// Outcome of decoding one message: exactly one of message and reject is set.
struct DecodeResult {
  MessageInfo info;                    // header fields, meaningful once the header parsed
  std::optional<Message> message;      // the accepted message
  std::optional<RejectReason> reject;  // why it was rejected
  std::string detail;                  // for a rejection: which check failed, for logs

  bool ok() const { return message.has_value(); }
};

// A message whose header, descriptors and frame sizes are consistent; column data unread.
struct FrameLayout {
  MessageInfo info;
  uint32_t num_columns = 0;
  std::array<ColumnDescriptor, kMaxColumns> columns{};  // [0, num_columns) valid; column i is frame i + 1
};

// Checks header, descriptors and frame sizes against limits without reading column data;
// on success fills layout and returns nothing, otherwise the reason (detail filled if non-null).
std::optional<RejectReason> inspect_frames(const std::vector<zmq::message_t>& frames, const DecodeLimits& limits,
                                           FrameLayout& layout, std::string* detail = nullptr);

// Decodes one message (column data copied into the typed message); counts a rejection in
// counters when given. Never throws on bad input.
DecodeResult decode_message(const std::vector<zmq::message_t>& frames, const DecodeLimits& limits = {},
                            RejectCounters* counters = nullptr);

}  // namespace rlx
