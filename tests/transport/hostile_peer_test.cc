// Attacks on a SampleReceiver over real sockets: peers that join like workers and then send
// fragments that break the run's contract, more fragments than their credits, made-up episode
// reports, a stolen identity, and raw garbage by the megabyte. The receiver must refuse and
// count each, drop the sender, keep serving honest workers, and stay within its memory bound.
#include <catch2/catch.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cmath>
#include <fstream>
#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "tests/transport/hostile_peer.h"
#include "tests/transport/transport_test_util.h"
#include "transport/sample_receiver.h"

namespace rlx {
namespace {

using namespace std::chrono_literals;
using test::HostilePeer;

constexpr int32_t kSteps = 16;
constexpr int32_t kEnvs = 4;

ReceiverOptions cartpole_contract(int max_episode_steps = 500) {
  ReceiverOptions options;
  options.env = {"CartPole-v1", 4, 0, 2, max_episode_steps};
  options.fragment_length = kSteps;
  options.max_envs_per_worker = 8;
  options.credits_per_worker = 2;
  options.heartbeat_interval = 100ms;
  options.worker_timeout = 5000ms;
  options.make_welcome = [](int) { return std::string(R"({"env_id": "CartPole-v1"})"); };
  return options;
}

std::shared_ptr<Weights> weights(uint64_t version) {
  auto w = std::make_shared<Weights>();
  w->policy_version = version;
  w->params.assign(8, 0.5f);
  return w;
}

SampleBatch good_fragment(uint64_t version) { return test::contract_fragment(kSteps, kEnvs, version); }

bool eventually(const std::function<bool()>& condition, std::chrono::milliseconds timeout = 5000ms) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (condition()) return true;
    std::this_thread::sleep_for(5ms);
  }
  return condition();
}

TEST_CASE("fragments that break the run's contract are refused, counted by fault, and drop their sender",
          "[transport][hostile]") {
  zmq::context_t context(1);
  SampleReceiver receiver(context, cartpole_contract());
  receiver.publish_weights(weights(3));
  HostilePeer honest(context, receiver.endpoint());
  REQUIRE(honest.join());

  uint64_t refused = 0;
  for (const test::Attack& attack : test::contract_attacks(kSteps, kEnvs)) {
    INFO(attack.name);
    HostilePeer attacker(context, receiver.endpoint());
    REQUIRE(attacker.join());
    SampleBatch bad = good_fragment(attacker.latest_version());
    attack.spoil(bad);
    attacker.send_fragment(bad);
    ++refused;
    REQUIRE(eventually([&] { return receiver.stats().refused == refused; }));
    CHECK_THAT(receiver.stats().fault_counts, Catch::Contains(" " + attack.fault + "=") &&
                                                  !Catch::Contains(" " + attack.fault + "=0"));
    // The attacker is told to stop, and what it sends from now on is discarded undecoded.
    REQUIRE(eventually([&] { attacker.read(10ms); return attacker.stopped(); }));
    const uint64_t discarded = receiver.stats().messages_from_dropped_peers;
    attacker.send_fragment(good_fragment(attacker.latest_version()));
    REQUIRE(eventually([&] { return receiver.stats().messages_from_dropped_peers == discarded + 1; }));
    // Nothing of the attacker's reaches the learner; the honest worker is still served.
    honest.send_fragment(good_fragment(3));
    std::optional<SampleBatch> popped = receiver.pop(2000ms);
    REQUIRE(popped);
    CHECK(popped->worker_id == 666);
    CHECK(popped->obs == good_fragment(3).obs);
    honest.read(20ms);
  }
  // A fragment beyond the decoder's limits (T x K over what any grant allows) is rejected
  // before its columns are read, and drops its sender as well.
  HostilePeer oversized(context, receiver.endpoint());
  REQUIRE(oversized.join());
  SampleBatch huge = *test::make_batch(kSteps * 8, 8, 4, true);
  for (int64_t& action : huge.action_indices) action %= 2;
  huge.policy_version = oversized.latest_version();
  oversized.send_fragment(huge);
  REQUIRE(eventually([&] { oversized.read(10ms); return oversized.stopped(); }));
  CHECK_THAT(receiver.stats().reject_counts, Catch::Contains("limit_exceeded=1"));
  const std::vector<std::string> notices = receiver.take_notices();
  REQUIRE(notices.size() == refused + 1);
  CHECK_THAT(notices.back(), Catch::Contains("limit_exceeded"));
  CHECK_THAT(notices.front(), Catch::Contains("wrong_obs_size") && Catch::Contains("pid 1 on hostile"));
  const ReceiverStats stats = receiver.stats();
  CHECK(stats.fragments_consumed == refused);
  CHECK(stats.peers_dropped == refused + 1);
  CHECK(stats.queued == 0);
}

