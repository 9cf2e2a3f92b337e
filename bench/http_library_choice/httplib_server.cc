// Minimal POST /act server on cpp-httplib 0.11: blocking sockets, one
// accept thread plus its default thread pool (each pool thread serves one
// connection at a time), HTTP/1.1 keep-alive on by default (at most 5
// requests per connection, then it closes: the library's default).
// Usage: httplib_server PORT
#include <httplib.h>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <iostream>

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: httplib_server PORT\n";
    return 2;
  }
  const int port = std::atoi(argv[1]);

  httplib::Server server;
  // Off by default: the reply leaves in two writes, and Nagle plus delayed
  // ACK then holds every reply about 40 ms (measured, see README.md).
  server.set_tcp_nodelay(true);
  server.Post("/act", [](const httplib::Request& req, httplib::Response& res) {
    auto obs = nlohmann::json::parse(req.body, nullptr, /*allow_exceptions=*/false);
    if (obs.is_discarded() || !obs.contains("observation") || !obs["observation"].is_array()) {
      res.status = 400;
      res.set_content(R"({"error":"bad observation"})", "application/json");
      return;
    }
    res.set_content(R"({"action":1,"version":1})", "application/json");
  });

  if (!server.listen("127.0.0.1", port)) {
    std::cerr << "httplib_server: cannot listen on port " << port << "\n";
    return 1;
  }
}
