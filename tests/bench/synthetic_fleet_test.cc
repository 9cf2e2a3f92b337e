// A synthetic worker fleet (bench/synthetic_fleet.h) in this process against a real
// SampleReceiver: it joins, honours credits and says goodbye.
#include <catch2/catch.hpp>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include <zmq.hpp>

#include "bench/synthetic_fleet.h"
#include "transport/messages.h"
#include "transport/sample_receiver.h"

namespace rlx {
namespace {

using namespace std::chrono_literals;

TEST_CASE("a synthetic fleet in this process joins, honours credits and says goodbye", "[bench][transport][scale]") {
  zmq::context_t context(1);
  ReceiverOptions receiver_options;
  receiver_options.env = {"CartPole-v1", 4, 0, 2};
  receiver_options.fragment_length = 4;
  receiver_options.credits_per_worker = 3;
  receiver_options.make_welcome = [](int) { return std::string(R"({"env_id": "CartPole-v1"})"); };
  SampleReceiver receiver(context, receiver_options);
  auto weights = std::make_shared<Weights>();
  weights->policy_version = 7;
  weights->params.assign(16, 0.5f);
  receiver.publish_weights(weights);

  zmq::context_t fleet_context(1);
  SyntheticFleetOptions fleet_options;
  fleet_options.endpoint = receiver.endpoint();
  fleet_options.workers = 5;
  fleet_options.first_worker_id = 100;
  fleet_options.fragment_length = 4;
  fleet_options.num_envs = 2;
  SyntheticWorkerFleet fleet(fleet_context, fleet_options);
  // Runs the fleet in slices until done() or a bound that only a hang reaches.
  const auto run_until = [&fleet](auto done) {
    const auto deadline = std::chrono::steady_clock::now() + 10s;
    while (!done() && std::chrono::steady_clock::now() < deadline) fleet.run(20ms);
    return done();
  };
  // Nobody pops: each worker fills its three credits, then waits.
  REQUIRE(run_until([&] { return receiver.stats().queued == 15; }));
  std::optional<SampleBatch> batch = receiver.pop(1000ms);
  REQUIRE(batch);
  CHECK(batch->policy_version == 7);
  CHECK((batch->worker_id >= 100 && batch->worker_id < 105));
  CHECK(batch->num_steps == 4);
  CHECK(batch->num_envs == 2);
  CHECK(batch->obs_size == 4);
  CHECK_NOTHROW(batch->validate());
  // The popped fragment's credit comes back and is used, and no more than that.
  REQUIRE(run_until([&] { return fleet.stats().fragments_sent == 16 && receiver.stats().fragments_received == 16; }));
  fleet.run(100ms);
  CHECK(fleet.stats().fragments_sent == 16);
  CHECK(receiver.stats().queued == 15);
  CHECK(fleet.stats().weights_received == 5);

  receiver.stop_workers();
  CHECK(fleet.run(5000ms));
  CHECK(fleet.active_workers() == 0);
  CHECK(fleet.stats().stops == 5);
  const auto deadline = std::chrono::steady_clock::now() + 5s;
  while (receiver.stats().workers_left < 5 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(10ms);
  }
  const ReceiverStats stats = receiver.stats();
  CHECK(stats.workers_joined == 5);
  CHECK(stats.workers_left == 5);
  CHECK(stats.fragments_received == fleet.stats().fragments_sent);
  CHECK(stats.fragments_received == stats.fragments_consumed + stats.queued);
}

}  // namespace
}  // namespace rlx
