#include "serve/zmq_framing.h"

#include <cstring>

#include "serve/request_decoding.h"

namespace rlx {

namespace {

constexpr size_t kActFixed = 4 + 2 + 2 + 4 + 2 + 2;
constexpr size_t kReplySize = 4 + 2 + 2 + 4 + 8;

template <typename T>
void put(std::string& out, T value) {
  char bytes[sizeof(T)];
  std::memcpy(bytes, &value, sizeof(T));  // little-endian on x86-64
  out.append(bytes, sizeof(T));
}

template <typename T>
T get(std::string_view frame, size_t offset) {
  T value;
  std::memcpy(&value, frame.data() + offset, sizeof(T));
  return value;
}

}  // namespace

std::string encode_act_header(const ZmqActHeader& header) {
  std::string out = "RLXQ";
  put<uint16_t>(out, kServeZmqProtocol);
  put<uint16_t>(out, header.flags);
  put<uint32_t>(out, header.rows);
  put<uint16_t>(out, static_cast<uint16_t>(header.policy.size()));
  put<uint16_t>(out, static_cast<uint16_t>(header.session.size()));
  return out + header.policy + header.session;
}

ZmqActHeader decode_act_header(std::string_view frame) {
  if (frame.size() < kActFixed || frame.substr(0, 4) != "RLXQ") {
    throw RequestError(400, "the first frame is not an rlx serve request header (\"RLXQ\", " + std::to_string(kActFixed) + "+ bytes)", "header");
  }
  const auto protocol = get<uint16_t>(frame, 4);
  if (protocol != kServeZmqProtocol) {
    throw RequestError(400, "protocol " + std::to_string(protocol) + " is not this server's (" + std::to_string(kServeZmqProtocol) + ")",
                       "header.protocol");
  }
  ZmqActHeader header;
  header.flags = get<uint16_t>(frame, 6);
  if ((header.flags & ~(kServeFlagDeterministic | kServeFlagMasks | kServeFlagEpisodeStart)) != 0) {
    throw RequestError(400, "unknown flags " + std::to_string(header.flags), "header.flags");
  }
  header.rows = get<uint32_t>(frame, 8);
  const auto name_size = get<uint16_t>(frame, 12);
  const auto session_size = get<uint16_t>(frame, 14);
  if (frame.size() != kActFixed + name_size + session_size) {
    throw RequestError(400, "the header's " + std::to_string(frame.size()) + " bytes do not hold the name and session lengths it gives",
                       "header");
  }
  header.policy = std::string(frame.substr(kActFixed, name_size));
  header.session = std::string(frame.substr(kActFixed + name_size, session_size));
  return header;
}

std::string encode_reply_header(const ZmqReplyHeader& header) {
  std::string out = "RLXA";
  put<uint16_t>(out, kServeZmqProtocol);
  put<uint16_t>(out, header.status);
  put<uint32_t>(out, header.rows);
  put<uint64_t>(out, header.version);
  return out;
}

std::optional<ZmqReplyHeader> decode_reply_header(std::string_view frame) {
  if (frame.size() != kReplySize || frame.substr(0, 4) != "RLXA" || get<uint16_t>(frame, 4) != kServeZmqProtocol) return std::nullopt;
  ZmqReplyHeader header;
  header.status = get<uint16_t>(frame, 6);
  header.rows = get<uint32_t>(frame, 8);
  header.version = get<uint64_t>(frame, 12);
  return header;
}

}  // namespace rlx