TEST_CASE("an episode longer than the env's time limit is refused", "[transport][hostile]") {
  zmq::context_t context(1);
  SampleReceiver receiver(context, cartpole_contract(20));
  receiver.publish_weights(weights(1));
  HostilePeer attacker(context, receiver.endpoint());
  REQUIRE(attacker.join());
  SampleBatch endless = good_fragment(1);
  std::fill(endless.terminated.begin(), endless.terminated.end(), 0);
  std::fill(endless.truncated.begin(), endless.truncated.end(), 0);
  endless.final_obs_index.clear();
  endless.final_obs.clear();
  attacker.send_fragment(endless);  // 16 steps: within the limit
  REQUIRE(receiver.pop(2000ms));
  attacker.read(50ms);
  attacker.send_fragment(endless);  // 32 steps without an end
  REQUIRE(eventually([&] { return receiver.stats().refused == 1; }));
  CHECK_THAT(receiver.stats().fault_counts, Catch::Contains("episode_too_long=1"));
  CHECK_THAT(receiver.take_notices().front(), Catch::Contains("past the time limit of 20"));
}

TEST_CASE("a peer that sends beyond its credits is refused and dropped, and queued memory stays bounded",
          "[transport][hostile]") {
  zmq::context_t context(1);
  SampleReceiver receiver(context, cartpole_contract());
  receiver.publish_weights(weights(1));
  HostilePeer flooder(context, receiver.endpoint());
  REQUIRE(flooder.join());
  REQUIRE(flooder.credits() == 2);
  const SampleBatch fragment = good_fragment(1);
  for (int i = 0; i < 500; ++i) flooder.send_fragment(fragment);
  REQUIRE(eventually([&] {
    const ReceiverStats s = receiver.stats();
    return s.fragments_received + s.messages_from_dropped_peers == 500;
  }));
  const ReceiverStats stats = receiver.stats();
  CHECK(stats.queued == 2);             // the two it held credits for
  CHECK(stats.refused == 1);            // the third
  CHECK_THAT(stats.fault_counts, Catch::Contains("no_credit=1"));
  CHECK(stats.messages_from_dropped_peers == 497);
  CHECK(stats.peak_queued_bytes > 0);
  CHECK(stats.peak_queued_bytes <= stats.queued_bytes_bound);
  CHECK(stats.peak_queued_bytes <= 2 * max_fragment_bytes({kSteps, 8, 4, 0, true}));
}

