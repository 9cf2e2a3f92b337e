// 100 real `rlx worker` processes stepping CartPole into one receiver: every worker joins and
// stops cleanly, no worker sends beyond its credits, every fragment a worker says it sent is
// received and ends consumed, dropped as stale or queued, and the workers' memory is read
// (figures are printed by `rlx bench scale --real-workers`, never asserted).
#include <catch2/catch.hpp>

#include <stdexcept>
#include <string>

#include "bench/real_scale_benchmark.h"

namespace rlx {
namespace {

RealScaleOptions hundred_workers() {
  RealScaleOptions options;
  options.worker_program = std::string(RLX_BINARY_DIR) + "/rlx";
  options.workers = 100;
  options.seconds = 2;
  options.warmup_seconds = 0.5;
  options.weights_interval_seconds = 0.25;  // several versions while streaming: some fragments go stale
  options.join_timeout_seconds = 60;
  options.stop_timeout_seconds = 20;
  return options;
}

TEST_CASE("100 real CartPole workers stream to one receiver within their credits and every fragment is accounted for",
          "[bench][scale][real]") {
  const RealScaleResult result = run_real_scale_benchmark(hundred_workers());
  INFO(format_real_scale_result(result));
  CHECK(result.workers_joined - result.workers_restarted == 100);  // a slow welcome may bring a re-join
  CHECK(result.workers_left + result.workers_restarted >= 100);  // a goodbye during a re-join is not counted
  CHECK(result.workers_lost == 0);
  CHECK(result.clean_exits == 100);
  CHECK(result.workers_reported == 100);
  CHECK(result.refused == 0);  // a fragment without a credit would be refused
  CHECK(result.messages_rejected == 0);
  CHECK(result.fragments_unsent == 0);
  CHECK(result.fragments_sent > 0);
  CHECK(result.fragments_sent == result.fragments_received);
  CHECK(result.fragments_received == result.fragments_consumed + result.dropped_stale + result.dropped_unknown_worker +
                                         result.dropped_at_stop + result.queued);
  CHECK(result.weights_published >= 3);
  CHECK(result.peak_queued_bytes <= result.queued_bytes_bound);
  CHECK(result.accounted);
  // Memory: every worker's read, and PSS (shared pages split among the sharers) below RSS.
  CHECK(result.memory_read == 100);
  CHECK(result.total_pss_kb > 0);
  CHECK(result.total_pss_kb < result.total_rss_kb);
  CHECK(result.window_fragments > 0);
  CHECK(result.window_env_steps > 0);
}

TEST_CASE("the real-worker scale benchmark refuses empty settings", "[bench][scale][real]") {
  RealScaleOptions options = hundred_workers();
  options.worker_program.clear();
  CHECK_THROWS_AS(run_real_scale_benchmark(options), std::invalid_argument);
  options = hundred_workers();
  options.workers = 0;
  CHECK_THROWS_AS(run_real_scale_benchmark(options), std::invalid_argument);
  options = hundred_workers();
  options.credits_per_worker = 0;
  CHECK_THROWS_AS(run_real_scale_benchmark(options), std::invalid_argument);
}

TEST_CASE("the real-worker scale benchmark names the worker that exits early", "[bench][scale][real]") {
  RealScaleOptions options = hundred_workers();
  options.workers = 2;
  options.worker_program = "/bin/false";  // exits at once with status 1
  try {
    run_real_scale_benchmark(options);
    FAIL("no error");
  } catch (const std::runtime_error& error) {
    CHECK(std::string(error.what()).find("exited early") != std::string::npos);
  }
}

}  // namespace
}  // namespace rlx
