// Many synthetic workers in forked processes streaming to one receiver over loopback: every
// worker joins, every fragment is accounted for (figures are printed by `rlx bench scale`,
// never asserted).
#include <catch2/catch.hpp>

#include <chrono>
#include <optional>
#include <thread>

#include <zmq.hpp>

#include "transport/encode.h"
#include "transport/sample_receiver.h"
#include "transport/scale_benchmark.h"
#include "transport/synthetic_fleet.h"

namespace rlx {
namespace {

using namespace std::chrono_literals;

TEST_CASE("40 synthetic workers in 2 processes stream to one receiver, every fragment accounted for",
          "[transport][scale]") {
  ScaleOptions options;
  options.workers = 40;
  options.workers_per_process = 20;
  options.seconds = 1.5;
  options.warmup_seconds = 0.2;
  options.weights_interval_seconds = 0.3;  // a few new versions while streaming
  options.join_timeout_seconds = 10;
  options.stop_timeout_seconds = 5;
  const ScaleResult result = run_scale_benchmark(options);
  INFO(format_scale_result(result));
  CHECK(result.processes == 2);
  CHECK(result.workers_joined == 40);
  CHECK(result.workers_left == 40);
  CHECK(result.workers_lost == 0);
  CHECK(result.fragments_sent > 0);
  CHECK(result.fragments_sent == result.fragments_received);
  CHECK(result.fragments_received == result.fragments_consumed + result.dropped_stale + result.dropped_unknown_worker +
                                         result.dropped_at_stop + result.queued);
  CHECK(result.dropped_unknown_worker == 0);
  CHECK(result.messages_rejected == 0);
  CHECK(result.weights_received >= 40);
  CHECK(result.window_fragments > 0);
  CHECK(result.cpu_us_per_fragment > 0);
  CHECK(result.accounted);
}

TEST_CASE("the scale benchmark refuses empty settings", "[transport][scale]") {
  ScaleOptions options;
  options.workers = 0;
  CHECK_THROWS_AS(run_scale_benchmark(options), std::invalid_argument);
  options = {};
  options.seconds = 0;
  CHECK_THROWS_AS(run_scale_benchmark(options), std::invalid_argument);
  options = {};
  options.credits_per_worker = 0;
  CHECK_THROWS_AS(run_scale_benchmark(options), std::invalid_argument);
}

TEST_CASE("a synthetic fleet in this process joins, honours credits and says goodbye", "[transport][scale]") {
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