TEST_CASE("episode returns come from the accepted fragments, never from a worker's report", "[transport][hostile]") {
  zmq::context_t context(1);
  SampleReceiver receiver(context, cartpole_contract());
  receiver.publish_weights(weights(1));
  HostilePeer liar(context, receiver.endpoint());
  REQUIRE(liar.join());
  EpisodeStats claim;
  claim.returns.assign(5, 1e9);
  claim.lengths.assign(5, 500);
  for (int i = 0; i < 5; ++i) liar.send(encode_episode_stats(claim, 666, 100 + i));
  // One fragment: env 0 earns 1 a step and terminates at step 10; the others run on.
  SampleBatch fragment = good_fragment(1);
  std::fill(fragment.rewards.begin(), fragment.rewards.end(), 1.0f);
  std::fill(fragment.terminated.begin(), fragment.terminated.end(), 0);
  std::fill(fragment.truncated.begin(), fragment.truncated.end(), 0);
  fragment.terminated[9 * kEnvs + 0] = 1;
  fragment.final_obs_index = {9 * kEnvs + 0};
  fragment.final_obs.assign(4, 0.1f);
  liar.send_fragment(fragment);
  REQUIRE(receiver.pop(2000ms));
  const EpisodeReport report = receiver.take_episodes();
  REQUIRE(report.returns.size() == 1);
  CHECK(report.returns[0] == 10.0);
  CHECK(report.lengths[0] == 10);
  CHECK(receiver.stats().episodes == 1);
}

TEST_CASE("a second connection under a live worker's identity cannot take it over", "[transport][hostile]") {
  zmq::context_t context(1);
  SampleReceiver receiver(context, cartpole_contract());
  receiver.publish_weights(weights(1));
  HostilePeer live(context, receiver.endpoint(), kEnvs, "w1");
  REQUIRE(live.join());
  HostilePeer thief(context, receiver.endpoint(), kEnvs, "w1");
  CHECK_FALSE(thief.join(1500ms));  // the ROUTER ignores a duplicate identity: no welcome
  live.send_fragment(good_fragment(1));
  REQUIRE(receiver.pop(2000ms));
  CHECK(receiver.stats().workers_joined == 1);
  CHECK(receiver.stats().workers_restarted == 0);
}

// The next message the receiver sends `peer`, decoded; nullopt when none comes within `wait`.
std::optional<Message> next_message(zmq::socket_t& peer, std::chrono::milliseconds wait = 2000ms) {
  std::optional<std::vector<zmq::message_t>> frames = recv_frames(peer, wait);
  if (!frames) return std::nullopt;
  DecodeResult result = decode_message(*frames);
  REQUIRE(result.ok());
  return std::move(*result.message);
}

template <typename T>
bool holds(const std::optional<Message>& message) {
  return message && std::holds_alternative<T>(*message);
}

// A worker 666 whose messages carry the sequence numbers a test gives them (a worker whose link
// was cut queues joins and fragments, which arrive after the hello that followed them).
struct NumberedWorker {
  explicit NumberedWorker(zmq::context_t& context, const std::string& endpoint)
      : socket(make_socket(context, zmq::socket_type::dealer)) {
    socket.connect(endpoint);
  }
  void send(std::vector<zmq::message_t> frames) { REQUIRE(send_frames(socket, frames, 1000ms)); }
  void join(uint64_t sequence) { send(encode_join(666, sequence)); }
  void hello(uint64_t sequence) {
    Hello hello;
    hello.worker_id = 666;
    hello.env_id = "CartPole-v1";
    hello.num_envs = kEnvs;
    hello.obs_size = 4;
    hello.num_actions = 2;
    hello.pid = 1;
    hello.hostname = "rejoining";
    send(encode_hello(hello, sequence));
  }
  void fragment(uint64_t sequence) {
    auto batch = std::make_shared<SampleBatch>(good_fragment(1));
    batch->worker_id = 666;
    send(encode_sample_fragment(batch, sequence));
  }
  // Joins with 1 and says hello with `hello_sequence`: true once welcomed, with weights and 2 credits.
  bool set_up(uint64_t hello_sequence) {
    join(1);
    if (!holds<Welcome>(next_message(socket))) return false;
    hello(hello_sequence);
    if (!holds<Weights>(next_message(socket))) return false;
    const std::optional<Message> grant = next_message(socket);
    return holds<CreditGrant>(grant) && std::get<CreditGrant>(*grant).credits == 2;
  }
  // What the receiver sends in `span`: {welcomes, credits granted, stops}.
  std::array<int64_t, 3> heard(std::chrono::milliseconds span) {
    std::array<int64_t, 3> counts{};
    const auto deadline = std::chrono::steady_clock::now() + span;  // heartbeats keep coming
    while (std::chrono::steady_clock::now() < deadline) {
      const std::optional<Message> message = next_message(socket, 20ms);
      counts[0] += holds<Welcome>(message);
      if (holds<CreditGrant>(message)) counts[1] += std::get<CreditGrant>(*message).credits;
      counts[2] += holds<Stop>(message);
    }
    return counts;
  }
  zmq::socket_t socket;
};

