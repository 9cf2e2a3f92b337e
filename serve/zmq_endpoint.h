// The ZeroMQ endpoint: a ROUTER socket taking the two-frame requests of docs/serve.md from
// DEALER or REQ clients (C++ programs), CURVE-authenticated as rlx's workers are when keys are given.
#pragma once

#include <atomic>
#include <deque>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <zmq.hpp>

#include "serve/serve_context.h"
#include "transport/curve.h"
#include "transport/zap_authenticator.h"

namespace rlx {

struct ZmqEndpointOptions {
  std::string endpoint = "tcp://127.0.0.1:5600";  // ":*" for any free port
  std::optional<CurveKeyPair> server_keys;         // CURVE: the server's keys
  std::vector<std::string> client_keys;            // CURVE: the clients allowed
  bool allow_remote = false;                       // without CURVE, a non-loopback address is refused unless set
  size_t max_message_bytes = size_t{1} << 20;
  int inline_lane = -1;  // the socket thread's inline lane (serve_context.h); -1: none
};

class ZmqEndpoint {
 public:
  // Binds (throws naming the endpoint when it cannot, or when it is not loopback and neither
  // CURVE nor allow_remote is given) and starts the socket's thread.
  ZmqEndpoint(ServeContext& context, ZmqEndpointOptions options);
  // Sends what is answered by then and closes.
  ~ZmqEndpoint();
  ZmqEndpoint(const ZmqEndpoint&) = delete;
  ZmqEndpoint& operator=(const ZmqEndpoint&) = delete;

  // The endpoint bound ("tcp://127.0.0.1:5600").
  const std::string& endpoint() const { return bound_; }
  // Requests accepted and not yet answered.
  size_t pending() const { return pending_.load(); }

 private:
  struct Outgoing {
    std::vector<std::string> envelope;  // the routing frames, through the empty delimiter of a REQ client
    std::string header, body;
  };
  void run();
  void handle(std::vector<zmq::message_t>& frames);
  void reply(std::vector<std::string> envelope, const ActReply& reply, const std::shared_ptr<const ServedModel>& model);
  void send(Outgoing& message);

  ServeContext& context_;
  ZmqEndpointOptions options_;
  zmq::context_t zmq_context_{1};
  std::unique_ptr<ZapAuthenticator> authenticator_;
  zmq::socket_t router_;
  std::string bound_;
  int wake_fd_ = -1;  // an eventfd: answers are waiting in outbox_
  std::mutex outbox_mutex_;
  std::deque<Outgoing> outbox_;
  std::atomic<size_t> pending_{0};
  std::atomic<bool> stopping_{false};
  std::thread thread_;
};

}  // namespace rlx
