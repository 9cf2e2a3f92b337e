#include "transport/sockets.h"

#include <unistd.h>

#include <algorithm>
#include <limits>
#include <stdexcept>

namespace rlx {

namespace {

using Clock = std::chrono::steady_clock;

// Waits until the socket has events or the deadline passes; true if it has them.
bool wait_for(zmq::socket_t& socket, short events, Clock::time_point deadline) {
  zmq::pollitem_t item{socket.handle(), 0, events, 0};
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    const auto wait = std::max(left, std::chrono::milliseconds(0));
    if (zmq::poll(&item, 1, wait) > 0 && (item.revents & events)) return true;
    if (Clock::now() >= deadline) return false;
  }
}

}  // namespace

std::string local_host_name() {
  char name[256] = {};
  if (::gethostname(name, sizeof(name) - 1) != 0) return "unknown";
  return name;
}

std::string reachable_endpoint(const std::string& bound, const std::string& host) {
  for (const char* wildcard : {"tcp://0.0.0.0:", "tcp://[::]:", "tcp://*:"}) {
    const std::string prefix(wildcard);
    if (bound.rfind(prefix, 0) == 0) return "tcp://" + host + ":" + bound.substr(prefix.size());
  }
  return bound;
}

SocketOptions socket_options_for(const DecodeLimits& limits) {
  SocketOptions options;
  options.max_message_bytes = static_cast<int64_t>(
      std::min<uint64_t>(limits.max_message_bytes, static_cast<uint64_t>(std::numeric_limits<int64_t>::max())));
  return options;
}

zmq::socket_t make_socket(zmq::context_t& context, zmq::socket_type type, const SocketOptions& options) {
  zmq::socket_t socket(context, type);
  socket.set(zmq::sockopt::linger, options.linger_ms);
  socket.set(zmq::sockopt::sndhwm, options.send_hwm);
  socket.set(zmq::sockopt::rcvhwm, options.recv_hwm);
  socket.set(zmq::sockopt::maxmsgsize, options.max_message_bytes);
  socket.set(zmq::sockopt::ipv6, options.ipv6);
  return socket;
}

std::string bind_endpoint(zmq::socket_t& socket, const std::string& endpoint) {
  socket.bind(endpoint);
  return socket.get(zmq::sockopt::last_endpoint);
}

bool send_frames(zmq::socket_t& socket, std::vector<zmq::message_t>& frames, std::chrono::milliseconds timeout) {
  if (frames.empty()) throw std::invalid_argument("send_frames: no frames");
  const auto deadline = Clock::now() + timeout;
  const auto more = [&](size_t i) { return i + 1 < frames.size() ? zmq::send_flags::sndmore : zmq::send_flags::none; };
  // The first frame decides: once it is queued, ZeroMQ accepts the rest of the message.
  for (;;) {
    if (!wait_for(socket, ZMQ_POLLOUT, deadline)) return false;
    if (socket.send(frames[0], more(0) | zmq::send_flags::dontwait)) break;
  }
  for (size_t i = 1; i < frames.size(); ++i) {
    if (!socket.send(frames[i], more(i))) throw zmq::error_t();
  }
  frames.clear();
  return true;
}

std::optional<std::vector<zmq::message_t>> recv_frames(zmq::socket_t& socket, std::chrono::milliseconds timeout,
                                                       size_t max_frames) {
  const auto deadline = Clock::now() + timeout;
  std::vector<zmq::message_t> frames;
  zmq::message_t frame;
  for (;;) {
    if (!wait_for(socket, ZMQ_POLLIN, deadline)) return std::nullopt;
    if (socket.recv(frame, zmq::recv_flags::dontwait)) break;
  }
  // The rest of a multipart message has arrived with its first frame.
  bool more = frame.more();
  frames.push_back(std::move(frame));
  while (more) {
    zmq::message_t next;
    if (!socket.recv(next)) throw zmq::error_t();
    more = next.more();
    if (frames.size() <= max_frames) frames.push_back(std::move(next));
  }
  return frames;
}

std::string take_identity(std::vector<zmq::message_t>& frames) {
  if (frames.empty()) throw std::invalid_argument("take_identity: no frames");
  std::string identity = frames.front().to_string();
  frames.erase(frames.begin());
  return identity;
}

void prepend_identity(std::vector<zmq::message_t>& frames, const std::string& identity) {
  frames.insert(frames.begin(), zmq::message_t(identity.data(), identity.size()));
}

}  // namespace rlx
