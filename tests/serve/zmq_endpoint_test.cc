// The ZeroMQ endpoint (serve/zmq_endpoint.h): the two-frame requests of docs/serve.md answered
// with the actions rlx::Policy gives; malformed ones refused by name; CURVE lets in only the
// clients whose keys are authorized.
#include <catch2/catch.hpp>

#include <cstring>
#include <future>

#include <nlohmann/json.hpp>
#include <zmq.hpp>

#include "models/policy.h"
#include "serve/policy_server.h"
#include "serve/zmq_framing.h"
#include "serve_fixtures.h"
#include "transport/curve.h"

using rlx::test::TestPolicyKind;

namespace {

struct ZmqServer {
  std::filesystem::path dir = std::filesystem::temp_directory_path() / ("rlx_zmq_serve_" + std::to_string(::getpid()));
  std::string path;
  std::unique_ptr<rlx::PolicyServer> server;
  std::atomic<bool> stop{false};
  std::future<size_t> ran;

  explicit ZmqServer(const std::optional<rlx::CurveKeyPair>& keys = std::nullopt, const std::vector<std::string>& clients = {}) {
    path = rlx::test::write_policy(rlx::test::test_policy_file(TestPolicyKind::kBox), dir / "walker.rlxp");
    rlx::ServeOptions options;
    options.http.port = 0;
    rlx::ZmqEndpointOptions zmq;
    zmq.endpoint = "tcp://127.0.0.1:*";
    zmq.server_keys = keys;
    zmq.client_keys = clients;
    options.zmq = zmq;
    options.watch_interval = std::chrono::milliseconds(0);
    server = std::make_unique<rlx::PolicyServer>(std::vector<rlx::ServedSource>{{"walker", rlx::classify_model_source(path)}},
                                                 nullptr, options);
    ran = std::async(std::launch::async, [this] { return server->run([this] { return stop.load(); }); });
  }
  ~ZmqServer() {
    stop = true;
    ran.wait();
    server.reset();
    std::error_code ignored;
    std::filesystem::remove_all(dir, ignored);
  }
};

struct Reply {
  rlx::ZmqReplyHeader header;
  std::string body;
};

// Sends one request on a DEALER socket and waits up to 2 s for its reply.
std::optional<Reply> exchange(zmq::socket_t& socket, const std::string& header, const std::string& body) {
  socket.send(zmq::buffer(header), zmq::send_flags::sndmore);
  socket.send(zmq::buffer(body), zmq::send_flags::none);
  zmq::pollitem_t item{socket.handle(), 0, ZMQ_POLLIN, 0};
  if (zmq::poll(&item, 1, std::chrono::milliseconds(2000)) == 0) return std::nullopt;
  zmq::message_t head, rows;
  REQUIRE(socket.recv(head));
  REQUIRE(head.more());
  REQUIRE(socket.recv(rows));
  const std::optional<rlx::ZmqReplyHeader> parsed = rlx::decode_reply_header(head.to_string_view());
  REQUIRE(parsed);
  return Reply{*parsed, rows.to_string()};
}

std::string rows_of(const std::vector<std::vector<float>>& observations) {
  std::string body;
  for (const auto& row : observations) body.append(reinterpret_cast<const char*>(row.data()), row.size() * sizeof(float));
  return body;
}

}  // namespace

TEST_CASE("ZeroMQ requests get the actions rlx::Policy gives and malformed ones are refused by name", "[serve][zmq]") {
  ZmqServer running;
  zmq::context_t context;
  zmq::socket_t dealer(context, zmq::socket_type::dealer);
  dealer.set(zmq::sockopt::linger, 0);
  dealer.connect(running.server->zmq_endpoint());
  const auto observations = rlx::test::test_observations(8);
  rlx::ZmqActHeader header;
  header.policy = "walker";
  header.rows = 8;
  std::optional<Reply> reply = exchange(dealer, rlx::encode_act_header(header), rows_of(observations));
  REQUIRE(reply);
  REQUIRE(reply->header.status == 200);
  CHECK(reply->header.rows == 8);
  CHECK(reply->header.version == 1);
  REQUIRE(reply->body.size() == 8 * 2 * sizeof(float));
  rlx::Policy policy(running.path);
  for (size_t i = 0; i < observations.size(); ++i) {
    const std::vector<float> expected = policy.act(observations[i]).values;
    CHECK(std::memcmp(reply->body.data() + i * 2 * sizeof(float), expected.data(), 2 * sizeof(float)) == 0);
  }
  header.rows = 7;
  reply = exchange(dealer, rlx::encode_act_header(header), rows_of(observations));
  REQUIRE(reply);
  CHECK(reply->header.status == 400);
  CHECK(nlohmann::json::parse(reply->body).at("field") == "header.rows");
  header.policy = "walkr";
  reply = exchange(dealer, rlx::encode_act_header(header), rows_of(observations));
  REQUIRE(reply);
  CHECK(reply->header.status == 404);
  reply = exchange(dealer, "GET / HTTP/1.1", "");
  REQUIRE(reply);
  CHECK(reply->header.status == 400);
  CHECK(nlohmann::json::parse(reply->body).at("field") == "header");
  // A REQ client (its empty delimiter frame) is answered too.
  zmq::socket_t req(context, zmq::socket_type::req);
  req.set(zmq::sockopt::linger, 0);
  req.connect(running.server->zmq_endpoint());
  header.policy = "walker";
  header.rows = 1;
  reply = exchange(req, rlx::encode_act_header(header), rows_of({observations[0]}));
  REQUIRE(reply);
  CHECK(reply->header.status == 200);
}

TEST_CASE("With CURVE keys only an authorized client is answered", "[serve][zmq][security]") {
  const rlx::CurveKeyPair server_keys = rlx::generate_curve_keypair();
  const rlx::CurveKeyPair allowed = rlx::generate_curve_keypair();
  const rlx::CurveKeyPair stranger = rlx::generate_curve_keypair();
  ZmqServer running(server_keys, {allowed.public_key});
  rlx::ZmqActHeader header;
  header.policy = "walker";
  header.rows = 1;
  const std::string body = rows_of(rlx::test::test_observations(1));
  zmq::context_t context;
  for (const auto& [keys, answered] : {std::pair{allowed, true}, std::pair{stranger, false}}) {
    zmq::socket_t dealer(context, zmq::socket_type::dealer);
    dealer.set(zmq::sockopt::linger, 0);
    rlx::configure_curve_client(dealer, keys, server_keys.public_key);
    dealer.connect(running.server->zmq_endpoint());
    const std::optional<Reply> reply = exchange(dealer, rlx::encode_act_header(header), body);
    CHECK(reply.has_value() == answered);
  }
}
