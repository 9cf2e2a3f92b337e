// The HTTP endpoint in process (serve/policy_server.h): actions equal rlx::Policy's, in JSON and
// binary; every refusal has its status and names its field; reloads swap atomically or are
// refused with the old version serving; a drain answers what it accepted.
#include <catch2/catch.hpp>

#include <atomic>
#include <cstring>
#include <future>
#include <thread>

#include <nlohmann/json.hpp>

#include "models/policy.h"
#include "serve/policy_server.h"
#include "serve_fixtures.h"

using rlx::test::http_request;
using rlx::test::HttpReply;
using rlx::test::TestPolicyKind;

namespace {

struct RunningServer {
  std::filesystem::path dir;
  std::unique_ptr<rlx::PolicyServer> server;
  std::atomic<bool> stop{false};
  std::future<size_t> ran;

  explicit RunningServer(const std::string& name, const std::function<void(rlx::ServeOptions&)>& configure = {},
                         TestPolicyKind kind = TestPolicyKind::kDiscrete)
      : dir(std::filesystem::temp_directory_path() / ("rlx_http_" + name + "_" + std::to_string(::getpid()))) {
    const std::string path = rlx::test::write_policy(rlx::test::test_policy_file(kind), dir / "cartpole.rlxp");
    rlx::ServeOptions options;
    options.http.port = 0;
    options.watch_interval = std::chrono::milliseconds(0);
    if (configure) configure(options);
    server = std::make_unique<rlx::PolicyServer>(std::vector<rlx::ServedSource>{{"cartpole", rlx::classify_model_source(path)}},
                                                 nullptr, options);
    ran = std::async(std::launch::async, [this] { return server->run([this] { return stop.load(); }); });
  }
  ~RunningServer() {
    stop = true;
    if (ran.valid()) ran.wait();
    server.reset();
    std::error_code ignored;
    std::filesystem::remove_all(dir, ignored);
  }
  int port() const { return server->http_port(); }
  HttpReply post(const std::string& path, const std::string& body, const std::map<std::string, std::string>& headers = {}) const {
    return http_request(port(), "POST", path, body, headers);
  }
};

std::string json_field(const HttpReply& reply) { return nlohmann::json::parse(reply.body).value("field", ""); }

}  // namespace

TEST_CASE("HTTP JSON and binary answers are the actions rlx::Policy gives", "[serve][http]") {
  RunningServer running("answers");
  rlx::Policy policy((running.dir / "cartpole.rlxp").string());
  const auto observations = rlx::test::test_observations(20);
  nlohmann::json batch = nlohmann::json::array();
  std::string binary;
  for (const auto& observation : observations) {
    const HttpReply reply = running.post("/v1/policies/cartpole/act", nlohmann::json{{"observation", observation}}.dump());
    REQUIRE(reply.status == 200);
    const nlohmann::json answer = nlohmann::json::parse(reply.body);
    CHECK(answer.at("action") == policy.act(observation).index);
    CHECK(answer.at("version") == 1);
    batch.push_back(observation);
    binary.append(reinterpret_cast<const char*>(observation.data()), observation.size() * sizeof(float));
  }
  const HttpReply many = running.post("/v1/policies/cartpole/act", nlohmann::json{{"observations", batch}}.dump());
  REQUIRE(many.status == 200);
  const HttpReply raw = running.post("/v1/policies/cartpole/act", binary, {{"Content-Type", "application/octet-stream"}});
  REQUIRE(raw.status == 200);
  CHECK(raw.headers.at("x-rlx-rows") == "20");
  REQUIRE(raw.body.size() == 20 * sizeof(int64_t));
  for (size_t i = 0; i < observations.size(); ++i) {
    int64_t action = 0;
    std::memcpy(&action, raw.body.data() + i * sizeof(int64_t), sizeof action);
    CHECK(action == policy.act(observations[i]).index);
    CHECK(nlohmann::json::parse(many.body).at("actions").at(i) == action);
  }
  // A mask that allows one action gets that action.
  const HttpReply masked = running.post("/v1/policies/cartpole/act",
                                        R"({"observation": [0.1, 0.2, 0.3, 0.4], "action_mask": [0, 0, 1]})");
  CHECK(nlohmann::json::parse(masked.body).at("action") == 2);

  const HttpReply listed = http_request(running.port(), "GET", "/v1/policies");
  const nlohmann::json entry = nlohmann::json::parse(listed.body).at("policies").at(0);
  CHECK(entry.at("name") == "cartpole");
  CHECK(entry.at("float_size") == 4);
  CHECK(entry.at("mask_size") == 3);
  CHECK(http_request(running.port(), "GET", "/healthz").status == 200);
  CHECK(http_request(running.port(), "GET", "/readyz").status == 200);
  const HttpReply metrics = http_request(running.port(), "GET", "/metrics");
  CHECK_THAT(metrics.body, Catch::Contains("rlx_serve_requests_total{policy=\"cartpole\",protocol=\"http_json\"} 22"));
  CHECK_THAT(metrics.body, Catch::Contains("rlx_serve_requests_total{policy=\"cartpole\",protocol=\"http_binary\"} 1"));
  CHECK_THAT(metrics.body, Catch::Contains("rlx_serve_model_version{policy=\"cartpole\"} 1"));
}

