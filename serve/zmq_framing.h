// The ZeroMQ request and reply headers of docs/serve.md ("RLXQ" / "RLXA"), little-endian.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace rlx {

constexpr uint16_t kServeZmqProtocol = 1;
constexpr uint16_t kServeFlagDeterministic = 1;
constexpr uint16_t kServeFlagMasks = 2;
constexpr uint16_t kServeFlagEpisodeStart = 4;

struct ZmqActHeader {
  uint16_t flags = kServeFlagDeterministic;
  uint32_t rows = 0;
  std::string policy;
  std::string session;  // empty: none
};

// The header frame of a request.
std::string encode_act_header(const ZmqActHeader& header);
// Parses a request's header frame; throws RequestError (400) saying what is wrong (magic,
// protocol, lengths, unknown flags).
ZmqActHeader decode_act_header(std::string_view frame);

struct ZmqReplyHeader {
  uint16_t status = 200;
  uint32_t rows = 0;
  uint64_t version = 0;
};

// The header frame of a reply.
std::string encode_reply_header(const ZmqReplyHeader& header);
// Parses a reply's header frame (for clients); nullopt when it is not one.
std::optional<ZmqReplyHeader> decode_reply_header(std::string_view frame);

}  // namespace rlx
