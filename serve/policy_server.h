// `rlx serve`: the policies, the inference pool, the HTTP and ZeroMQ endpoints and the trial
// watcher, run until a stop signal, then drained: no new connection or request is accepted,
// every request accepted is answered, and run() returns.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "serve/http_server.h"
#include "serve/serve_context.h"
#include "serve/zmq_endpoint.h"

namespace rlx {

// One MODEL argument: the name it is served under and where its versions come from.
struct ServedSource {
  std::string name;
  ModelSource source;
};

struct ServeOptions {
  HttpServerOptions http;
  std::optional<ZmqEndpointOptions> zmq;  // unset: no ZeroMQ endpoint
  BatchingOptions batching;
  RequestLimits limits;
  PolicySlotOptions slot;                 // its threads are the batching threads
  // How often trial directories are checked for a newer checkpoint; 0: never (POST reload only).
  std::chrono::milliseconds watch_interval{std::chrono::seconds(2)};
  std::chrono::seconds drain_timeout{30};  // the longest a drain waits for answers to go out
};

class PolicyServer {
 public:
  // Loads every policy (throws ConfigError naming the one that cannot be served), binds the endpoints and
  // starts answering.
  PolicyServer(const std::vector<ServedSource>& sources, const CheckpointExporter& exporter, ServeOptions options);
  ~PolicyServer();
  PolicyServer(const PolicyServer&) = delete;
  PolicyServer& operator=(const PolicyServer&) = delete;

  // Serves until `should_stop` returns true (checked every few milliseconds; e.g. a stop signal,
  // core/stop_signal.h), watching trial directories, then drains. Returns the requests the drain
  // could not answer within drain_timeout (0 in a clean drain).
  size_t run(const std::function<bool()>& should_stop);

  int http_port() const { return http_->port(); }
  // Open HTTP connections now.
  size_t http_connections() const { return http_->connections(); }
  // The ZeroMQ endpoint bound, "" without one.
  std::string zmq_endpoint() const { return zmq_ ? zmq_->endpoint() : ""; }
  ServeContext& context() { return *context_; }

 private:
  size_t drain();

  ServeOptions options_;
  std::unique_ptr<ServeContext> context_;
  std::unique_ptr<HttpServer> http_;
  std::unique_ptr<ZmqEndpoint> zmq_;
};

}  // namespace rlx