TEST_CASE("HTTP refusals carry their status and name what is wrong", "[serve][http][errors]") {
  RunningServer running("errors", [](rlx::ServeOptions& options) {
    options.http.max_body_bytes = 4096;
    options.http.max_header_bytes = 1024;
  });
  const std::string act = "/v1/policies/cartpole/act";
  HttpReply reply = running.post("/v1/policies/cartpol/act", "{}");
  CHECK(reply.status == 404);
  CHECK_THAT(reply.body, Catch::Contains("did you mean 'cartpole'"));
  CHECK(http_request(running.port(), "GET", act).status == 405);
  CHECK(http_request(running.port(), "GET", "/nowhere").status == 404);
  reply = running.post(act, "{\"observation\": [1, 2]}");
  CHECK(reply.status == 400);
  CHECK(json_field(reply) == "observation");
  CHECK(running.post(act, "x", {{"Content-Type", "text/plain"}}).status == 415);
  reply = running.post(act, std::string(5000, ' '));
  CHECK(reply.status == 413);
  reply = running.post(act, "{}", {{"X-Padding", std::string(2000, 'a')}});
  CHECK(reply.status == 431);
  reply = running.post(act, "abc", {{"Content-Type", "application/octet-stream"}});
  CHECK(reply.status == 400);
  CHECK(json_field(reply) == "body");
  // The server is still there and answers.
  CHECK(running.post(act, "{\"observation\": [1, 2, 3, 4]}").status == 200);
  const HttpReply metrics = http_request(running.port(), "GET", "/metrics");
  CHECK_THAT(metrics.body, Catch::Contains("rlx_serve_responses_total{code=\"400\"} 2"));
}

TEST_CASE("A bearer token guards everything but the health checks", "[serve][http][errors]") {
  RunningServer running("token", [](rlx::ServeOptions& options) { options.http.auth.token = "0123456789abcdef-secret"; });
  const std::string body = "{\"observation\": [1, 2, 3, 4]}";
  CHECK(running.post("/v1/policies/cartpole/act", body).status == 401);
  CHECK(running.post("/v1/policies/cartpole/act", body, {{"Authorization", "Bearer 0123456789abcdef-secreT"}}).status == 401);
  CHECK(running.post("/v1/policies/cartpole/act", body, {{"Authorization", "Bearer 0123456789abcdef-secret"}}).status == 200);
  CHECK(http_request(running.port(), "GET", "/metrics").status == 401);
  CHECK(http_request(running.port(), "GET", "/healthz").status == 200);
}

