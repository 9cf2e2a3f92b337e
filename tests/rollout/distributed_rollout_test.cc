// Workers and the learner-side receiver talking over real ZeroMQ sockets on loopback.
#include <catch2/catch.hpp>

#include <signal.h>

#include <chrono>
#include <future>
#include <memory>
#include <thread>

#include "envs/registry.h"
#include "models/rollout_policy.h"
#include "rollout/rollout_worker.h"
#include "rollout/worker_pool.h"
#include "transport/decode.h"
#include "transport/encode.h"
#include "transport/sample_receiver.h"
#include "transport/sockets.h"

namespace rlx {
namespace {

using namespace std::chrono_literals;

WorkerSetup cartpole_setup(int worker_index) {
  WorkerSetup setup;
  setup.env_id = "CartPole-v1";
  setup.num_envs = 4;
  setup.fragment_length = 16;
  setup.seed = 7;
  setup.worker_index = worker_index;
  setup.model = ModelSpec::for_env(global_env_registry().spec("CartPole-v1"));
  return setup;
}

ReceiverOptions cartpole_receiver(int credits, uint64_t max_lag) {
  ReceiverOptions options;
  options.env = {"CartPole-v1", 4, 0, 2, 500};
  options.fragment_length = 16;
  options.credits_per_worker = credits;
  options.max_policy_lag = max_lag;
  options.heartbeat_interval = 100ms;
  options.worker_timeout = 1500ms;
  options.make_welcome = [](int index) { return cartpole_setup(index).to_json(); };
  return options;
}

std::shared_ptr<Weights> cartpole_weights(uint64_t version) {
  ActorCriticPolicy policy(cartpole_setup(0).model, 1);
  auto weights = std::make_shared<Weights>();
  weights->policy_version = version;
  weights->params = policy.weights();
  return weights;
}

// A RolloutWorker on its own thread; run() returns how it ended.
struct WorkerThread {
  WorkerThread(zmq::context_t& context, const std::string& endpoint, uint64_t id,
               std::chrono::milliseconds learner_timeout = 5000ms) {
    RolloutWorkerOptions options;
    options.endpoint = endpoint;
    options.worker_id = id;
    options.heartbeat_interval = 100ms;
    options.rejoin_after = 400ms;
    options.learner_timeout = learner_timeout;
    worker = std::make_unique<RolloutWorker>(context, options);
    exit = std::async(std::launch::async, [this] { return worker->run(); });
  }
  std::unique_ptr<RolloutWorker> worker;
  std::future<WorkerExit> exit;
};

template <typename Predicate>
bool eventually(Predicate predicate, std::chrono::milliseconds limit = 5000ms) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    if (predicate()) return true;
    std::this_thread::sleep_for(10ms);
  }
  return predicate();
}

// A learner played by the test on a ROUTER socket: it reads one worker's messages and answers
// them with whatever the test sends.
struct FakeLearner {
  explicit FakeLearner(zmq::context_t& context) : socket(make_socket(context, zmq::socket_type::router)) {
    endpoint = bind_endpoint(socket, "tcp://127.0.0.1:*");
  }
  // Reads the worker's messages until one is a T (true), for 5 s at most (false); counts hellos.
  template <typename T>
  bool receive_until() {
    const auto deadline = std::chrono::steady_clock::now() + 5000ms;
    while (std::chrono::steady_clock::now() < deadline) {
      std::optional<std::vector<zmq::message_t>> frames = recv_frames(socket, 100ms);
      if (!frames) continue;
      identity = take_identity(*frames);
      DecodeResult result = decode_message(*frames);
      REQUIRE(result.ok());
      hellos += std::holds_alternative<Hello>(*result.message);
      if (std::holds_alternative<T>(*result.message)) return true;
    }
    return false;
  }
  // Sends `frames` to the worker last heard from.
  void reply(std::vector<zmq::message_t> frames) {
    prepend_identity(frames, identity);
    REQUIRE(send_frames(socket, frames, 1000ms));
  }
  zmq::socket_t socket;
  std::string endpoint;
  std::string identity;
  uint64_t sequence = 0;
  int hellos = 0;
};