TEST_CASE("a join numbered before a worker's latest hello does not set the worker up again", "[transport][hostile]") {
  zmq::context_t context(1);
  const ReceiverOptions options = cartpole_contract();
  SampleReceiver receiver(context, options);
  receiver.publish_weights(weights(1));
  NumberedWorker worker(context, receiver.endpoint());
  REQUIRE(worker.set_up(5));
  // Past the welcome throttle, so that a join taken as new would be welcomed at once.
  std::this_thread::sleep_for(options.heartbeat_interval + 50ms);
  worker.join(3);      // answered already by the hello numbered 5
  worker.fragment(4);  // sent under the setup before that hello
  REQUIRE(eventually([&] { return receiver.stats().fragments_received == 1; }));
  CHECK(receiver.stats().workers_restarted == 0);
  worker.fragment(6);  // after the hello: accepted with one of its credits
  const std::optional<SampleBatch> popped = receiver.pop(2000ms);
  REQUIRE(popped);
  CHECK(popped->worker_id == 666);
  const ReceiverStats stats = receiver.stats();
  CHECK(stats.workers_joined == 1);
  CHECK(stats.workers_restarted == 0);
  CHECK(stats.fragments_consumed == 1);
  CHECK(stats.dropped_unknown_worker == 1);
  CHECK(stats.refused == 0);
  CHECK(stats.peers_dropped == 0);
  // No second welcome: the late join got a heartbeat (the answer to a worker that is set up);
  // the popped fragment's credit came back.
  const std::array<int64_t, 3> heard = worker.heard(500ms);
  CHECK(heard[0] == 0);
  CHECK(heard[1] == 1);
  CHECK(heard[2] == 0);
}

TEST_CASE("a fragment numbered before a worker's latest hello is counted as dropped and not refused",
          "[transport][hostile]") {
  zmq::context_t context(1);
  SampleReceiver receiver(context, cartpole_contract());
  receiver.publish_weights(weights(1));
  NumberedWorker worker(context, receiver.endpoint());
  REQUIRE(worker.set_up(5));
  worker.fragment(4);  // from the setup before the hello: neither taken nor held against the worker
  REQUIRE(eventually([&] { return receiver.stats().fragments_received == 1; }));
  ReceiverStats stats = receiver.stats();
  CHECK(stats.dropped_unknown_worker == 1);
  CHECK(stats.refused == 0);
  CHECK(stats.peers_dropped == 0);
  CHECK(stats.queued == 0);
  // It used none of the hello's 2 credits: two fragments after the hello are both taken.
  worker.fragment(6);
  worker.fragment(7);
  REQUIRE(receiver.pop(2000ms));
  REQUIRE(receiver.pop(2000ms));
  stats = receiver.stats();
  CHECK(stats.fragments_consumed == 2);
  CHECK(stats.dropped_unknown_worker == 1);
  CHECK(stats.refused == 0);
  CHECK(worker.heard(300ms)[2] == 0);  // never told to stop
}

// Resident memory of this process, in bytes.
uint64_t resident_bytes() {
  std::ifstream statm("/proc/self/statm");
  uint64_t pages = 0, resident = 0;
  statm >> pages >> resident;
  return resident * static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
}

