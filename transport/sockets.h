// RAII socket helpers: sockets made with the project's safety options, binding to ephemeral
// ports, and multipart send/receive bounded by a timeout. Errors other than a timeout are
// thrown as zmq::error_t.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <zmq.hpp>

#include "transport/decode.h"

namespace rlx {

struct SocketOptions {
  int send_hwm = 1000;                               // messages queued per peer before send blocks or drops
  int recv_hwm = 1000;
  int64_t max_message_bytes = int64_t{256} << 20;    // ZMQ_MAXMSGSIZE: libzmq drops a peer sending a bigger frame
  bool ipv6 = false;
  int linger_ms = 0;                                 // pending messages are dropped at close
};

// SocketOptions whose frame size bound is the decoder's whole-message bound.
SocketOptions socket_options_for(const DecodeLimits& limits);

// A socket of the given type with options applied; throws zmq::error_t.
zmq::socket_t make_socket(zmq::context_t& context, zmq::socket_type type, const SocketOptions& options = {});

// Binds (endpoint may end in ":*" for an ephemeral port) and returns the endpoint actually bound.
std::string bind_endpoint(zmq::socket_t& socket, const std::string& endpoint);

// Sends frames as one multipart message (frames are consumed on success); false if the socket
// could not take it within timeout, frames then left intact.
bool send_frames(zmq::socket_t& socket, std::vector<zmq::message_t>& frames, std::chrono::milliseconds timeout);

// Receives one multipart message, or nothing if none arrives within timeout. Frames past
// max_frames are discarded, keeping max_frames + 1 so that a decoder sees too many.
std::optional<std::vector<zmq::message_t>> recv_frames(zmq::socket_t& socket, std::chrono::milliseconds timeout,
                                                       size_t max_frames = kMaxColumns + 2);

// This machine's host name for hellos, or "unknown" when it cannot be read.
std::string local_host_name();

// The endpoint other hosts reach a bound one at: a wildcard address (tcp://0.0.0.0:P,
// tcp://[::]:P, tcp://*:P) becomes tcp://HOST:P; any other endpoint is returned as it is.
std::string reachable_endpoint(const std::string& bound, const std::string& host);

// Removes and returns frame 0 (the ROUTER identity of the peer); throws std::invalid_argument if frames is empty.
std::string take_identity(std::vector<zmq::message_t>& frames);

// Prepends a ROUTER identity so that send_frames on a ROUTER reaches that peer.
void prepend_identity(std::vector<zmq::message_t>& frames, const std::string& identity);

}  // namespace rlx