void check_accounting(const ReceiverStats& s) {
  CHECK(s.fragments_received ==
        s.fragments_consumed + s.dropped_stale + s.dropped_unknown_worker + s.dropped_at_stop + s.queued);
}

}  // namespace

TEST_CASE("workers join, sample with the current weights, and credits bound what is queued", "[rollout][distributed]") {
  zmq::context_t context(1);
  SampleReceiver receiver(context, cartpole_receiver(2, 1));
  receiver.publish_weights(cartpole_weights(3));
  WorkerThread a(context, receiver.endpoint(), 1), b(context, receiver.endpoint(), 2);

  REQUIRE(eventually([&] { return receiver.stats().workers_joined == 2; }));
  // Nobody pops: each worker may fill only its two credits.
  REQUIRE(eventually([&] { return receiver.stats().queued == 4; }));
  std::this_thread::sleep_for(300ms);
  CHECK(receiver.stats().queued == 4);
  CHECK(receiver.stats().fragments_received == 4);

  for (int i = 0; i < 20; ++i) {
    std::optional<SampleBatch> batch = receiver.pop(3000ms);
    REQUIRE(batch);
    CHECK(batch->policy_version == 3);
    CHECK(batch->num_steps == 16);
    CHECK(batch->num_envs == 4);
    CHECK((batch->worker_id == 1 || batch->worker_id == 2));
    CHECK_NOTHROW(batch->validate());
  }
  REQUIRE(eventually([&] { return receiver.take_episodes().returns.size() > 0 || receiver.stats().episodes > 0; }));
  receiver.stop_workers();
  CHECK(a.exit.get() == WorkerExit::kStopped);
  CHECK(b.exit.get() == WorkerExit::kStopped);
  // Each worker's goodbye follows its last fragment: after both, every fragment is counted.
  REQUIRE(eventually([&] { return receiver.stats().workers_left == 2; }));
  const ReceiverStats stats = receiver.stats();
  CHECK(stats.fragments_consumed == 20);
  check_accounting(stats);
  CHECK(a.worker->stats().fragments_sent + b.worker->stats().fragments_sent == stats.fragments_received);
}

TEST_CASE("a worker joining late gets the current weights before it samples", "[rollout][distributed]") {
  zmq::context_t context(1);
  SampleReceiver receiver(context, cartpole_receiver(1, 0));
  for (uint64_t v = 1; v <= 5; ++v) receiver.publish_weights(cartpole_weights(v));
  WorkerThread late(context, receiver.endpoint(), 9);
  std::optional<SampleBatch> first = receiver.pop(5000ms);
  REQUIRE(first);
  CHECK(first->policy_version == 5);
  receiver.stop_workers();
  CHECK(late.exit.get() == WorkerExit::kStopped);
}

TEST_CASE("the receiver clocks each worker's time without a credit as idle", "[rollout][distributed][appo]") {
  zmq::context_t context(1);
  SampleReceiver receiver(context, cartpole_receiver(2, 1));
  receiver.publish_weights(cartpole_weights(1));
  WorkerThread worker(context, receiver.endpoint(), 4);
  CHECK(eventually([&] { return receiver.stats().queued == 2; }));  // both credits used: idle from now
  std::this_thread::sleep_for(1200ms);
  ReceiverStats stats = receiver.stats();
  INFO("ready " << stats.worker_ready_s << " s, starved " << stats.worker_starved_s << " s");
  CHECK(stats.worker_ready_s >= 1.0);
  CHECK(stats.worker_starved_s >= 0.8);
  CHECK(stats.worker_starved_s <= stats.worker_ready_s);
  // Popping returns the credits: the starved clock stops until the credits are used again.
  // (Checks, not requirements: the worker must be told to stop whatever happened.)
  CHECK(receiver.pop(1000ms));
  CHECK(receiver.pop(1000ms));
  receiver.stop_workers();
  CHECK(worker.exit.get() == WorkerExit::kStopped);
}

