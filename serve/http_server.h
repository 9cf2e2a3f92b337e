// The HTTP/1.1 endpoint on Boost.Beast: keep-alive connections served by an event loop (one or
// more io threads, no thread per connection), limits on header and body bytes and on open
// connections, and a drain that stops accepting and closes each connection once its answer is out.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "serve/http_routes.h"

namespace rlx {

struct HttpServerOptions {
  std::string host = "127.0.0.1";
  int port = 8000;  // 0: any free port (port() says which)
  int io_threads = 1;
  int first_inline_lane = 0;  // io thread t is inline lane first_inline_lane + t (serve_context.h)
  size_t max_body_bytes = size_t{1} << 20;
  size_t max_header_bytes = 8192;
  size_t max_connections = 1024;
  std::chrono::seconds idle_timeout{60};  // a keep-alive connection silent this long is closed
  HttpAuth auth;
};

class HttpServer {
 public:
  // Binds and listens (throws std::runtime_error naming host:port when it cannot) and starts the
  // io threads.
  HttpServer(ServeContext& context, HttpServerOptions options);
  // Closes everything and joins the io threads.
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // The port listened on.
  int port() const;
  // Stops accepting and closes idle connections; busy ones close after their answer.
  void start_draining();
  // Open connections now.
  size_t connections() const;

  struct Impl;  // the event loop and the connections (http_server.cc), which its connections see

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace rlx