// Opens raw TCP connections to host:port and writes random bytes on each until stop.
void flood(uint16_t port, const std::atomic<bool>& stop, std::atomic<uint64_t>& bytes_sent) {
  std::mt19937_64 random(12345);
  std::vector<char> garbage(64 * 1024);
  while (!stop) {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) continue;
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(port);
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0) {
      for (int chunk = 0; chunk < 16 && !stop; ++chunk) {
        for (char& c : garbage) c = static_cast<char>(random());
        if (chunk == 0 && random() % 2) garbage[0] = 0x01;  // looks like an old ZMTP 1.0 length byte
        const ssize_t sent = ::send(fd, garbage.data(), garbage.size(), MSG_NOSIGNAL);
        if (sent <= 0) break;
        bytes_sent += static_cast<uint64_t>(sent);
      }
    }
    ::close(fd);
  }
}

TEST_CASE("a flood of raw garbage costs CPU, not memory, and honest fragments keep flowing", "[transport][hostile]") {
  zmq::context_t context(1);
  ReceiverOptions options = cartpole_contract();
  options.endpoint = "tcp://127.0.0.1:*";
  SampleReceiver receiver(context, options);
  receiver.publish_weights(weights(1));
  const uint16_t port = static_cast<uint16_t>(std::stoi(receiver.endpoint().substr(receiver.endpoint().rfind(':') + 1)));
  HostilePeer honest(context, receiver.endpoint());
  REQUIRE(honest.join());
  const uint64_t rss_before = resident_bytes();

  // Pops honest fragments, sending one whenever the worker holds a credit, for at least
  // `at_least` and then until `done()` (at most a minute: a slow, sanitized or loaded machine
  // takes longer, and the checks below are on amounts, not on time).
  const auto stream = [&](std::chrono::milliseconds at_least, const std::function<bool(int popped)>& done) {
    int popped = 0;
    const auto start = std::chrono::steady_clock::now();
    const auto elapsed = [&] { return std::chrono::steady_clock::now() - start; };
    while (elapsed() < at_least || (!done(popped) && elapsed() < 60s)) {
      honest.read(0ms);
      if (honest.credits() > 0) {
        honest.send_fragment(good_fragment(1));
        // credits are tracked by the peer: one used
        honest.use_credit();
      }
      if (receiver.pop(5ms)) ++popped;
    }
    return popped;
  };
  constexpr uint64_t kFloodBytes = uint64_t{64} << 20;
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> bytes_sent{0};
  std::vector<std::thread> flooders;
  for (int i = 0; i < 4; ++i) flooders.emplace_back(flood, port, std::cref(stop), std::ref(bytes_sent));
  const int during = stream(3000ms, [&](int popped) { return popped > 0 && bytes_sent > kFloodBytes; });
  stop = true;
  for (std::thread& t : flooders) t.join();
  const uint64_t rss_after_flood = resident_bytes();
  const int after = stream(0ms, [](int popped) { return popped > 50; });
  const ReceiverStats stats = receiver.stats();
  INFO("garbage sent: " << bytes_sent / (1 << 20) << " MiB; honest fragments popped during the flood: " << during
                        << ", in the second after it: " << after << "; resident memory grew by "
                        << (static_cast<int64_t>(rss_after_flood) - static_cast<int64_t>(rss_before)) / (1 << 20) << " MiB");
  CHECK(bytes_sent > kFloodBytes);
  CHECK(during > 0);
  CHECK(after > 50);
  CHECK(stats.peak_queued_bytes <= stats.queued_bytes_bound);
  CHECK(stats.refused == 0);
  // Generous: the receiver's own bound is a few hundred KiB here; 2.8 GB was seen before.
  CHECK(rss_after_flood < rss_before + (uint64_t{128} << 20));
}

}  // namespace
}  // namespace rlx