TEST_CASE("a worker with a weight delay acts with the weights published that many times before", "[rollout][distributed][appo]") {
  zmq::context_t context(1);
  ReceiverOptions options = cartpole_receiver(1, 10);
  options.make_welcome = [](int index) {
    WorkerSetup setup = cartpole_setup(index);
    setup.weight_delay = 2;
    return setup.to_json();
  };
  SampleReceiver receiver(context, options);
  receiver.publish_weights(cartpole_weights(1));
  WorkerThread worker(context, receiver.endpoint(), 4);
  std::optional<SampleBatch> batch = receiver.pop(5000ms);
  REQUIRE(batch);
  CHECK(batch->policy_version == 1);
  // One publication at a time: the receiver sends the current weights once for publications
  // that come faster than it sends them, and the delay counts publications received.
  const auto acting_with = [&](uint64_t version) {
    return eventually([&] {
      std::optional<SampleBatch> next = receiver.pop(200ms);
      return next && next->policy_version == version;
    });
  };
  for (uint64_t v = 2; v <= 4; ++v) {
    std::this_thread::sleep_for(300ms);
    receiver.publish_weights(cartpole_weights(v));
  }
  CHECK(acting_with(2));  // versions 2, 3 and 4 have arrived: the worker acts with 2
  receiver.publish_weights(cartpole_weights(5));
  CHECK(acting_with(3));
  // Checks, not requirements: the worker must be told to stop whatever happened, or its thread
  // would keep this test waiting.
  receiver.stop_workers();
  CHECK(worker.exit.get() == WorkerExit::kStopped);
}

TEST_CASE("fragments older than max_policy_lag are dropped and counted", "[rollout][distributed]") {
  zmq::context_t context(1);
  SampleReceiver receiver(context, cartpole_receiver(2, 0));
  receiver.publish_weights(cartpole_weights(1));
  WorkerThread worker(context, receiver.endpoint(), 4);
  REQUIRE(eventually([&] { return receiver.stats().queued == 2; }));
  receiver.publish_weights(cartpole_weights(2));  // the two queued v1 fragments are now stale
  std::optional<SampleBatch> fresh = receiver.pop(5000ms);
  REQUIRE(fresh);
  CHECK(fresh->policy_version == 2);
  const ReceiverStats stats = receiver.stats();
  CHECK(stats.dropped_stale >= 2);
  check_accounting(stats);
  receiver.stop_workers();
  CHECK(worker.exit.get() == WorkerExit::kStopped);
}

TEST_CASE("bad messages are rejected and counted, a peer that keeps sending them is dropped", "[rollout][distributed]") {
  zmq::context_t context(1);
  ReceiverOptions options = cartpole_receiver(1, 1);
  options.peer_guard.max_consecutive_bad = 3;
  SampleReceiver receiver(context, options);
  receiver.publish_weights(cartpole_weights(1));
  WorkerThread good(context, receiver.endpoint(), 5);

  zmq::socket_t rogue = make_socket(context, zmq::socket_type::dealer);
  rogue.connect(receiver.endpoint());
  for (int i = 0; i < 10; ++i) {
    std::vector<zmq::message_t> junk;
    junk.emplace_back(std::string("not a header"));
    junk.emplace_back(std::string(100, 'x'));
    send_frames(rogue, junk, 1000ms);
  }
  // Three are decoded and rejected; then the peer is dropped and the rest are discarded undecoded.
  REQUIRE(eventually([&] {
    const ReceiverStats s = receiver.stats();
    return s.messages_rejected + s.messages_from_dropped_peers == 10;
  }));
  CHECK(receiver.stats().messages_rejected == 3);
  CHECK(receiver.stats().peers_dropped == 1);
  CHECK_THAT(receiver.stats().reject_counts, Catch::Contains("rejected_total=3"));
  // The good worker is still served.
  REQUIRE(receiver.pop(5000ms));
  receiver.stop_workers();
  CHECK(good.exit.get() == WorkerExit::kStopped);
}

TEST_CASE("a worker exits when the learner stays silent past its timeout", "[rollout][distributed]") {
  zmq::context_t context(1);
  const auto start = std::chrono::steady_clock::now();
  WorkerThread orphan(context, "tcp://127.0.0.1:1", 3, 800ms);  // nothing listens there
  CHECK(orphan.exit.get() == WorkerExit::kLearnerGone);
  CHECK(std::chrono::steady_clock::now() - start < 5s);
}