TEST_CASE("POST reload swaps in a rewritten file and refuses one of other spaces with the old version serving",
          "[serve][http][reload]") {
  RunningServer running("reload");
  const std::filesystem::path file = running.dir / "cartpole.rlxp";
  const std::string body = "{\"observation\": [0.5, -0.5, 0.25, 1.0]}";
  CHECK(running.post("/v1/policies/cartpole/reload", "").status == 200);  // the same file: unchanged
  CHECK(nlohmann::json::parse(running.post("/v1/policies/cartpole/act", body).body).at("version") == 1);

  rlx::test::write_policy(rlx::test::test_policy_file(TestPolicyKind::kDiscrete, 99), file);
  HttpReply reply = running.post("/v1/policies/cartpole/reload", "");
  REQUIRE(reply.status == 200);
  CHECK(nlohmann::json::parse(reply.body).at("version") == 2);
  rlx::Policy second(file.string());
  const nlohmann::json answer = nlohmann::json::parse(running.post("/v1/policies/cartpole/act", body).body);
  CHECK(answer.at("version") == 2);
  CHECK(answer.at("action") == second.act(std::vector<float>{0.5f, -0.5f, 0.25f, 1.0f}).index);

  rlx::test::write_policy(rlx::test::test_policy_file(TestPolicyKind::kBox), file);
  reply = running.post("/v1/policies/cartpole/reload", "");
  CHECK(reply.status == 409);
  CHECK_THAT(reply.body, Catch::Contains("action space Box"));
  std::ofstream(file, std::ios::binary | std::ios::trunc) << "not a policy";
  reply = running.post("/v1/policies/cartpole/reload", "");
  CHECK(reply.status == 409);
  CHECK(nlohmann::json::parse(running.post("/v1/policies/cartpole/act", body).body).at("version") == 2);
  CHECK_THAT(http_request(running.port(), "GET", "/metrics").body,
             Catch::Contains("rlx_serve_reloads_total{policy=\"cartpole\",outcome=\"refused\"} 2"));
}

TEST_CASE("A drain answers the requests accepted and then refuses connections", "[serve][http][drain]") {
  RunningServer running("drain", [](rlx::ServeOptions& options) {
    options.batching.max_wait = std::chrono::microseconds(400000);  // accepted requests wait 0.4 s
    options.batching.max_batch_rows = 64;
  });
  const int port = running.port();
  std::vector<std::future<HttpReply>> replies;
  for (int i = 0; i < 4; ++i) {
    replies.push_back(std::async(std::launch::async, [port] {
      return http_request(port, "POST", "/v1/policies/cartpole/act", "{\"observation\": [1, 2, 3, 4]}");
    }));
  }
  REQUIRE(rlx::test::wait_until([&] { return running.server->context().pool().pending() == 4; }));
  running.stop = true;
  CHECK(running.ran.get() == 0);
  for (auto& reply : replies) CHECK(reply.get().status == 200);
  CHECK_THROWS(http_request(port, "GET", "/healthz"));
}

TEST_CASE("Garbage instead of HTTP is answered 400 and the connection limit holds with 503", "[serve][http][errors]") {
  RunningServer running("garbage", [](rlx::ServeOptions& options) { options.http.max_connections = 2; });
  {
    const rlx::test::RawConnection garbage(running.port());
    garbage.send_text("\x16\x03\x01 not http at all\r\n\r\n");
    CHECK_THAT(garbage.read_all(), Catch::StartsWith("HTTP/1.1 400"));
  }
  REQUIRE(rlx::test::wait_until([&] { return running.server->http_connections() == 0; }));
  const rlx::test::RawConnection first(running.port());
  const rlx::test::RawConnection second(running.port());
  REQUIRE(rlx::test::wait_until([&] { return running.server->http_connections() == 2; }));  // both held idle
  const HttpReply refused = http_request(running.port(), "GET", "/healthz");
  CHECK(refused.status == 503);
  CHECK(refused.headers.at("retry-after") == "1");
  CHECK_THAT(http_request(running.port(), "GET", "/healthz").body, Catch::Contains("too many connections"));
}

