// Socket helpers over tcp://127.0.0.1 with ephemeral ports; every wait is bounded.
#include <chrono>
#include <memory>
#include <string>
#include <thread>

#include <catch2/catch.hpp>

#include "tests/transport/transport_test_util.h"
#include "transport/decode.h"
#include "transport/encode.h"
#include "transport/peer_guard.h"
#include "transport/sockets.h"

namespace rlx {
namespace {

using namespace std::chrono_literals;

TEST_CASE("sockets carry the safety options", "[transport]") {
  zmq::context_t context(1);
  DecodeLimits limits;
  limits.max_message_bytes = 12345;
  SocketOptions options = socket_options_for(limits);
  options.send_hwm = 7;
  zmq::socket_t socket = make_socket(context, zmq::socket_type::pull, options);
  CHECK(socket.get(zmq::sockopt::linger) == 0);
  CHECK(socket.get(zmq::sockopt::maxmsgsize) == 12345);
  CHECK(socket.get(zmq::sockopt::sndhwm) == 7);
  CHECK(socket.get(zmq::sockopt::ipv6) == 0);
  const std::string endpoint = bind_endpoint(socket, "tcp://127.0.0.1:*");
  CHECK(endpoint.rfind("tcp://127.0.0.1:", 0) == 0);
  CHECK(endpoint != "tcp://127.0.0.1:*");
}

TEST_CASE("a fragment crosses tcp loopback zero-copy and decodes intact", "[transport]") {
  zmq::context_t context(1);
  zmq::socket_t pull = make_socket(context, zmq::socket_type::pull);
  zmq::socket_t push = make_socket(context, zmq::socket_type::push);
  push.connect(bind_endpoint(pull, "tcp://127.0.0.1:*"));
  auto batch = test::make_batch(32, 4, 11, false);
  std::weak_ptr<const SampleBatch> watch = batch;
  auto frames = encode_sample_fragment(batch, 3);
  REQUIRE(send_frames(push, frames, 2000ms));
  CHECK(frames.empty());
  auto received = recv_frames(pull, 2000ms);
  REQUIRE(received);
  const DecodeResult result = decode_message(*received);
  REQUIRE(result.ok());
  test::require_same_batch(*batch, std::get<SampleBatch>(*result.message));
  batch.reset();
  // ZeroMQ releases sent frames on its I/O thread; wait (bounded) for the last reference to go.
  const auto deadline = std::chrono::steady_clock::now() + 2s;
  while (!watch.expired() && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(1ms);
  CHECK(watch.expired());
}

TEST_CASE("send and receive give up after their timeout", "[transport]") {
  zmq::context_t context(1);
  zmq::socket_t pull = make_socket(context, zmq::socket_type::pull);
  bind_endpoint(pull, "tcp://127.0.0.1:*");
  const auto start = std::chrono::steady_clock::now();
  CHECK(!recv_frames(pull, 50ms));
  zmq::socket_t lonely = make_socket(context, zmq::socket_type::push);  // no peer: nothing can be queued
  auto frames = encode_heartbeat(1, 1);
  CHECK(!send_frames(lonely, frames, 50ms));
  CHECK(frames.size() == 1);  // left intact for a retry
  CHECK(std::chrono::steady_clock::now() - start < 2s);
}

TEST_CASE("libzmq drops frames over the socket's max message size", "[transport]") {
  zmq::context_t context(1);
  SocketOptions small;
  small.max_message_bytes = 1000;
  zmq::socket_t pull = make_socket(context, zmq::socket_type::pull, small);
  const std::string endpoint = bind_endpoint(pull, "tcp://127.0.0.1:*");
  {
    zmq::socket_t big_sender = make_socket(context, zmq::socket_type::push);
    big_sender.connect(endpoint);
    auto big = encode_sample_fragment(test::make_batch(16, 4, 8, true), 0);  // 2 KiB obs column
    REQUIRE(send_frames(big_sender, big, 2000ms));
    CHECK(!recv_frames(pull, 300ms));
  }
  zmq::socket_t polite = make_socket(context, zmq::socket_type::push);
  polite.connect(endpoint);
  auto beat = encode_heartbeat(2, 1);
  REQUIRE(send_frames(polite, beat, 2000ms));
  auto received = recv_frames(pull, 2000ms);
  REQUIRE(received);
  CHECK(decode_message(*received).ok());
}

TEST_CASE("recv_frames bounds the frames it keeps", "[transport]") {
  zmq::context_t context(1);
  zmq::socket_t pull = make_socket(context, zmq::socket_type::pull);
  zmq::socket_t push = make_socket(context, zmq::socket_type::push);
  push.connect(bind_endpoint(pull, "tcp://127.0.0.1:*"));
  std::vector<zmq::message_t> many(100);
  REQUIRE(send_frames(push, many, 2000ms));
  auto received = recv_frames(pull, 2000ms, 30);
  REQUIRE(received);
  CHECK(received->size() == 31);
  RejectCounters counters;
  CHECK(!decode_message(*received, {}, &counters).ok());
  CHECK(counters.count(RejectReason::kTooManyFrames) == 1);
  auto beat = encode_heartbeat(1, 1);  // the socket is in step for the next message
  REQUIRE(send_frames(push, beat, 2000ms));
  auto next = recv_frames(pull, 2000ms, 30);
  REQUIRE(next);
  CHECK(decode_message(*next).ok());
}

TEST_CASE("a ROUTER drops a DEALER peer that keeps sending garbage", "[transport]") {
  zmq::context_t context(1);
  zmq::socket_t router = make_socket(context, zmq::socket_type::router);
  const std::string endpoint = bind_endpoint(router, "tcp://127.0.0.1:*");
  zmq::socket_t good = make_socket(context, zmq::socket_type::dealer);
  good.set(zmq::sockopt::routing_id, "good");
  good.connect(endpoint);
  zmq::socket_t bad = make_socket(context, zmq::socket_type::dealer);
  bad.set(zmq::sockopt::routing_id, "bad");
  bad.connect(endpoint);

  for (uint64_t i = 0; i < 4; ++i) {
    auto beat = encode_heartbeat(1, i);
    REQUIRE(send_frames(good, beat, 2000ms));
    std::vector<zmq::message_t> garbage;
    garbage.emplace_back(std::string("definitely not a header"));
    REQUIRE(send_frames(bad, garbage, 2000ms));
  }
  PeerGuard guard(PeerGuardOptions{3, 10, 16});
  RejectCounters counters;
  int good_messages = 0;
  std::vector<std::string> dropped;
  for (int i = 0; i < 8; ++i) {
    auto frames = recv_frames(router, 2000ms);
    REQUIRE(frames);
    const std::string peer = take_identity(*frames);
    if (decode_message(*frames, {}, &counters).ok()) {
      guard.record_good(peer);
      ++good_messages;
    } else if (guard.record_bad(peer) && dropped.empty()) {
      dropped.push_back(peer);
      auto stop = encode_stop(0, 0);
      prepend_identity(stop, peer);
      REQUIRE(send_frames(router, stop, 2000ms));
    }
  }
  CHECK(good_messages == 4);
  CHECK(counters.count(RejectReason::kHeaderTruncated) == 4);
  REQUIRE(dropped == std::vector<std::string>{"bad"});
  CHECK(!guard.should_drop("good"));
  auto stop = recv_frames(bad, 2000ms);
  REQUIRE(stop);
  const DecodeResult result = decode_message(*stop);
  REQUIRE(result.ok());
  CHECK(std::holds_alternative<Stop>(*result.message));
}

TEST_CASE("a wildcard bound endpoint is reached at the host's name and any other as it is", "[transport]") {
  CHECK(reachable_endpoint("tcp://0.0.0.0:5555", "node1") == "tcp://node1:5555");
  CHECK(reachable_endpoint("tcp://[::]:40123", "node1.cluster") == "tcp://node1.cluster:40123");
  CHECK(reachable_endpoint("tcp://*:7", "10.0.0.3") == "tcp://10.0.0.3:7");
  for (const char* kept : {"tcp://127.0.0.1:5555", "tcp://10.1.2.3:5555", "tcp://[::1]:5555", "tcp://head:5555",
                           "ipc:///tmp/rlx-abc/learner", "inproc://learner", "tcp://0.0.0.01:5555", ""}) {
    CHECK(reachable_endpoint(kept, "node1") == kept);
  }
}

TEST_CASE("a socket bound on every interface is reached at the endpoint made reachable", "[transport]") {
  zmq::context_t context(1);
  zmq::socket_t pull = make_socket(context, zmq::socket_type::pull);
  const std::string bound = bind_endpoint(pull, "tcp://0.0.0.0:*");
  REQUIRE(bound.rfind("tcp://0.0.0.0:", 0) == 0);
  const std::string reachable = reachable_endpoint(bound, "127.0.0.1");
  CHECK(reachable == "tcp://127.0.0.1:" + bound.substr(std::string("tcp://0.0.0.0:").size()));
  zmq::socket_t push = make_socket(context, zmq::socket_type::push);
  push.connect(reachable);
  auto beat = encode_heartbeat(3, 9);
  REQUIRE(send_frames(push, beat, 2000ms));
  auto received = recv_frames(pull, 2000ms);
  REQUIRE(received);
  CHECK(decode_message(*received).info.sequence == 9);
}

}  // namespace
}  // namespace rlx