TEST_CASE("a worker re-joins a learner that restarted on the same endpoint", "[rollout][distributed]") {
  zmq::context_t context(1);
  std::string endpoint;
  auto first = std::make_unique<SampleReceiver>(context, cartpole_receiver(1, 1));
  endpoint = first->endpoint();
  first->publish_weights(cartpole_weights(1));
  WorkerThread worker(context, endpoint, 6);
  REQUIRE(first->pop(5000ms));
  // Simulate a crash: the receiver goes away without its workers hearing a stop.
  first->stop_workers_on_exit(false);
  first.reset();
  std::unique_ptr<SampleReceiver> second;
  ReceiverOptions options = cartpole_receiver(1, 1);
  options.endpoint = endpoint;
  REQUIRE(eventually([&] {
    try {
      second = std::make_unique<SampleReceiver>(context, options);
      return true;
    } catch (const zmq::error_t&) {
      return false;  // the old socket may hold the port for a moment
    }
  }));
  second->publish_weights(cartpole_weights(7));
  std::optional<SampleBatch> batch = second->pop(8000ms);
  REQUIRE(batch);
  CHECK(batch->policy_version == 7);
  CHECK(worker.worker->stats().welcomes >= 2);  // the new learner welcomed it again
  second->stop_workers();
  CHECK(worker.exit.get() == WorkerExit::kStopped);
}

TEST_CASE("a worker ignores a welcome that comes before the learner answered its hello", "[rollout][distributed]") {
  // A welcome that answers a join or heartbeat queued while the link was down arrives after the
  // worker's hello; that hello answers it too, so the worker sends no second one.
  zmq::context_t context(1);
  FakeLearner learner(context);
  WorkerThread worker(context, learner.endpoint, 11);
  const Welcome welcome{cartpole_setup(0).to_json()};
  REQUIRE(learner.receive_until<Join>());
  learner.reply(encode_welcome(welcome, 0, ++learner.sequence));
  REQUIRE(learner.receive_until<Hello>());
  learner.reply(encode_welcome(welcome, 0, ++learner.sequence));  // before the hello's answer
  learner.reply(encode_weights(cartpole_weights(1), 0, ++learner.sequence));
  learner.reply(encode_credit_grant(CreditGrant{1}, 0, ++learner.sequence));
  // The first fragment follows whatever the worker sent on the second welcome.
  REQUIRE(learner.receive_until<SampleBatch>());
  CHECK(learner.hellos == 1);
  learner.reply(encode_stop(0, ++learner.sequence));
  CHECK(worker.exit.get() == WorkerExit::kStopped);
  CHECK(worker.worker->stats().welcomes == 1);
  CHECK(worker.worker->stats().weights_received == 1);
  CHECK(worker.worker->stats().fragments_sent == 1);
}

TEST_CASE("worker processes that die are restarted and re-join", "[rollout][distributed]") {
  zmq::context_t context(1);
  SampleReceiver receiver(context, cartpole_receiver(1, 1));
  receiver.publish_weights(cartpole_weights(1));
  const std::string endpoint = receiver.endpoint();
  WorkerPool pool({2, 3, 2000ms, {}}, [&](int i) {
    return std::vector<std::string>{std::string(RLX_BINARY_DIR) + "/rlx", "worker", "--connect", endpoint,
                                    "--worker-id", std::to_string(100 + i), "--learner-timeout", "10"};
  });
  REQUIRE(eventually([&] { return receiver.stats().workers_joined == 2; }, 15000ms));
  ::kill(pool.pid(0), SIGKILL);
  REQUIRE(eventually([&] { return !pool.poll().empty() || pool.restarts() > 0; }));
  CHECK(pool.restarts() == 1);
  // The restarted process (same --worker-id, a new connection) joins again and streams.
  REQUIRE(eventually([&] { return receiver.stats().workers_joined >= 3; }, 15000ms));
  for (int i = 0; i < 4; ++i) REQUIRE(receiver.pop(5000ms));
  receiver.stop_workers();
  REQUIRE(eventually([&] {
    pool.poll();
    return pool.clean_exits() == 2;  // both stop cleanly and are not restarted
  }, 5000ms));
  CHECK(pool.restarts() == 1);
  CHECK(pool.num_running() == 0);
}

}  // namespace rlx