TEST_CASE("Recurrent sessions are bounded and a memoryless policy's answer needs no session", "[serve][http][recurrent]") {
  RunningServer running("sessions", [](rlx::ServeOptions& options) { options.slot.max_sessions = 2; }, TestPolicyKind::kRecurrent);
  const auto step = [&](const std::string& session, bool start) {
    return running.post("/v1/policies/cartpole/act", nlohmann::json{{"observation", {0.1, 0.2, 0.3, 0.4}},
                                                                      {"session", session},
                                                                      {"episode_start", start}}.dump());
  };
  CHECK(step("a", true).status == 200);
  CHECK(step("a", false).status == 200);
  CHECK(step("b", true).status == 200);
  const HttpReply full = step("c", true);
  CHECK(full.status == 429);
  CHECK(json_field(full) == "session");
  CHECK(step("b", false).status == 200);  // a live session goes on
  const HttpReply missing = running.post("/v1/policies/cartpole/act", "{\"observation\": [0.1, 0.2, 0.3, 0.4]}");
  CHECK(missing.status == 400);
  CHECK_THAT(missing.body, Catch::Contains("recurrent"));
}

TEST_CASE("Requests accepted before a swap are answered by the version they started on", "[serve][http][reload]") {
  RunningServer running("in_flight", [](rlx::ServeOptions& options) {
    options.batching.max_wait = std::chrono::microseconds(500000);  // accepted requests wait 0.5 s
    options.batching.max_batch_rows = 64;
  });
  const int port = running.port();
  const auto ask = [port] { return http_request(port, "POST", "/v1/policies/cartpole/act", "{\"observation\": [1, 2, 3, 4]}"); };
  std::vector<std::future<HttpReply>> before;
  for (int i = 0; i < 3; ++i) before.push_back(std::async(std::launch::async, ask));
  REQUIRE(rlx::test::wait_until([&] { return running.server->context().pool().pending() == 3; }));
  rlx::test::write_policy(rlx::test::test_policy_file(TestPolicyKind::kDiscrete, 99), running.dir / "cartpole.rlxp");
  const HttpReply swapped = running.post("/v1/policies/cartpole/reload", "");
  REQUIRE(swapped.status == 200);
  CHECK(nlohmann::json::parse(swapped.body).at("version") == 2);
  for (auto& reply : before) {
    const HttpReply answer = reply.get();
    REQUIRE(answer.status == 200);
    CHECK(nlohmann::json::parse(answer.body).at("version") == 1);
  }
  CHECK(nlohmann::json::parse(ask().body).at("version") == 2);
}

TEST_CASE("A full policy queue is answered 503 with Retry-After while what it holds is answered", "[serve][http][errors]") {
  RunningServer running("queue_full", [](rlx::ServeOptions& options) {
    options.batching.max_queue = 1;
    options.batching.max_wait = std::chrono::microseconds(300000);  // the one queued waits 0.3 s
  });
  const int port = running.port();
  auto first = std::async(std::launch::async, [port] {
    return http_request(port, "POST", "/v1/policies/cartpole/act", "{\"observation\": [1, 2, 3, 4]}");
  });
  REQUIRE(rlx::test::wait_until([&] { return running.server->context().pool().pending() == 1; }));
  const HttpReply refused = running.post("/v1/policies/cartpole/act", "{\"observation\": [1, 2, 3, 4]}");
  CHECK(refused.status == 503);
  CHECK(refused.headers.at("retry-after") == "1");
  CHECK_THAT(refused.body, Catch::Contains("full queue"));
  CHECK(first.get().status == 200);
}
