// The HTTP API of docs/serve.md, apart from sockets: a request (method, path, the headers it
// reads, body) goes in, exactly one HttpAnswer comes back through `respond`, at once or from an
// inference thread.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "serve/serve_context.h"

namespace rlx {

struct HttpRequestView {
  std::string_view method;  // "GET", "POST", ...
  std::string_view target;  // the path, with any query
  std::string_view content_type;
  std::string_view authorization;
  std::string_view mask_header;           // X-Rlx-Action-Mask
  std::string_view deterministic_header;  // X-Rlx-Deterministic
  std::string_view session_header;        // X-Rlx-Session
  std::string_view episode_start_header;  // X-Rlx-Episode-Start
  std::string_view body;
  std::chrono::steady_clock::time_point received;
};

struct HttpAnswer {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;  // besides Content-Type and Content-Length
};

// The server's bearer token: empty when none is required.
struct HttpAuth {
  std::string token;
};

// Answers one request. `connections` is the number of open connections (for /metrics). respond
// is called exactly once; the request's views are read only before handle_http returns.
void handle_http(ServeContext& context, const HttpAuth& auth, const HttpRequestView& request, size_t connections,
                 const std::function<void(HttpAnswer&&)>& respond);

// An error answer: the JSON error object, with Retry-After on 503 and WWW-Authenticate on 401.
HttpAnswer http_error(int status, const std::string& message, const std::string& field = "");

}  // namespace rlx