namespace rlx {

TEST_CASE("with CURVE keys only workers holding an authorized key join", "[rollout][distributed][auth]") {
  zmq::context_t context(1);
  const CurveKeyPair server = generate_curve_keypair(), known = generate_curve_keypair(),
                     stranger = generate_curve_keypair();
  ReceiverOptions options = cartpole_receiver(1, 1);
  options.curve_server = server;
  options.authorized_client_keys = {known.public_key};
  SampleReceiver receiver(context, options);
  receiver.publish_weights(cartpole_weights(1));

  const auto start_worker = [&](uint64_t id, const CurveKeyPair& keys) {
    RolloutWorkerOptions worker_options;
    worker_options.endpoint = receiver.endpoint();
    worker_options.worker_id = id;
    worker_options.heartbeat_interval = 100ms;
    worker_options.rejoin_after = 300ms;
    worker_options.learner_timeout = 1500ms;
    worker_options.curve_client = keys;
    worker_options.curve_server_public_key = server.public_key;
    auto worker = std::make_shared<RolloutWorker>(context, worker_options);
    return std::make_pair(worker, std::async(std::launch::async, [worker] { return worker->run(); }));
  };
  auto [good, good_exit] = start_worker(21, known);
  auto [bad, bad_exit] = start_worker(22, stranger);
  REQUIRE(receiver.pop(5000ms));
  // It says why, rather than waiting out its timeout as if the learner were gone.
  CHECK(bad_exit.get() == WorkerExit::kRefusedByLearner);
  CHECK_THAT(bad->stats().refusal, Catch::Contains("refused this worker's key"));
  CHECK(bad->stats().welcomes == 0);
  CHECK(receiver.stats().workers_joined == 1);
  receiver.stop_workers();
  CHECK(good_exit.get() == WorkerExit::kStopped);
}

TEST_CASE("a worker with keys facing a learner without them says so", "[rollout][distributed][auth]") {
  zmq::context_t context(1);
  SampleReceiver receiver(context, cartpole_receiver(1, 1));
  RolloutWorkerOptions worker_options;
  worker_options.endpoint = receiver.endpoint();
  worker_options.learner_timeout = 5000ms;
  worker_options.curve_client = generate_curve_keypair();
  worker_options.curve_server_public_key = generate_curve_keypair().public_key;
  RolloutWorker worker(context, worker_options);
  CHECK(worker.run() == WorkerExit::kRefusedByLearner);
  CHECK_THAT(worker.stats().refusal, Catch::Contains("give both --auth-keys, or neither"));
}

TEST_CASE("without keys the receiver binds only to loopback unless told otherwise", "[rollout][distributed][auth]") {
  CHECK(is_loopback_endpoint("tcp://127.0.0.1:5555"));
  CHECK(is_loopback_endpoint("tcp://127.3.4.5:5555"));
  CHECK(is_loopback_endpoint("tcp://[::1]:80"));
  CHECK(is_loopback_endpoint("tcp://[::ffff:127.0.0.1]:80"));
  CHECK(is_loopback_endpoint("ipc:///tmp/rlx.sock"));
  CHECK_FALSE(is_loopback_endpoint("tcp://*:5555"));
  CHECK_FALSE(is_loopback_endpoint("tcp://0.0.0.0:5555"));
  CHECK_FALSE(is_loopback_endpoint("tcp://10.1.2.3:5555"));
  // Names are never taken at their word: an interface could be called "127.evil".
  CHECK_FALSE(is_loopback_endpoint("tcp://127.evil:5555"));
  CHECK_FALSE(is_loopback_endpoint("tcp://localhost:5555"));
  zmq::context_t context(1);
  ReceiverOptions options = cartpole_receiver(1, 1);
  options.endpoint = "tcp://0.0.0.0:*";
  CHECK_THROWS_WITH(SampleReceiver(context, options), Catch::Contains("--auth-keys"));
}

}  // namespace rlx
