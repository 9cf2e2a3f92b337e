// Many synthetic workers in forked processes streaming to one receiver over loopback: every
// worker joins, every fragment is accounted for (figures are printed by `rlx bench scale`,
// never asserted).
#include <catch2/catch.hpp>

#include <stdexcept>

#include "bench/scale_benchmark.h"

namespace rlx {
namespace {

TEST_CASE("40 synthetic workers in 2 processes stream to one receiver, every fragment accounted for",
          "[bench][transport][scale]") {
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

TEST_CASE("the scale benchmark refuses empty settings", "[bench][transport][scale]") {
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

}  // namespace
}  // namespace rlx
