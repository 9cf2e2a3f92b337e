// Minimal POST /act server on CivetWeb 1.15 (C API): one master thread
// accepts, a fixed set of worker threads each serve one connection at a
// time (its default count), HTTP/1.1 keep-alive switched on.
// Usage: civetweb_server PORT
#include <civetweb.h>
#include <nlohmann/json.hpp>

#include <csignal>
#include <cstring>
#include <iostream>
#include <string>
#include <unistd.h>

namespace {

volatile std::sig_atomic_t stop = 0;

void reply(mg_connection* conn, int status, const std::string& body) {
  if (status == 200) {
    mg_send_http_ok(conn, "application/json", static_cast<long long>(body.size()));
  } else {
    mg_response_header_start(conn, status);
    mg_response_header_add(conn, "Content-Type", "application/json", -1);
    mg_response_header_add(conn, "Content-Length", std::to_string(body.size()).c_str(), -1);
    mg_response_header_send(conn);
  }
  mg_write(conn, body.data(), body.size());
}

int act(mg_connection* conn, void* /*cbdata*/) {
  const mg_request_info* info = mg_get_request_info(conn);
  if (std::strcmp(info->request_method, "POST") != 0) {
    reply(conn, 405, R"({"error":"POST only"})");
    return 405;
  }
  std::string body;
  char buf[4096];
  for (int n; (n = mg_read(conn, buf, sizeof buf)) > 0;) body.append(buf, n);

  auto obs = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (obs.is_discarded() || !obs.contains("observation") || !obs["observation"].is_array()) {
    reply(conn, 400, R"({"error":"bad observation"})");
    return 400;
  }
  reply(conn, 200, R"({"action":1,"version":1})");
  return 200;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: civetweb_server PORT\n";
    return 2;
  }
  const std::string ports = std::string("127.0.0.1:") + argv[1];
  const char* options[] = {"listening_ports", ports.c_str(),
                           "enable_keep_alive", "yes",
                           // Off by default; without it Nagle plus delayed ACK
                           // hold every reply about 40 ms (see README.md).
                           "tcp_nodelay", "1",
                           nullptr};

  mg_init_library(0);
  mg_callbacks callbacks{};
  mg_context* ctx = mg_start(&callbacks, nullptr, options);
  if (ctx == nullptr) {
    std::cerr << "civetweb_server: cannot listen on " << ports << "\n";
    return 1;
  }
  mg_set_request_handler(ctx, "/act", act, nullptr);

  std::signal(SIGINT, [](int) { stop = 1; });
  std::signal(SIGTERM, [](int) { stop = 1; });
  while (!stop) pause();
  mg_stop(ctx);
  mg_exit_library();
}
